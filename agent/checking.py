"""Fingerprint messages under the configured schemes and ask the peers about them.

The async functions use ``agent.client.AgentClient`` (bulk work, bounded concurrency);
``check_blocking`` does the same for one message over ``agent.blocking.BlockingClient``
(the per-message processes: filter, pyzor).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from agent.defences import (
    NO_EXCLUSIONS,
    DefenceSettings,
    Exclusions,
    bodies,
    load_exclusions,
    takes_exclusion,
)
from agent.verdicts import (
    UNKNOWN,
    Verdict,
    check_args,
    combine,
    make_policy,
    parse_matches,
    scheme_verdict,
    unfingerprintable,
)
from agent.wire import AgentError

DEFAULT_DEFENCES = DefenceSettings()


class SchemeRuntime(NamedTuple):
    """A configured scheme, built: the scheme object, THRES and TTL."""

    scheme: Any
    thres: int
    ttl: int | None


def build_schemes(config: Any) -> list[SchemeRuntime]:
    """Build the configured schemes of an ``AgentConfig``."""
    runtimes = []
    for setting in config.schemes:
        scheme = setting.build()
        runtimes.append(SchemeRuntime(scheme, setting.effective_thres(scheme), setting.ttl))
    return runtimes


def vectors_of(
    bodies: Sequence[Any], schemes: Sequence[SchemeRuntime], exclude: Any, length: int
) -> list[list[Any]]:
    """Return, per canonical body, its feature vector under each scheme (batched per
    scheme); ``exclude`` leaves windows out under the ATA schemes of window ``length``."""
    per_scheme = []
    for rt in schemes:
        if exclude is not None and takes_exclusion(rt.scheme) and rt.scheme.length == length:
            per_scheme.append(rt.scheme.vectors(bodies, exclude))
        else:
            per_scheme.append(rt.scheme.vectors(bodies))
    return [list(vs) for vs in zip(*per_scheme, strict=True)] if per_scheme else []


def fingerprint(
    raws: Sequence[bytes],
    schemes: Sequence[SchemeRuntime],
    defences: DefenceSettings = DEFAULT_DEFENCES,
    exclusions: Exclusions = NO_EXCLUSIONS,
    *,
    vote: bool = False,
) -> list[list[Any]]:
    """Return, per message, its feature vector under each scheme, from its defended body
    and without the sketch's windows (the vote predicate with ``vote``)."""
    exclude = exclusions.vote if vote else exclusions.check
    return vectors_of(bodies(raws, defences), schemes, exclude, exclusions.length)


def requests(
    schemes: Sequence[SchemeRuntime], vectors: Sequence[Any]
) -> list[tuple[int, dict[str, Any]]]:
    """The ``check`` requests a message needs: (scheme index, args) for each scheme that
    gave it features."""
    return [
        (i, check_args(vector, rt.thres, rt.ttl))
        for i, (rt, vector) in enumerate(zip(schemes, vectors, strict=True))
        if vector.features
    ]


def verdict_of(
    source: str,
    schemes: Sequence[SchemeRuntime],
    vectors: Sequence[Any],
    pending: Sequence[tuple[int, dict[str, Any]]],
    results: Sequence[Any],
    policy: Any,
) -> Verdict:
    """The message's verdict from the replies to its ``requests``."""
    replies = {i: result for (i, _), result in zip(pending, results, strict=True)}
    outcomes = []
    for i, (runtime, vector) in enumerate(zip(schemes, vectors, strict=True)):
        if i not in replies:
            outcomes.append(unfingerprintable(source, vector))
        else:
            matches = parse_matches(replies[i])
            outcomes.append(scheme_verdict(source, vector, runtime.thres, matches, policy))
    return combine(outcomes)


class Checker:
    """Checks fingerprinted messages through an ``AgentClient``."""

    def __init__(
        self,
        client: Any,
        schemes: Sequence[SchemeRuntime],
        policy: Any,
        defences: DefenceSettings = DEFAULT_DEFENCES,
        exclusions: Exclusions = NO_EXCLUSIONS,
    ) -> None:
        self.client = client
        self.schemes = list(schemes)
        self.policy = policy
        self.defences = defences
        self.exclusions = exclusions

    @classmethod
    def from_config(cls, client: Any, config: Any) -> Checker:
        """A checker with the config's schemes, policy, defences and saved sketch."""
        policy = make_policy(config.min_votes, config.ratio)
        exclusions = load_exclusions(config, pure=False)
        return cls(client, build_schemes(config), policy, config.defences, exclusions)

    async def check_vectors(self, source: str, vectors: Sequence[Any]) -> Verdict:
        """The verdict of one message from its vectors (AgentError when no peer answers)."""
        pending = requests(self.schemes, vectors)
        results = [await self.client.call("check", args) for _, args in pending]
        return verdict_of(source, self.schemes, vectors, pending, results, self.policy)

    async def check_batch(
        self,
        sources: Sequence[str],
        raws: Sequence[bytes],
        on_done: Any = None,
        chunk: int = 128,
    ) -> list[Verdict]:
        """Check many messages concurrently (bounded by the client's limiter); a message
        whose check failed gets an "unknown" verdict with the reason.

        Messages are fingerprinted chunk by chunk in a worker thread while the checks of
        the chunks before are in flight, so the agent's CPU work overlaps the peer's."""
        import trio

        results: list[Verdict | None] = [None] * len(raws)

        async def one(i: int, vectors: list[Any]) -> None:
            try:
                results[i] = await self.check_vectors(sources[i], vectors)
            except AgentError as exc:
                results[i] = Verdict(sources[i], UNKNOWN, reason=f"{exc.code}: {exc.message}")
            if on_done is not None:
                on_done()

        async with trio.open_nursery() as nursery:
            for start in range(0, len(raws), chunk):
                part = raws[start : start + chunk]
                vectors = await trio.to_thread.run_sync(
                    fingerprint, part, self.schemes, self.defences, self.exclusions
                )
                for offset, per_scheme in enumerate(vectors):
                    nursery.start_soon(one, start + offset, per_scheme)
        return [r for r in results if r is not None]


def check_blocking(
    client: Any, config: Any, source: str, raw: bytes, exclusions: Exclusions | None = None
) -> Verdict:
    """Check one message over a ``BlockingClient`` (raises AgentError on failure), with
    the config's defences and ``exclusions`` (default: the saved sketch, read without
    numpy when numpy is not loaded)."""
    schemes = build_schemes(config)
    if exclusions is None:
        exclusions = load_exclusions(config)
    vectors = fingerprint([raw], schemes, config.defences, exclusions)[0]
    pending = requests(schemes, vectors)
    results = [client.call("check", args) for _, args in pending]
    policy = make_policy(config.min_votes, config.ratio)
    return verdict_of(source, schemes, vectors, pending, results, policy)

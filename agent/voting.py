"""Signing and publishing votes on messages (``agent mark`` / ``unmark``, IMAP, demo).

The vectors voted on follow the agent-side defences (``agent.defences``): a spam vote
leaves out every window the user's sketch has seen even once in kept mail; a ham vote
(rescuing a wrongly flagged message) is cast on ``ham_vote_vector``: the features of the
spam GUIDs the message matched that occur among its own windows (the boilerplate they
share), then its own features, so the shared boilerplate stops counting for every GUID
holding it (``p2pspam.defences.pipeline``, measured by ``p2pspam sim replay``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.checking import DEFAULT_DEFENCES, SchemeRuntime, vectors_of
from agent.defences import NO_EXCLUSIONS, DefenceSettings, Exclusions, bodies, takes_exclusion
from agent.verdicts import SPAM, check_args, decide_match, make_policy, parse_matches
from agent.wire import AgentError

# verdict -> agent API op (a withdrawal unpublishes when no live vote remains)
OPS = {"spam": "publish", "ham": "publish", "withdraw": "unpublish"}


@dataclass
class VoteSummary:
    """What happened to the votes of a run: one count per (message, scheme)."""

    published: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (source, why)
    refused: list[tuple[str, str, str]] = field(default_factory=list)  # (source, reason, msg)
    guids: list[bytes] = field(default_factory=list)
    rescued: int = 0  # ham votes cast on boilerplate shared with matched spam

    def refused_reasons(self) -> Counter[str]:
        """How many votes were refused for each reason."""
        return Counter(reason for _, reason, _ in self.refused)


def _vote_bytes(user: Any, vector: Any, verdict: str, now_ms: int) -> bytes:
    from p2pspam.auth.votes import sign_vote

    return sign_vote(user, vector, verdict, now_ms).encode()


def vote_vectors(
    raws: Sequence[bytes],
    schemes: Sequence[SchemeRuntime],
    verdict: str,
    defences: DefenceSettings = DEFAULT_DEFENCES,
    exclusions: Exclusions = NO_EXCLUSIONS,
) -> tuple[list[Any], list[list[Any]]]:
    """The canonical bodies of the messages and, per message, the vector to vote on
    under each scheme (before any ham-vote widening): spam votes and withdrawals leave
    out the windows of the vote predicate, ham votes start from the checked vector."""
    found = bodies(raws, defences)
    exclude = exclusions.check if verdict == "ham" else exclusions.vote
    return found, vectors_of(found, schemes, exclude, exclusions.length)


def rescue_vector(vector: Any, text: str, scheme: Any, reply: Any, policy: Any) -> Any:
    """The vector of a ham vote on a message whose ``check`` reply was ``reply``:
    ``ham_vote_vector`` over the matches the policy decides spam and whose features the
    peer sent, else the message's own vector."""
    matches = [
        m
        for m in parse_matches(reply)
        if m.features and not m.selftest and decide_match(m, policy) == SPAM
    ]
    if not matches or not takes_exclusion(scheme):
        return vector
    from p2pspam.defences.pipeline import ham_vote_vector

    return ham_vote_vector(vector, text, matches, scheme.length)


async def publish_votes(
    client: Any,
    user: Any,
    schemes: Sequence[SchemeRuntime],
    sources: Sequence[str],
    raws: Sequence[bytes],
    verdict: str,
    now_ms: int,
    on_done: Callable[[], None] | None = None,
    defences: DefenceSettings = DEFAULT_DEFENCES,
    exclusions: Exclusions = NO_EXCLUSIONS,
    policy: Any = None,
) -> VoteSummary:
    """Sign ``verdict`` on every message under every scheme and publish the votes
    concurrently; a message without features is skipped, a refused vote is recorded with
    the peer's reason. A ham vote first checks the message and widens its vector with
    the boilerplate it shares with the spam it matched (``rescue_vector``)."""
    import trio

    op = OPS[verdict]
    policy = policy or make_policy(1, 0.5)
    summary = VoteSummary()
    found, vectors = vote_vectors(raws, schemes, verdict, defences, exclusions)

    async def one(source: str, text: str, runtime: SchemeRuntime, vector: Any) -> None:
        try:
            if verdict == "ham":
                reply = await client.call("check", check_args(vector, runtime.thres, runtime.ttl))
                widened = rescue_vector(vector, text, runtime.scheme, reply, policy)
                summary.rescued += widened.features != vector.features
                vector = widened
            result = await client.call(op, {"vote": _vote_bytes(user, vector, verdict, now_ms)})
        except AgentError as exc:
            summary.refused.append((source, exc.reason or exc.code, exc.message))
            return
        summary.published += 1
        guid = result.get("guid") if isinstance(result, dict) else None
        summary.guids.append(guid if isinstance(guid, bytes) else vector.guid)

    async with trio.open_nursery() as nursery:
        for source, body, per_scheme in zip(sources, found, vectors, strict=True):
            for runtime, vector in zip(schemes, per_scheme, strict=True):
                if not vector.features:
                    summary.skipped.append((source, vector.note or "no features"))
                    continue
                nursery.start_soon(one, source, body.text, runtime, vector)
            if on_done is not None:
                on_done()
    return summary

"""Signing and publishing votes on messages (``agent mark`` / ``unmark``, IMAP, demo)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.checking import SchemeRuntime, fingerprint
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

    def refused_reasons(self) -> Counter[str]:
        """How many votes were refused for each reason."""
        return Counter(reason for _, reason, _ in self.refused)


def _vote_bytes(user: Any, vector: Any, verdict: str, now_ms: int) -> bytes:
    from p2pspam.auth.votes import sign_vote

    return sign_vote(user, vector, verdict, now_ms).encode()


async def publish_votes(
    client: Any,
    user: Any,
    schemes: Sequence[SchemeRuntime],
    sources: Sequence[str],
    raws: Sequence[bytes],
    verdict: str,
    now_ms: int,
    on_done: Callable[[], None] | None = None,
) -> VoteSummary:
    """Sign ``verdict`` on every message under every scheme and publish the votes
    concurrently; a message without features is skipped, a refused vote is recorded with
    the peer's reason."""
    import trio

    op = OPS[verdict]
    summary = VoteSummary()
    vectors = fingerprint(raws, schemes)

    async def one(source: str, vector: Any) -> None:
        try:
            result = await client.call(op, {"vote": _vote_bytes(user, vector, verdict, now_ms)})
        except AgentError as exc:
            summary.refused.append((source, exc.reason or exc.code, exc.message))
            return
        summary.published += 1
        guid = result.get("guid") if isinstance(result, dict) else None
        summary.guids.append(guid if isinstance(guid, bytes) else vector.guid)

    async with trio.open_nursery() as nursery:
        for source, per_scheme in zip(sources, vectors, strict=True):
            for vector in per_scheme:
                if not vector.features:
                    summary.skipped.append((source, vector.note or "no features"))
                    continue
                nursery.start_soon(one, source, vector)
            if on_done is not None:
                on_done()
    return summary

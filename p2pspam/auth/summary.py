"""The counts of a tally (no crypto imports: the agent's one-message path reads them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TallySummary:
    """Counts of live votes on one message: ``spam`` and ``ham`` voters, ``voters`` (users
    whose live vote is spam or ham; withdrawals count for neither) and the time of the
    latest live vote (None without votes)."""

    spam: int = 0
    ham: int = 0
    voters: int = 0
    last_vote_ms: int | None = None

    def as_dict(self) -> dict[str, int | None]:
        """Return the tally map of the agent API."""
        return {
            "spam": self.spam,
            "ham": self.ham,
            "voters": self.voters,
            "last_vote_ms": self.last_vote_ms,
        }

"""The user's decision rule on a tally (SpamWatch paper, section 5.2).

``spam`` when ``spam >= min_votes`` and ``spam / (spam + ham) >= ratio``; otherwise ``ham``
when at least one ham vote exists (ham votes protect mailing lists against malicious
marking); otherwise ``unknown`` (no votes, or fewer spam votes than ``min_votes``).
Defaults: ``min_votes = 1``, ``ratio = 0.5`` (one spam vote suffices unless as many users
said it is not spam).
"""

from __future__ import annotations

from dataclasses import dataclass

from p2pspam.auth.summary import TallySummary
from p2pspam.errors import ParameterError

DEFAULT_MIN_VOTES = 1
DEFAULT_RATIO = 0.5


@dataclass(frozen=True, slots=True)
class Policy:
    """A decision rule: at least ``min_votes`` spam votes and a spam share of at least
    ``ratio``."""

    min_votes: int = DEFAULT_MIN_VOTES
    ratio: float = DEFAULT_RATIO

    def __post_init__(self) -> None:
        if type(self.min_votes) is not int or self.min_votes < 1:
            raise ParameterError(f"min_votes must be an integer >= 1, got {self.min_votes!r}")
        if not isinstance(self.ratio, int | float) or not 0.0 <= self.ratio <= 1.0:
            raise ParameterError(f"ratio must be between 0 and 1, got {self.ratio!r}")

    def decide(self, summary: TallySummary) -> str:
        """Return "spam", "ham" or "unknown" for a tally."""
        return self.decide_counts(summary.spam, summary.ham)

    def decide_counts(self, spam: int, ham: int) -> str:
        """Return "spam", "ham" or "unknown" for ``spam`` and ``ham`` live votes."""
        if spam >= self.min_votes and spam >= self.ratio * (spam + ham):
            return "spam"
        if ham > 0:
            return "ham"
        return "unknown"

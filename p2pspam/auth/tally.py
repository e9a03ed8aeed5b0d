"""Vote tallies per message: one live vote per user, the latest one.

A user's live vote on a GUID is the one with the greatest ``(timestamp_ms, encoded
bytes)``: a user changes their mind by voting again, a tie on the timestamp is broken the
same way everywhere, and an old vote replayed after a newer one changes nothing. This is
the same last-writer-wins register the ADOLR object record keeps, so merging sets of votes
is commutative, associative and idempotent.

Only ``verify.VerifiedVote`` objects are counted: ``summarize`` and ``LiveVotes`` raise
``TypeError`` on anything else, so an unverified vote cannot reach a tally.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from p2pspam.auth.summary import TallySummary
from p2pspam.auth.verify import VerifiedVote, VoteRejected, VoteVerifier


def _require_verified(vote: object) -> VerifiedVote:
    if not isinstance(vote, VerifiedVote):
        raise TypeError(
            f"tallies count verified votes only (got {type(vote).__name__}); "
            "pass the vote through VoteVerifier.verify first"
        )
    return vote


def supersedes(new: VerifiedVote, old: VerifiedVote) -> bool:
    """Return True when ``new`` replaces ``old`` as its user's live vote."""
    return (new.timestamp_ms, new.encoded) > (old.timestamp_ms, old.encoded)


class LiveVotes:
    """The live vote of each user on one GUID (a last-writer-wins map)."""

    def __init__(self, votes: Iterable[VerifiedVote] = ()) -> None:
        self.guid: bytes | None = None
        self._live: dict[str, VerifiedVote] = {}
        for vote in votes:
            self.add(vote)

    def add(self, vote: VerifiedVote) -> bool:
        """Take ``vote`` into account; return True when it became its user's live vote."""
        vote = _require_verified(vote)
        if self.guid is None:
            self.guid = vote.guid
        elif vote.guid != self.guid:
            raise ValueError(f"vote on {vote.guid.hex()} added to the tally of {self.guid.hex()}")
        current = self._live.get(vote.user_id)
        if current is not None and not supersedes(vote, current):
            return False
        self._live[vote.user_id] = vote
        return True

    def merge(self, other: LiveVotes) -> LiveVotes:
        """Return the union of two maps (commutative, associative, idempotent)."""
        merged = LiveVotes(self._live.values())
        for vote in other._live.values():
            merged.add(vote)
        return merged

    def live(self) -> dict[str, VerifiedVote]:
        """Return a copy of the live vote of each user."""
        return dict(self._live)

    def summary(self) -> TallySummary:
        """Return the counts of the live votes."""
        spam = sum(1 for v in self._live.values() if v.verdict == "spam")
        ham = sum(1 for v in self._live.values() if v.verdict == "ham")
        last = max((v.timestamp_ms for v in self._live.values()), default=None)
        return TallySummary(spam=spam, ham=ham, voters=spam + ham, last_vote_ms=last)

    def users(self, verdict: str) -> frozenset[str]:
        """Return the users whose live vote is ``verdict``."""
        return frozenset(u for u, v in self._live.items() if v.verdict == verdict)

    def __len__(self) -> int:
        return len(self._live)


def summarize(votes: Iterable[VerifiedVote]) -> TallySummary:
    """Return the tally of verified votes on one message, whatever their order and
    duplication (raise TypeError on an unverified vote, ValueError on mixed GUIDs)."""
    return LiveVotes(votes).summary()


def live_record_votes(
    votes: Mapping[str, tuple[int, bytes]], verifier: VoteVerifier, now_ms: int
) -> tuple[LiveVotes, dict[str, str]]:
    """Return the live votes of an ADOLR object record's register (user id ->
    (timestamp, encoded vote)) re-verified as replicas against the current revocation
    list, and the rejection reason of each user whose stored vote no longer counts."""
    live = LiveVotes()
    dropped: dict[str, str] = {}
    for user_id, (timestamp_ms, encoded) in votes.items():
        try:
            vote = verifier.verify(encoded, now_ms, replica=True)
        except VoteRejected as exc:
            dropped[user_id] = exc.reason
            continue
        if vote.user_id != user_id or vote.timestamp_ms != timestamp_ms:
            dropped[user_id] = "malformed"  # the register's key does not match the vote
            continue
        if live.guid is not None and vote.guid != live.guid:
            dropped[user_id] = "malformed"
            continue
        live.add(vote)
    return live, dropped


def tally_record(
    votes: Mapping[str, tuple[int, bytes]], verifier: VoteVerifier, now_ms: int
) -> tuple[TallySummary, dict[str, str]]:
    """Return the tally of an ADOLR object record's register re-verified as replicas
    (see ``live_record_votes``), and the rejection reason of each dropped user."""
    live, dropped = live_record_votes(votes, verifier, now_ms)
    return live.summary(), dropped


__all__ = [
    "LiveVotes",
    "TallySummary",
    "live_record_votes",
    "summarize",
    "supersedes",
    "tally_record",
]

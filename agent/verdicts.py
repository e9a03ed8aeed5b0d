"""From check replies to verdicts: which match counts and what its votes say (pure).

A message is checked under every configured scheme. Under one scheme, a match whose
votes the policy (the rule of ``p2pspam.auth.policy.Policy``) decides "spam" — or the built-in
self-test object — makes the message spam; otherwise a match decided "ham" makes it
ham; a match with no live vote, or no match at all, leaves it clean. Across schemes the
strongest outcome wins (spam > ham > clean); a message no scheme could fingerprint
(no text body, shorter than the window) is "unknown" with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from agent.wire import AgentError
from p2pspam.auth.policy import Policy

SPAM, HAM, CLEAN, UNKNOWN = "spam", "ham", "clean", "unknown"
_RANK = {SPAM: 3, HAM: 2, CLEAN: 1, UNKNOWN: 0}
MAX_MATCH_FEATURES = 256  # the most features a vector has (ata_params.MAX_COUNT)


# Named tuples rather than dataclasses on this path: ``agent filter`` imports it in every
# delivery, and a named tuple class is ten times cheaper to create.
class Match(NamedTuple):
    """One matching object from a check reply, validated."""

    guid: bytes
    overlap: int
    spam: int
    ham: int
    voters: int
    last_vote_ms: int | None
    selftest: bool
    discounted: int = 0
    features: tuple[int, ...] = ()  # the matched GUID's own vector, when the peer sends it


class Verdict(NamedTuple):
    """The outcome for one message."""

    source: str
    status: str  # spam | ham | clean | unknown
    reason: str | None = None
    scheme: str | None = None
    namespace: str | None = None
    features: int = 0
    thres: int = 0
    match: Match | None = None
    guid: bytes | None = None  # the message's own GUID (first scheme with a vector)

    def to_json(self) -> dict[str, Any]:
        """The JSON object ``agent check --json`` prints for this message."""
        m = self.match
        return {
            "source": self.source,
            "verdict": self.status,
            "reason": self.reason,
            "scheme": self.scheme,
            "namespace": self.namespace,
            "guid": self.guid.hex() if self.guid else None,
            "thres": self.thres,
            "features": self.features,
            "match": None
            if m is None
            else {
                "guid": m.guid.hex(),
                "overlap": m.overlap,
                "spam": m.spam,
                "ham": m.ham,
                "voters": m.voters,
                "selftest": m.selftest,
            },
        }


def check_args(vector: Any, thres: int, ttl: int | None) -> dict[str, Any]:
    """The ``check`` request arguments for a feature vector (interface doc)."""
    return {
        "namespace": vector.namespace,
        "features": list(vector.features),
        "thres": min(thres, len(vector.features)),
        "ttl": ttl,
    }


def _int(value: Any, what: str, lo: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise AgentError("bad_reply", f"check reply: {what} is not an integer >= {lo}")
    return value


def parse_matches(result: Any) -> list[Match]:
    """Validate a ``check`` result and return its matches (AgentError if malformed)."""
    if not isinstance(result, dict) or not isinstance(result.get("matches"), list):
        raise AgentError("bad_reply", "check reply lacks a 'matches' list")
    matches: list[Match] = []
    for raw in result["matches"]:
        if not isinstance(raw, dict):
            raise AgentError("bad_reply", "check reply: a match is not a map")
        guid = raw.get("guid")
        tally = raw.get("tally")
        if not isinstance(guid, bytes) or len(guid) != 20 or not isinstance(tally, dict):
            raise AgentError("bad_reply", "check reply: a match lacks a 20-byte guid or a tally")
        last = tally.get("last_vote_ms")
        discounted = raw.get("discounted", [])
        features = raw.get("features", [])
        if not isinstance(features, list | tuple) or not all(
            type(f) is int and 0 <= f < 1 << 64 for f in features
        ):
            raise AgentError("bad_reply", "check reply: match features are not 64-bit integers")
        matches.append(
            Match(
                guid=guid,
                overlap=_int(raw.get("overlap"), "overlap"),
                spam=_int(tally.get("spam", 0), "tally.spam"),
                ham=_int(tally.get("ham", 0), "tally.ham"),
                voters=_int(tally.get("voters", 0), "tally.voters"),
                last_vote_ms=None if last is None else _int(last, "tally.last_vote_ms"),
                selftest=raw.get("selftest") is True,
                discounted=len(discounted) if isinstance(discounted, list) else 0,
                features=tuple(features[:MAX_MATCH_FEATURES]),
            )
        )
    return matches


def make_policy(min_votes: int, ratio: float) -> Policy:
    """The vote-decision policy for the configured ``min_votes`` and ``ratio``."""
    return Policy(min_votes=min_votes, ratio=ratio)


def decide_match(match: Match, policy: Policy) -> str:
    """spam / ham / clean for one match under ``policy``."""
    if match.selftest:
        return SPAM
    decision = policy.decide_counts(match.spam, match.ham)
    return {"spam": SPAM, "ham": HAM}.get(decision, CLEAN)


def scheme_verdict(
    source: str, vector: Any, thres: int, matches: Sequence[Match], policy: Any
) -> Verdict:
    """The verdict of one message under one scheme, from its (validated) matches."""
    best: tuple[tuple[int, int], str, Match | None] = ((_RANK[CLEAN], -1), CLEAN, None)
    for match in matches:
        status = decide_match(match, policy)
        key = (_RANK[status], match.overlap)
        if key > best[0]:
            best = (key, status, match)
    return Verdict(
        source=source,
        status=best[1],
        scheme=vector.scheme,
        namespace=vector.namespace,
        features=len(vector.features),
        thres=min(thres, len(vector.features)),
        match=best[2],
        guid=vector.guid,
    )


def unfingerprintable(source: str, vector: Any) -> Verdict:
    """The verdict of a message a scheme could not fingerprint."""
    return Verdict(
        source=source,
        status=UNKNOWN,
        reason=vector.note or "no features",
        scheme=vector.scheme,
        namespace=vector.namespace,
        guid=vector.guid,
    )


def combine(verdicts: Sequence[Verdict]) -> Verdict:
    """The message's verdict over all schemes: the strongest outcome, then the closest
    match."""
    return max(
        verdicts,
        key=lambda v: (_RANK[v.status], v.match.overlap if v.match else -1),
    )

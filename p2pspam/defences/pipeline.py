"""The decision pipeline: what the agent and the peer do to a message, in one process.

Agent side (per user): ``defended_body`` (normalisation defences) -> ATA with the user's
``WindowSketch`` as exclusion predicate -> the feature vector. Peer side: ``route`` with
THRES and the boilerplate discounts -> the tally of each match's verified votes -> the
``Policy``; the message is spam when any match is decided spam (the agent's rule,
``agent/verdicts.py``). Votes are real: signed with each user's Ed25519 key, verified by a
``VoteVerifier`` and stored with ``ApproxIndex.publish_approx``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pspam.adolr.index import ApproxIndex
from p2pspam.adolr.query import Match
from p2pspam.adolr.records import MAX_CAP
from p2pspam.auth.credentials import UserKey, new_user_key, public_bytes
from p2pspam.auth.policy import Policy
from p2pspam.auth.tally import LiveVotes, TallySummary
from p2pspam.auth.verify import VoteVerifier
from p2pspam.auth.votes import sign_vote
from p2pspam.defences import (
    DEFAULT_HAM_GUIDS,
    DEFAULT_MAX_GUIDS,
    DEFAULT_RECORD_TTL_MS,
    DEFAULT_SKETCH,
    DEFAULT_SKETCH_THRESHOLD,
    DEFAULT_STRIP_FOOTERS,
    DEFAULT_STRIP_QUOTES,
    DEFAULT_STRIP_SIGNATURES,
    DEFAULT_THRES,
    DEFAULT_VOTE_SKETCH_THRESHOLD,
)
from p2pspam.defences.body import defended_body
from p2pspam.defences.network import route
from p2pspam.defences.sketch import WindowSketch
from p2pspam.defences.strip import StripOptions
from p2pspam.fingerprint.ata import AtaScheme, bit_reverse64, code_points, window_checksums
from p2pspam.fingerprint.normalize import CanonicalBody
from p2pspam.fingerprint.vector import FeatureVector

CREDENTIAL_LIFETIME_MS = 1 << 45  # about 1,100 years: the replay does not test expiry


@dataclass(frozen=True, slots=True)
class AgentDefences:
    """The agent-side defences: stripping rules and the window sketch."""

    strip: StripOptions = field(
        default_factory=lambda: StripOptions(
            DEFAULT_STRIP_QUOTES, DEFAULT_STRIP_SIGNATURES, DEFAULT_STRIP_FOOTERS
        )
    )
    sketch: bool = DEFAULT_SKETCH
    sketch_threshold: int = DEFAULT_SKETCH_THRESHOLD
    vote_sketch_threshold: int = DEFAULT_VOTE_SKETCH_THRESHOLD


@dataclass(frozen=True, slots=True)
class NetworkDefences:
    """The network-side defences: None disables a rule."""

    max_guids: int | None = DEFAULT_MAX_GUIDS
    ham_guids: int | None = DEFAULT_HAM_GUIDS


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything that decides a verdict."""

    thres: int = DEFAULT_THRES
    agent: AgentDefences = field(default_factory=AgentDefences)
    network: NetworkDefences = field(default_factory=NetworkDefences)
    min_votes: int = 1
    ratio: float = 0.5

    def with_thres(self, thres: int) -> Settings:
        """Return the same settings with another THRES."""
        return replace(self, thres=thres)


class Fingerprinter:
    """The agent side for many users: one window sketch per user."""

    def __init__(self, defences: AgentDefences, scheme: AtaScheme | None = None) -> None:
        self.defences = defences
        self.scheme = scheme or AtaScheme()
        self.sketches: dict[str, WindowSketch] = {}

    def body(self, raw: bytes) -> CanonicalBody:
        """Return the canonical body after the normalisation defences."""
        return defended_body(raw, self.defences.strip)

    def vector(self, body: CanonicalBody, user: str, *, vote: bool = False) -> FeatureVector:
        """Return ``user``'s feature vector of ``body`` with the windows of their sketch
        excluded: those seen ``sketch_threshold`` times for a check, and (``vote``) those
        seen ``vote_sketch_threshold`` times for a vote."""
        sketch = self.sketches.get(user) if self.defences.sketch else None
        if sketch is None:
            return self.scheme.vector(body)
        if vote:
            return self.scheme.vector(body, sketch.excluder(self.defences.vote_sketch_threshold))
        return self.scheme.vector(body, sketch.exclude)

    def learn(self, body: CanonicalBody, user: str) -> None:
        """Count ``body``'s windows as seen in ``user``'s legitimate mail."""
        if not self.defences.sketch or not body.text:
            return
        sketch = self.sketches.get(user)
        if sketch is None:
            sketch = self.sketches[user] = WindowSketch(
                self.defences.sketch_threshold, length=self.scheme.length
            )
        sketch.learn(body.text)


@dataclass(frozen=True, slots=True)
class Decision:
    """The verdict on one message and the matches behind it."""

    status: str  # spam | ham | clean | unknown
    matches: tuple[tuple[Match, TallySummary, str], ...] = ()

    @property
    def spam_matches(self) -> list[Match]:
        """The matches decided spam."""
        return [m for m, _, d in self.matches if d == "spam"]


class Network:
    """The peer side, one in-memory node: index, verified votes, tallies, policy."""

    def __init__(self, settings: Settings, record_ttl_ms: int = DEFAULT_RECORD_TTL_MS) -> None:
        net = settings.network
        cap = MAX_CAP if net.max_guids is None else max(net.max_guids, DEFAULT_MAX_GUIDS)
        self.index = ApproxIndex(cap=cap, max_guids=net.max_guids or MAX_CAP)
        self.settings = settings
        self.policy = Policy(settings.min_votes, settings.ratio)
        self.ttl_ms = record_ttl_ms
        self.tallies: dict[bytes, LiveVotes] = {}
        self.summaries: dict[bytes, TallySummary] = {}
        self.ham_guids: set[bytes] = set()
        self._authority = Ed25519PrivateKey.generate()
        self.verifier = VoteVerifier(public_bytes(self._authority))
        self._users: dict[str, UserKey] = {}
        self.votes = 0

    def user_key(self, user: str) -> UserKey:
        """Return (creating it on first use) the credentialed key of ``user``."""
        key = self._users.get(user)
        if key is None:
            user_id = f"u{len(self._users)}"
            key = new_user_key(self._authority, user_id, 0, CREDENTIAL_LIFETIME_MS)
            self._users[user] = key
        return key

    def check(self, vector: FeatureVector, now_ms: int) -> Decision:
        """Return the verdict on ``vector`` (``unknown`` when it has no features)."""
        if not vector.features:
            return Decision("unknown")
        thres = min(self.settings.thres, len(set(vector.features)))
        matches = route(
            self.index,
            vector.features,
            vector.namespace,
            thres,
            now_ms,
            self.ham_guids,
            self.settings.network.ham_guids,
            self.voters,
            self.policy,
        )
        found = []
        status = "clean"
        for match in matches:
            summary = self.summaries.get(match.guid, TallySummary())
            decision = self.policy.decide(summary)
            found.append((match, summary, decision))
            if decision == "spam":
                status = "spam"
            elif decision == "ham" and status == "clean":
                status = "ham"
        return Decision(status, tuple(found))

    def voters(self, guid: bytes) -> tuple[frozenset[str], frozenset[str]]:
        """Return the users whose live vote on ``guid`` is spam, and those whose is ham."""
        live = self.tallies.get(guid)
        if live is None:
            return frozenset(), frozenset()
        return live.users("spam"), live.users("ham")

    def vote(self, user: str, vector: FeatureVector, verdict: str, now_ms: int) -> bool:
        """Sign, verify and store ``user``'s vote on ``vector``; return False when the
        message has no features to vote on."""
        if not vector.features:
            return False
        encoded = sign_vote(self.user_key(user), vector, verdict, now_ms).encode()
        vote = self.verifier.verify(encoded, now_ms)
        self.index.publish_approx(
            vector, vector.guid, now_ms, self.ttl_ms, {vote.user_id: (now_ms, encoded)}
        )
        live = self.tallies.setdefault(vector.guid, LiveVotes())
        live.add(vote)
        summary = live.summary()
        self.summaries[vector.guid] = summary
        if self.policy.decide(summary) == "ham":
            self.ham_guids.add(vector.guid)
        else:
            self.ham_guids.discard(vector.guid)
        self.votes += 1
        return True


def ham_vote_vector(
    vector: FeatureVector, text: str, matches: Sequence[Match], length: int
) -> FeatureVector:
    """Return the vector a rescued (wrongly flagged) ham is voted on: the features of the
    spam GUIDs it matched that occur anywhere among its own windows (the boilerplate it
    shares with them, even windows outside its top N), then its own features, at most N
    in all. Published with a ham vote, these features stop counting for every GUID that
    holds them (``NetworkDefences.ham_guids``) while the spam's other features still do."""
    shared: list[int] = []
    if text and len(text) >= length:
        windows = bit_reverse64(window_checksums(code_points(text), length))
        for match in matches:
            candidates = np.array(match.features, dtype=np.uint64)
            found = candidates[np.isin(candidates, windows)]
            shared.extend(int(f) for f in found if int(f) not in shared)
    count = max(len(vector.features), 1)
    features = list(dict.fromkeys([*shared, *vector.features]))[:count]
    return replace(vector, features=tuple(features))


def window_texts(text: str, features: tuple[int, ...], length: int) -> dict[int, str]:
    """Return feature -> the window text of ``text`` that produced it (ATA features are
    bit-reversed window checksums, so recomputing the checksums finds them)."""
    if not features or len(text) < length:
        return {}
    checksums = bit_reverse64(window_checksums(code_points(text), length))
    wanted = np.array(sorted(set(features)), dtype=np.uint64)
    positions = np.flatnonzero(np.isin(checksums, wanted))
    out: dict[int, str] = {}
    for pos in positions.tolist():
        out.setdefault(int(checksums[pos]), text[pos : pos + length])
    return out

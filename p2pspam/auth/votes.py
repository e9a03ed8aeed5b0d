"""Signed votes: a user's verdict on a message, in one canonical msgpack encoding.

Wire form (see ``codec``): ``msgpack([record, signature])`` where

    record = msgpack([version=1, scheme, namespace, params, guid(20), features,
                      verdict, timestamp_ms, credential])

- ``params``: the scheme parameters as an array of ``[name, value]`` pairs sorted by
  name (strictly: no duplicate names); values are unsigned 64-bit integers;
- ``features``: an array of unsigned 64-bit integers (1..64 of them);
- ``verdict``: ``"spam"``, ``"ham"`` or ``"withdraw"`` (a withdrawal counts for neither
  side; ``unmark`` is a ham vote or a withdrawal);
- ``credential``: the user's credential (``credentials.Credential.encode()``) as bin.

``signature`` is the user's Ed25519 signature over ``b"p2pspam/vote/1\\0" + record``,
i.e. over exactly the record bytes. A whole vote is at most 2048 bytes (the limits
match what an ADOLR object record carries). ``decode_vote``
checks the structure only (raising ``VoteRejected("oversized")`` or
``VoteRejected("malformed")``); ``verify.VoteVerifier`` checks signatures and validity.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from p2pspam.auth import codec
from p2pspam.auth.codec import DecodeError
from p2pspam.auth.credentials import MAX_CREDENTIAL_BYTES, Credential, UserKey, decode_credential
from p2pspam.errors import P2PSpamError, ParameterError
from p2pspam.fingerprint.vector import GUID_BYTES, FeatureVector

VOTE_VERSION = 1
VOTE_DOMAIN = b"p2pspam/vote/1\0"
MAX_VOTE_BYTES = 2048  # = p2pspam.adolr.records.MAX_VOTE_BYTES: what a record can carry
MAX_FEATURES = 64  # = p2pspam.adolr.records.MAX_FEATURES
MAX_PARAMS = 16
MAX_NAMESPACE = 128
VERDICTS = ("spam", "ham", "withdraw")
SCHEME_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,31}")
NAMESPACE_PATTERN = re.compile(r"[!-~]{1,128}")  # printable ASCII, no spaces
PARAM_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,15}")

REASONS = (
    "malformed",
    "oversized",
    "bad_signature",
    "unknown_authority",
    "credential_expired",
    "credential_not_yet_valid",
    "revoked",
    "future_timestamp",
    "bad_vector",
    "rate_limited",
)


class VoteRejected(P2PSpamError):
    """A vote was refused; ``reason`` is one of ``REASONS`` (a stable code for counters
    and the agent API) and the message says what exactly was wrong."""

    def __init__(self, reason: str, detail: str) -> None:
        if reason not in REASONS:
            raise ValueError(f"unknown rejection reason {reason!r}")
        super().__init__(f"vote rejected ({reason}): {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Vote:
    """One user's signed verdict on the message with GUID ``guid`` and feature vector
    ``features`` under ``scheme``/``namespace``/``params``. Decoded votes are not
    verified: only ``verify.VoteVerifier`` vouches for one."""

    scheme: str
    namespace: str
    params: Mapping[str, int] = field(hash=False)
    guid: bytes
    features: tuple[int, ...]
    verdict: str
    timestamp_ms: int
    credential: Credential
    signature: bytes
    version: int = VOTE_VERSION

    @property
    def user_id(self) -> str:
        """The voting user (from the credential)."""
        return self.credential.user_id

    def record(self) -> bytes:
        """Return the signed record bytes."""
        return _record(self)

    def encode(self) -> bytes:
        """Return the canonical wire encoding (record and signature)."""
        return codec.seal(self.record(), self.signature)

    def vector(self) -> FeatureVector:
        """Return the feature vector the vote is about (``chars`` is unknown: 0)."""
        return FeatureVector(
            scheme=self.scheme,
            namespace=self.namespace,
            params=dict(self.params),
            features=self.features,
            guid=self.guid,
            chars=0,
        )


def _record(vote: Vote) -> bytes:
    return codec.pack(_record_fields(vote))


def _record_fields(vote: Vote) -> list[Any]:
    return [
        vote.version,
        vote.scheme,
        vote.namespace,
        [[name, vote.params[name]] for name in sorted(vote.params)],
        vote.guid,
        list(vote.features),
        vote.verdict,
        vote.timestamp_ms,
        vote.credential.encode(),
    ]


def sign_vote(user: UserKey, vector: FeatureVector, verdict: str, timestamp_ms: int) -> Vote:
    """Return the vote of ``user`` with ``verdict`` on ``vector``, signed by the user's
    key; raise ParameterError if the verdict, vector or timestamp cannot make a vote."""
    if verdict not in VERDICTS:
        raise ParameterError(f"verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
    if not vector.features:
        why = f" ({vector.note})" if vector.note else ""
        raise ParameterError(f"the message has no feature vector to vote on{why}")
    if type(timestamp_ms) is not int or not 0 <= timestamp_ms <= codec.MAX_TIME_MS:
        raise ParameterError(f"timestamp_ms must be 0..{codec.MAX_TIME_MS}")
    unsigned = Vote(
        scheme=vector.scheme,
        namespace=vector.namespace,
        params=dict(vector.params),
        guid=bytes(vector.guid),
        features=tuple(int(f) for f in vector.features),
        verdict=verdict,
        timestamp_ms=timestamp_ms,
        credential=user.credential,
        signature=b"",
    )
    try:  # what is signed must decode: catch bad vectors at the signer, not at peers
        record = _record(unsigned)
        decoded = _decode_record(record, b"")
    except (DecodeError, TypeError, ValueError, OverflowError) as exc:
        raise ParameterError(f"cannot sign this vote: {exc}") from None
    return replace(decoded, credential=user.credential, signature=user.sign(VOTE_DOMAIN + record))


def decode_vote(data: bytes) -> Vote:
    """Parse a vote strictly (types, lengths, ranges, canonical form); raise
    ``VoteRejected`` with reason ``oversized`` or ``malformed``. Signatures are not
    checked: use ``verify.VoteVerifier.verify`` before trusting a vote."""
    return decode_vote_record(data)[0]


def decode_vote_record(data: bytes) -> tuple[Vote, bytes]:
    """Like ``decode_vote`` but also return the signed record bytes."""
    if not isinstance(data, bytes | bytearray):
        raise VoteRejected("malformed", f"a vote is bytes, not {type(data).__name__}")
    if len(data) > MAX_VOTE_BYTES:
        raise VoteRejected("oversized", f"{len(data)} bytes, the limit is {MAX_VOTE_BYTES}")
    try:
        record, signature = codec.open_envelope(bytes(data), MAX_VOTE_BYTES, "vote")
        return _decode_record(record, signature), record
    except DecodeError as exc:
        raise VoteRejected("malformed", str(exc)) from None


def _decode_record(record: bytes, signature: bytes) -> Vote:
    fields = codec.expect_array(codec.unpack(record, MAX_VOTE_BYTES), 9, "vote record")
    codec.expect_int(fields[0], VOTE_VERSION, VOTE_VERSION, "vote version")
    scheme = codec.expect_str(fields[1], "scheme", 32)
    if not SCHEME_PATTERN.fullmatch(scheme):
        raise DecodeError("scheme must match [a-z][a-z0-9_-]*")
    namespace = codec.expect_str(fields[2], "namespace", MAX_NAMESPACE)
    if not NAMESPACE_PATTERN.fullmatch(namespace):
        raise DecodeError("namespace must be printable ASCII without spaces")
    params = _decode_params(fields[3])
    guid = codec.expect_bytes(fields[4], "guid", GUID_BYTES)
    features = fields[5]
    if (
        not isinstance(features, list)
        or not 1 <= len(features) <= MAX_FEATURES
        or not all(type(f) is int for f in features)
        or min(features) < 0
        or max(features) > codec.UINT64_MAX
    ):
        raise DecodeError(f"features must be an array of 1..{MAX_FEATURES} unsigned 64-bit ints")
    verdict = fields[6]
    if not isinstance(verdict, str) or verdict not in VERDICTS:
        raise DecodeError(f"verdict must be one of {', '.join(VERDICTS)}")
    timestamp = codec.expect_int(fields[7], 0, codec.MAX_TIME_MS, "timestamp_ms")
    raw_credential = codec.expect_bytes(fields[8], "credential", max_len=MAX_CREDENTIAL_BYTES)
    credential = _credential(raw_credential)
    codec.require_canonical(fields, record, "vote record")
    return Vote(
        scheme=scheme,
        namespace=namespace,
        params=params,
        guid=guid,
        features=tuple(features),
        verdict=verdict,
        timestamp_ms=timestamp,
        credential=credential,
        signature=signature,
    )


@lru_cache(maxsize=4096)
def _credential(raw: bytes) -> Credential:
    """Decode a credential, remembering recent ones (a user's votes repeat it)."""
    return decode_credential(raw)


def _decode_params(value: Any) -> dict[str, int]:
    if not isinstance(value, list) or len(value) > MAX_PARAMS:
        raise DecodeError(f"params must be an array of at most {MAX_PARAMS} pairs")
    params: dict[str, int] = {}
    previous = ""
    for pair in value:
        name, number = codec.expect_array(pair, 2, "a parameter")
        if not isinstance(name, str) or not PARAM_PATTERN.fullmatch(name):
            raise DecodeError("parameter names must match [A-Za-z][A-Za-z0-9_]{0,15}")
        if name <= previous:
            raise DecodeError("parameters must be sorted by name without duplicates")
        params[name] = codec.expect_int(number, 0, codec.UINT64_MAX, f"parameter {name}")
        previous = name
    return params

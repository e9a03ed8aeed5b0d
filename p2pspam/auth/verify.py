"""Vote verification: the only way a vote becomes a ``VerifiedVote`` that tallies count.

``VoteVerifier(authority_public_key)`` checks, for each encoded vote, in this order:

1. ``oversized`` — more than ``votes.MAX_VOTE_BYTES`` bytes;
2. ``malformed`` — not exactly one canonical vote record (types, lengths, ranges);
3. ``unknown_authority`` — the credential was not signed by the configured authority;
4. ``bad_signature`` — the user's signature does not cover exactly these bytes;
5. ``revoked`` — the user is on the current revocation list;
6. ``credential_not_yet_valid`` / ``credential_expired`` — the vote's timestamp (and, for a
   fresh vote from an agent, ``now_ms``) lies outside the credential's validity;
7. ``future_timestamp`` — the vote is dated more than ``max_future_ms`` after ``now_ms``;
8. ``bad_vector`` — the vector does not fit the claimed scheme (``shapes``).

``rate_limited`` is the reason of ``VoteRateLimiter.check``; the limiter is separate
because only the peer that receives a vote from an agent should apply it (replicas moving
between storing peers are not new votes).

Fresh votes (``replica=False``, the default: a vote arriving from an agent) need a
credential valid now; replicas (``replica=True``: a vote a storing peer receives from
another peer, or re-checks when serving a tally) need a credential that was valid when
the vote was cast, so a credential expiring does not erase the votes it cast.

Signature checks are cached (bounded) by the exact bytes, so re-verifying stored votes
when serving a tally costs a dictionary lookup plus the revocation and time checks.

``update_revocations(signed_list, now_ms)`` returns True when it replaced the list by a
newer one, False for an older or equal sequence, and raises ``RevocationRejected`` for a
malformed list or one not signed by the authority.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from p2pspam.auth.credentials import Credential, key_id, load_public_key, verify_signature
from p2pspam.auth.ratelimit import VoteRateLimiter
from p2pspam.auth.revocation import RevocationList, RevocationRejected, open_revocations
from p2pspam.auth.shapes import shape_error
from p2pspam.auth.votes import REASONS, VOTE_DOMAIN, Vote, VoteRejected, decode_vote_record

__all__ = [
    "DEFAULT_MAX_FUTURE_MS",
    "REASONS",
    "RateLimitedVerifier",
    "RevocationRejected",
    "VerifiedVote",
    "VoteRateLimiter",
    "VoteRejected",
    "VoteVerifier",
]

DEFAULT_MAX_FUTURE_MS = 10 * 60 * 1000  # clocks of agents may run ahead by ten minutes
_SEAL = object()  # only this module can make a VerifiedVote


@dataclass(frozen=True, slots=True)
class VerifiedVote(Vote):
    """A vote whose signatures ``VoteVerifier`` checked; ``encoded`` is its wire form.
    Tallies accept only these."""

    encoded: bytes = b""
    seal: object = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.seal is not _SEAL:
            raise TypeError("a VerifiedVote is made by VoteVerifier.verify only")


class VoteVerifier:
    """Checks encoded votes against one authority and its latest revocation list."""

    def __init__(
        self,
        authority_public_key: bytes,
        revocations: bytes | None = None,
        *,
        max_future_ms: int = DEFAULT_MAX_FUTURE_MS,
        cache_size: int = 16384,
    ) -> None:
        self._authority: Ed25519PublicKey = load_public_key(authority_public_key)
        self.authority_key_id = key_id(authority_public_key)
        self.max_future_ms = max_future_ms
        self._cache_size = cache_size
        self._credentials: dict[Credential, Ed25519PublicKey] = {}
        self._signed: dict[bytes, VerifiedVote] = {}
        self._revocations: RevocationList | None = None
        self._revoked: frozenset[str] = frozenset()
        self.revocations_updated_ms: int | None = None
        if revocations is not None:
            self.update_revocations(revocations, 0)

    @property
    def revocations(self) -> RevocationList | None:
        """The current revocation list (None before any)."""
        return self._revocations

    def is_revoked(self, user_id: str) -> bool:
        """Return True when ``user_id`` is on the current revocation list."""
        return user_id in self._revoked

    def update_revocations(self, signed_list: bytes, now_ms: int) -> bool:
        """Adopt ``signed_list`` if it is validly signed and newer than the current list;
        return whether it was adopted (raise RevocationRejected if it is invalid)."""
        revocations = open_revocations(signed_list, self._authority)
        current = self._revocations
        if current is not None and revocations.sequence <= current.sequence:
            return False
        self._revocations = revocations
        self._revoked = revocations.users
        self.revocations_updated_ms = now_ms
        return True

    def verify(self, data: bytes, now_ms: int, *, replica: bool = False) -> VerifiedVote:
        """Return the vote if every check passes, else raise VoteRejected with the
        reason of the first failed check (see the module docstring)."""
        vote = self._signed.get(data) if isinstance(data, bytes) else None
        if vote is None:
            vote = self._verify_signatures(data)
        self._check_validity(vote, now_ms, replica)
        return vote

    def _verify_signatures(self, data: bytes) -> VerifiedVote:
        vote, record = decode_vote_record(data)
        credential = vote.credential
        user_key = self._credentials.get(credential)
        if user_key is None:
            user_key = self._check_credential(credential)
        if not verify_signature(user_key, vote.signature, VOTE_DOMAIN + record):
            raise VoteRejected(
                "bad_signature",
                f"the signature of user {vote.user_id!r} does not match the vote's content",
            )
        verified = VerifiedVote(
            scheme=vote.scheme,
            namespace=vote.namespace,
            params=vote.params,
            guid=vote.guid,
            features=vote.features,
            verdict=vote.verdict,
            timestamp_ms=vote.timestamp_ms,
            credential=credential,
            signature=vote.signature,
            encoded=bytes(data),
            seal=_SEAL,
        )
        _remember(self._signed, bytes(data), verified, self._cache_size)
        return verified

    def _check_credential(self, credential: Credential) -> Ed25519PublicKey:
        if credential.authority_key_id != self.authority_key_id:
            raise VoteRejected(
                "unknown_authority",
                f"credential of {credential.user_id!r} was issued by authority "
                f"{credential.authority_key_id.hex()}, this node trusts "
                f"{self.authority_key_id.hex()}",
            )
        if not credential.signed_by(self._authority):
            raise VoteRejected(
                "unknown_authority",
                f"credential of {credential.user_id!r} is not signed by the configured authority",
            )
        try:
            user_key = Ed25519PublicKey.from_public_bytes(credential.public_key)
        except ValueError:
            raise VoteRejected(
                "malformed", "the credential's public key is not an Ed25519 key"
            ) from None
        _remember(self._credentials, credential, user_key, self._cache_size)
        return user_key

    def _check_validity(self, vote: VerifiedVote, now_ms: int, replica: bool) -> None:
        credential = vote.credential
        if credential.user_id in self._revoked:
            sequence = self._revocations.sequence if self._revocations else 0
            raise VoteRejected(
                "revoked", f"user {credential.user_id!r} is revoked (revocation list {sequence})"
            )
        moments = [("the vote's timestamp", vote.timestamp_ms)]
        if not replica:
            moments.append(("now", now_ms))
        for what, moment in moments:
            if moment < credential.not_before_ms:
                raise VoteRejected(
                    "credential_not_yet_valid",
                    f"credential of {credential.user_id!r} is valid from "
                    f"{credential.not_before_ms} ms, {what} is {moment} ms",
                )
            if moment > credential.not_after_ms:
                raise VoteRejected(
                    "credential_expired",
                    f"credential of {credential.user_id!r} expired at "
                    f"{credential.not_after_ms} ms, {what} is {moment} ms",
                )
        if vote.timestamp_ms > now_ms + self.max_future_ms:
            raise VoteRejected(
                "future_timestamp",
                f"vote dated {vote.timestamp_ms - now_ms} ms in the future "
                f"(at most {self.max_future_ms} ms allowed)",
            )
        problem = shape_error(vote.scheme, vote.namespace, vote.params, vote.features)
        if problem is not None:
            raise VoteRejected("bad_vector", problem)


class RateLimitedVerifier:
    """A verifier and a per-user rate limit: what a peer applies to votes from agents."""

    def __init__(self, verifier: VoteVerifier, limiter: VoteRateLimiter) -> None:
        self.verifier = verifier
        self.limiter = limiter

    def verify(self, data: bytes, now_ms: int) -> VerifiedVote:
        """Verify a fresh vote, then count it against its user's rate limit (raise
        VoteRejected "rate_limited" when over)."""
        vote = self.verifier.verify(data, now_ms)
        if not self.limiter.allow(vote.user_id, now_ms):
            raise VoteRejected(
                "rate_limited",
                f"user {vote.user_id!r} cast more than {self.limiter.per_hour} votes per hour",
            )
        return vote


def _remember(cache: dict, key: object, value: object, size: int) -> None:
    if len(cache) >= size:
        # Drop the oldest eighth (dicts keep insertion order): cheap, bounded memory.
        for stale in list(cache)[: max(1, size // 8)]:
            del cache[stale]
    cache[key] = value

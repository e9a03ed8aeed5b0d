"""Builders shared by the identities tests: authorities, users, vectors and votes."""

from __future__ import annotations

from dataclasses import replace

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pspam.auth.credentials import UserKey, issue_credential, new_user_key, public_bytes
from p2pspam.auth.votes import Vote, sign_vote
from p2pspam.fingerprint.ata import AtaScheme
from p2pspam.fingerprint.normalize import canonical_text
from p2pspam.fingerprint.vector import FeatureVector

NOW = 1_700_000_000_000  # a fixed "now" in ms: tests never read the clock
DAY = 86_400_000
SCHEME = AtaScheme()

SPAM_TEXT = (
    "Dear friend, you have been selected to receive a cash prize of one million dollars. "
    "To claim your prize send your bank account number and a small processing fee to our "
    "agent today. This offer expires soon, act now and do not tell anyone about it."
)


def vector_of(text: str = SPAM_TEXT) -> FeatureVector:
    """The ATA vector (default parameters) of a text."""
    from p2pspam.fingerprint.normalize import CanonicalBody

    return SCHEME.vector(CanonicalBody(canonical_text(text), None))


def authority_key() -> Ed25519PrivateKey:
    """A fresh authority key."""
    return Ed25519PrivateKey.generate()


def user(
    authority: Ed25519PrivateKey,
    user_id: str = "alice",
    not_before_ms: int = NOW - DAY,
    not_after_ms: int = NOW + 365 * DAY,
) -> UserKey:
    """A user credential issued by ``authority``."""
    return new_user_key(authority, user_id, not_before_ms, not_after_ms)


def vote(
    key: UserKey,
    verdict: str = "spam",
    timestamp_ms: int = NOW,
    vector: FeatureVector | None = None,
) -> Vote:
    """A vote signed by ``key``."""
    return sign_vote(key, vector or vector_of(), verdict, timestamp_ms)


def tampered(original: Vote, **changes: object) -> bytes:
    """The encoding of ``original`` with fields changed after signing (same signature)."""
    return replace(original, **changes).encode()


def forged_user(authority: Ed25519PrivateKey, victim: UserKey, user_id: str) -> UserKey:
    """A user whose credential copies ``victim``'s authority signature onto another
    identity (not signed by the authority)."""
    private = Ed25519PrivateKey.generate()
    genuine = issue_credential(
        authority, victim.user_id, victim.credential.public_key, 0, NOW + 365 * DAY
    )
    forged = replace(genuine, user_id=user_id, public_key=public_bytes(private))
    return UserKey(forged, private)

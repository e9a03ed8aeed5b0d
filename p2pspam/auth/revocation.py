"""Signed revocation lists: which users (and federation peers) the authority revoked.

Encoding (see ``codec``): the envelope ``msgpack([body, signature])`` with

    body = msgpack([version=1, authority_key_id(8), sequence, issued_ms,
                    revoked_user_ids (sorted, distinct), revoked_node_ids (sorted, distinct)])

signed by the authority over ``b"p2pspam/revocations/1\\0" + body``. ``sequence`` grows
by one with every list the authority signs; a holder replaces its list only by one with
a greater sequence, so an old list replayed by anyone changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from p2pspam.auth import codec
from p2pspam.auth.codec import DecodeError
from p2pspam.auth.credentials import (
    MAX_USER_ID,
    USER_ID_PATTERN,
    key_id,
    public_bytes,
    verify_signature,
)
from p2pspam.errors import P2PSpamError

REVOCATION_VERSION = 1
REVOCATION_DOMAIN = b"p2pspam/revocations/1\0"
MAX_REVOCATION_BYTES = 1 << 19  # 512 KiB: about 7,000 users at the longest user ids
NODE_ID_BYTES = 20


class RevocationRejected(P2PSpamError):
    """A revocation list was refused: ``reason`` is "malformed", "unknown_authority" or
    "bad_signature"."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"revocation list rejected ({reason}): {detail}")
        self.reason = reason


@dataclass(frozen=True, slots=True)
class RevocationList:
    """The set of revoked user ids and node ids, version ``sequence`` of the authority's
    list."""

    authority_key_id: bytes
    sequence: int
    issued_ms: int
    users: frozenset[str]
    nodes: frozenset[bytes]
    signature: bytes
    version: int = REVOCATION_VERSION

    def body(self) -> bytes:
        """Return the signed part of the list."""
        return codec.pack(
            [
                self.version,
                self.authority_key_id,
                self.sequence,
                self.issued_ms,
                sorted(self.users),
                sorted(self.nodes),
            ]
        )

    def encode(self) -> bytes:
        """Return the canonical encoding of the signed list."""
        return codec.seal(self.body(), self.signature)


def sign_revocations(
    authority_key: Ed25519PrivateKey,
    sequence: int,
    issued_ms: int,
    users: frozenset[str] | set[str],
    nodes: frozenset[bytes] | set[bytes] = frozenset(),
) -> RevocationList:
    """Return the revocation list ``sequence`` signed by the authority."""
    unsigned = RevocationList(
        key_id(public_bytes(authority_key)),
        sequence,
        issued_ms,
        frozenset(users),
        frozenset(nodes),
        b"",
    )
    signed = replace(unsigned, signature=authority_key.sign(REVOCATION_DOMAIN + unsigned.body()))
    decode_revocations(signed.encode())  # never sign what a peer would refuse to parse
    return signed


def decode_revocations(data: bytes) -> RevocationList:
    """Parse a signed revocation list strictly; raise DecodeError. The signature is
    checked by ``open_revocations``."""
    if not isinstance(data, bytes) or len(data) > MAX_REVOCATION_BYTES:
        raise DecodeError(f"a revocation list is bytes of at most {MAX_REVOCATION_BYTES}")
    body, signature = codec.open_envelope(data, MAX_REVOCATION_BYTES, "revocation list")
    fields = codec.expect_array(codec.unpack(body, MAX_REVOCATION_BYTES), 6, "revocation list")
    codec.expect_int(fields[0], REVOCATION_VERSION, REVOCATION_VERSION, "version")
    authority = codec.expect_bytes(fields[1], "authority key id", codec.KEY_ID_BYTES)
    sequence = codec.expect_int(fields[2], 0, codec.UINT64_MAX, "sequence")
    issued = codec.expect_int(fields[3], 0, codec.MAX_TIME_MS, "issued_ms")
    users, nodes = fields[4], fields[5]
    if not isinstance(users, list) or not isinstance(nodes, list):
        raise DecodeError("revoked users and nodes must be arrays")
    for user in users:
        codec.expect_str(user, "revoked user id", MAX_USER_ID)
        if not USER_ID_PATTERN.fullmatch(user):
            raise DecodeError("a revoked user id has characters outside [A-Za-z0-9._@+-]")
    for node in nodes:
        codec.expect_bytes(node, "revoked node id", NODE_ID_BYTES)
    if users != sorted(set(users)) or nodes != sorted(set(nodes)):
        raise DecodeError("revoked ids must be sorted and distinct")
    codec.require_canonical(fields, body, "revocation list")
    return RevocationList(
        authority, sequence, issued, frozenset(users), frozenset(nodes), signature
    )


def open_revocations(data: bytes, authority_public_key: Ed25519PublicKey) -> RevocationList:
    """Return the list if it is well formed and signed by that authority, else raise
    RevocationRejected."""
    try:
        revocations = decode_revocations(data)
    except DecodeError as exc:
        raise RevocationRejected("malformed", str(exc)) from None
    expected = key_id(authority_public_key.public_bytes_raw())
    if revocations.authority_key_id != expected:
        raise RevocationRejected(
            "unknown_authority",
            f"signed by authority {revocations.authority_key_id.hex()}, "
            f"this node trusts {expected.hex()}",
        )
    if not verify_signature(
        authority_public_key, revocations.signature, REVOCATION_DOMAIN + revocations.body()
    ):
        raise RevocationRejected("bad_signature", "the authority signature does not verify")
    return revocations

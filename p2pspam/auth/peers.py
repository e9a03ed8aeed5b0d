"""Peer credentials for an optional closed federation (peers admit only peers that the
same authority certified).

A peer credential binds a node name and a Kademlia node id to the peer's Ed25519 key:
the envelope ``msgpack([body, signature])`` with

    body = msgpack([version=1, node_name, node_id(20), peer_public_key(32),
                    not_before_ms, not_after_ms, authority_key_id(8)])

signed by the authority over ``b"p2pspam/peer-credential/1\\0" + body``. The authority
chooses the node id, ``node_id_for(public_key)`` (160 bits of SHA-256 of the key), so a
peer cannot pick where it sits in the key space (no chosen-id eclipse of a key).

A peer proves it holds the key by signing a challenge chosen by the other side
(``peer_proof`` / ``verify_peer_proof``); the I/O layer decides when to ask (e.g. on the
first contact of a node id, with a random nonce) and drops contacts that fail. Revoked
peers are listed by node id in the authority's revocation list.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from p2pspam.auth import codec
from p2pspam.auth.codec import DecodeError
from p2pspam.auth.credentials import key_id, load_public_key, public_bytes, verify_signature
from p2pspam.auth.files import b64, dump_json, json_document, read_secret, unb64, write_new_secret
from p2pspam.auth.revocation import NODE_ID_BYTES, RevocationList
from p2pspam.errors import InputError, P2PSpamError, ParameterError

PEER_VERSION = 1
PEER_DOMAIN = b"p2pspam/peer-credential/1\0"
PROOF_DOMAIN = b"p2pspam/peer-proof/1\0"
MAX_PEER_CREDENTIAL_BYTES = 512
MAX_CHALLENGE_BYTES = 256
NODE_NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
PEER_FILE_FORMAT = "p2pspam-peer-credential/1"
PEER_REASONS = (
    "malformed",
    "unknown_authority",
    "credential_expired",
    "credential_not_yet_valid",
    "revoked",
    "wrong_node_id",
    "bad_proof",
)


class PeerRejected(P2PSpamError):
    """A peer credential or proof was refused; ``reason`` is one of ``PEER_REASONS``."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"peer rejected ({reason}): {detail}")
        self.reason = reason


def node_id_for(public_key: bytes) -> bytes:
    """Return the 20-byte node id the authority assigns to a peer key."""
    return hashlib.sha256(b"p2pspam/node-id\0" + public_key).digest()[:NODE_ID_BYTES]


def check_node_name(name: str) -> str:
    """Return ``name`` if it is 1..64 characters of ``[A-Za-z0-9._-]``, else raise
    ParameterError."""
    if not isinstance(name, str) or not NODE_NAME_PATTERN.fullmatch(name):
        raise ParameterError(
            f"node name {name!r} must be 1..64 letters, digits and ._- starting with a "
            "letter or digit"
        )
    return name


@dataclass(frozen=True, slots=True)
class PeerCredential:
    """A peer's identity in a closed federation, signed by the authority."""

    node_name: str
    node_id: bytes
    public_key: bytes
    not_before_ms: int
    not_after_ms: int
    authority_key_id: bytes
    signature: bytes
    version: int = PEER_VERSION

    def body(self) -> bytes:
        """Return the signed part."""
        return codec.pack(
            [
                self.version,
                self.node_name,
                self.node_id,
                self.public_key,
                self.not_before_ms,
                self.not_after_ms,
                self.authority_key_id,
            ]
        )

    def encode(self) -> bytes:
        """Return the canonical encoding."""
        return codec.seal(self.body(), self.signature)


@dataclass(frozen=True, slots=True)
class PeerKey:
    """A peer's credential and private key (what a peer daemon is configured with)."""

    credential: PeerCredential
    private_key: Ed25519PrivateKey

    @property
    def node_id(self) -> bytes:
        """The node id the authority assigned."""
        return self.credential.node_id


def issue_peer_key(
    authority_key: Ed25519PrivateKey, node_name: str, not_before_ms: int, not_after_ms: int
) -> PeerKey:
    """Create a peer key pair and its credential signed by the authority."""
    check_node_name(node_name)
    if not 0 <= not_before_ms <= not_after_ms <= codec.MAX_TIME_MS:
        raise ParameterError("peer credential validity must satisfy 0 <= from <= to")
    private_key = Ed25519PrivateKey.generate()
    public_key = public_bytes(private_key)
    unsigned = PeerCredential(
        node_name,
        node_id_for(public_key),
        public_key,
        not_before_ms,
        not_after_ms,
        key_id(public_bytes(authority_key)),
        b"",
    )
    credential = replace(unsigned, signature=authority_key.sign(PEER_DOMAIN + unsigned.body()))
    return PeerKey(credential, private_key)


def decode_peer_credential(data: bytes) -> PeerCredential:
    """Parse a peer credential strictly; raise DecodeError (no signature check)."""
    if not isinstance(data, bytes) or len(data) > MAX_PEER_CREDENTIAL_BYTES:
        raise DecodeError(f"a peer credential is bytes of at most {MAX_PEER_CREDENTIAL_BYTES}")
    body, signature = codec.open_envelope(data, MAX_PEER_CREDENTIAL_BYTES, "peer credential")
    fields = codec.expect_array(codec.unpack(body, MAX_PEER_CREDENTIAL_BYTES), 7, "peer body")
    version = codec.expect_int(fields[0], PEER_VERSION, PEER_VERSION, "version")
    name = codec.expect_str(fields[1], "node name", 64)
    if not NODE_NAME_PATTERN.fullmatch(name):
        raise DecodeError("node name has characters outside [A-Za-z0-9._-]")
    node_id = codec.expect_bytes(fields[2], "node id", NODE_ID_BYTES)
    public_key = codec.expect_bytes(fields[3], "peer public key", codec.PUBLIC_KEY_BYTES)
    not_before = codec.expect_int(fields[4], 0, codec.MAX_TIME_MS, "not_before_ms")
    not_after = codec.expect_int(fields[5], not_before, codec.MAX_TIME_MS, "not_after_ms")
    authority = codec.expect_bytes(fields[6], "authority key id", codec.KEY_ID_BYTES)
    codec.require_canonical(fields, body, "peer credential")
    return PeerCredential(
        name, node_id, public_key, not_before, not_after, authority, signature, version
    )


def verify_peer_credential(
    data: bytes,
    authority_public_key: bytes,
    now_ms: int,
    revocations: RevocationList | None = None,
    node_id: bytes | None = None,
) -> PeerCredential:
    """Return the credential if it is well formed, signed by the authority, valid at
    ``now_ms``, not revoked, and (when given) for ``node_id``; else raise PeerRejected."""
    try:
        credential = decode_peer_credential(data)
    except DecodeError as exc:
        raise PeerRejected("malformed", str(exc)) from None
    authority = load_public_key(authority_public_key)
    if credential.authority_key_id != key_id(authority_public_key) or not verify_signature(
        authority, credential.signature, PEER_DOMAIN + credential.body()
    ):
        raise PeerRejected(
            "unknown_authority", f"peer {credential.node_name!r} is not certified by this authority"
        )
    if credential.node_id != node_id_for(credential.public_key):
        raise PeerRejected("wrong_node_id", "the node id is not the one of the peer's key")
    if node_id is not None and credential.node_id != node_id:
        raise PeerRejected(
            "wrong_node_id",
            f"credential is for node {credential.node_id.hex()}, the contact claims "
            f"{node_id.hex()}",
        )
    if now_ms < credential.not_before_ms:
        raise PeerRejected("credential_not_yet_valid", f"valid from {credential.not_before_ms}")
    if now_ms > credential.not_after_ms:
        raise PeerRejected("credential_expired", f"expired at {credential.not_after_ms}")
    if revocations is not None and credential.node_id in revocations.nodes:
        raise PeerRejected("revoked", f"peer {credential.node_name!r} is revoked")
    return credential


def peer_proof(peer: PeerKey, challenge: bytes) -> bytes:
    """Return the peer's signature of a challenge (proof that it holds its key)."""
    if not 1 <= len(challenge) <= MAX_CHALLENGE_BYTES:
        raise ParameterError(f"a challenge is 1..{MAX_CHALLENGE_BYTES} bytes")
    return peer.private_key.sign(PROOF_DOMAIN + challenge)


def verify_peer_proof(credential: PeerCredential, challenge: bytes, proof: bytes) -> None:
    """Raise PeerRejected("bad_proof") unless ``proof`` is the credential key's signature
    of ``challenge``."""
    key: Ed25519PublicKey
    try:
        key = load_public_key(credential.public_key)
    except ParameterError:
        raise PeerRejected("bad_proof", "the peer key is not an Ed25519 key") from None
    if (
        not isinstance(proof, bytes)
        or len(proof) != codec.SIGNATURE_BYTES
        or not verify_signature(key, proof, PROOF_DOMAIN + challenge)
    ):
        raise PeerRejected("bad_proof", f"peer {credential.node_name!r} did not prove its key")


def write_peer_key(path: Path, peer: PeerKey) -> None:
    """Write a peer credential file (mode 0600; refuses to overwrite)."""
    doc = {
        "format": PEER_FILE_FORMAT,
        "node_name": peer.credential.node_name,
        "node_id": peer.node_id.hex(),
        "not_after_ms": peer.credential.not_after_ms,
        "credential": b64(peer.credential.encode()),
        "private_key": b64(peer.private_key.private_bytes_raw()),
    }
    write_new_secret(path, dump_json(doc))


def load_peer_key(path: str | Path) -> PeerKey:
    """Read a peer credential file written by ``p2pspam authority issue-peer``."""
    path = Path(path)
    doc = json_document(read_secret(path, "peer credential file"), path, PEER_FILE_FORMAT)
    try:
        credential = decode_peer_credential(unb64(doc.get("credential"), "credential", path))
    except DecodeError as exc:
        raise InputError(f"{path}: malformed peer credential: {exc}") from None
    raw = unb64(doc.get("private_key"), "private key", path)
    if len(raw) != 32:
        raise InputError(f"{path}: the private key must be 32 bytes")
    private_key = Ed25519PrivateKey.from_private_bytes(raw)
    if public_bytes(private_key) != credential.public_key:
        raise InputError(f"{path}: the private key does not match the peer credential")
    return PeerKey(credential, private_key)

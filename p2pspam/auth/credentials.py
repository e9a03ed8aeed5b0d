"""User credentials issued by the central authority (SpamWatch paper, section 5.2).

A credential binds a user id to the user's Ed25519 public key for a validity period and
is signed by the authority. Encoding (see ``codec``): the envelope
``msgpack([body, signature])`` with

    body = msgpack([version=1, user_id, user_public_key(32), not_before_ms,
                    not_after_ms, authority_key_id(8)])

signed by the authority over ``b"p2pspam/credential/1\\0" + body``. The authority key id
is the first 8 bytes of SHA-256 of the authority public key.

A user credential file (JSON, mode 0600) holds the credential and the user's private key;
``load_user_key`` reads it. The authority itself (its directory of files) is in
``p2pspam.auth.authority``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from p2pspam.auth import codec
from p2pspam.auth.codec import DecodeError
from p2pspam.auth.files import b64, dump_json, json_document, read_secret, unb64, write_new_secret
from p2pspam.errors import InputError, ParameterError

CREDENTIAL_VERSION = 1
CREDENTIAL_DOMAIN = b"p2pspam/credential/1\0"
MAX_CREDENTIAL_BYTES = 512
MAX_USER_ID = 64
USER_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}")
USER_FILE_FORMAT = "p2pspam-user-credential/1"


def key_id(public_key: bytes) -> bytes:
    """Return the 8-byte id of an Ed25519 public key (first bytes of its SHA-256)."""
    return hashlib.sha256(public_key).digest()[: codec.KEY_ID_BYTES]


def public_bytes(private_key: Ed25519PrivateKey) -> bytes:
    """Return the raw 32-byte public key of a private key."""
    return private_key.public_key().public_bytes_raw()


def check_user_id(user_id: str) -> str:
    """Return ``user_id`` if it is 1..64 characters of ``[A-Za-z0-9._@+-]`` starting with a
    letter or digit, else raise ParameterError."""
    if not isinstance(user_id, str) or not USER_ID_PATTERN.fullmatch(user_id):
        raise ParameterError(
            f"user id {user_id!r} must be 1..{MAX_USER_ID} characters of letters, digits "
            "and ._@+- starting with a letter or digit"
        )
    return user_id


def verify_signature(public_key: Ed25519PublicKey, signature: bytes, message: bytes) -> bool:
    """Return True when ``signature`` is a valid Ed25519 signature of ``message``."""
    try:
        public_key.verify(signature, message)
    except InvalidSignature:
        return False
    return True


def load_public_key(raw: bytes) -> Ed25519PublicKey:
    """Return the Ed25519 public key of 32 raw bytes (ParameterError if not a key)."""
    if not isinstance(raw, bytes) or len(raw) != codec.PUBLIC_KEY_BYTES:
        raise ParameterError("an Ed25519 public key is 32 bytes")
    try:
        return Ed25519PublicKey.from_public_bytes(raw)
    except ValueError:
        raise ParameterError("not a valid Ed25519 public key") from None


@dataclass(frozen=True, slots=True)
class Credential:
    """A user's identity: user id and public key, valid from ``not_before_ms`` to
    ``not_after_ms`` inclusive, signed by the authority with key id ``authority_key_id``."""

    user_id: str
    public_key: bytes
    not_before_ms: int
    not_after_ms: int
    authority_key_id: bytes
    signature: bytes
    version: int = CREDENTIAL_VERSION

    def body(self) -> bytes:
        """Return the signed part of the credential."""
        return codec.pack(
            [
                self.version,
                self.user_id,
                self.public_key,
                self.not_before_ms,
                self.not_after_ms,
                self.authority_key_id,
            ]
        )

    def encode(self) -> bytes:
        """Return the canonical encoding of the credential."""
        return codec.seal(self.body(), self.signature)

    def valid_at(self, now_ms: int) -> bool:
        """Return True when ``now_ms`` lies in the validity period."""
        return self.not_before_ms <= now_ms <= self.not_after_ms

    def signed_by(self, authority_public_key: Ed25519PublicKey) -> bool:
        """Return True when the authority signature is valid under that key."""
        message = CREDENTIAL_DOMAIN + self.body()
        return verify_signature(authority_public_key, self.signature, message)


def issue_credential(
    authority_key: Ed25519PrivateKey,
    user_id: str,
    user_public_key: bytes,
    not_before_ms: int,
    not_after_ms: int,
) -> Credential:
    """Return a credential for ``user_id`` signed by the authority."""
    check_user_id(user_id)
    _check_validity(not_before_ms, not_after_ms)
    unsigned = Credential(
        user_id=user_id,
        public_key=user_public_key,
        not_before_ms=not_before_ms,
        not_after_ms=not_after_ms,
        authority_key_id=key_id(public_bytes(authority_key)),
        signature=b"",
    )
    return replace(unsigned, signature=authority_key.sign(CREDENTIAL_DOMAIN + unsigned.body()))


def _check_validity(not_before_ms: int, not_after_ms: int) -> None:
    for value in (not_before_ms, not_after_ms):
        if type(value) is not int or not 0 <= value <= codec.MAX_TIME_MS:
            raise ParameterError(f"credential times must be 0..{codec.MAX_TIME_MS} ms")
    if not_after_ms < not_before_ms:
        raise ParameterError("a credential must not expire before it becomes valid")


def decode_credential(data: bytes) -> Credential:
    """Parse a credential strictly (types, lengths, ranges, canonical form); raise
    DecodeError. The authority signature is not checked here."""
    if len(data) > MAX_CREDENTIAL_BYTES:
        raise DecodeError(f"credential larger than {MAX_CREDENTIAL_BYTES} bytes")
    body, signature = codec.open_envelope(data, MAX_CREDENTIAL_BYTES, "credential")
    fields = codec.expect_array(codec.unpack(body, MAX_CREDENTIAL_BYTES), 6, "credential body")
    version = codec.expect_int(fields[0], CREDENTIAL_VERSION, CREDENTIAL_VERSION, "version")
    user_id = codec.expect_str(fields[1], "user id", MAX_USER_ID)
    if not USER_ID_PATTERN.fullmatch(user_id):
        raise DecodeError("user id has characters outside [A-Za-z0-9._@+-]")
    public_key = codec.expect_bytes(fields[2], "user public key", codec.PUBLIC_KEY_BYTES)
    not_before = codec.expect_int(fields[3], 0, codec.MAX_TIME_MS, "not_before_ms")
    not_after = codec.expect_int(fields[4], not_before, codec.MAX_TIME_MS, "not_after_ms")
    authority = codec.expect_bytes(fields[5], "authority key id", codec.KEY_ID_BYTES)
    codec.require_canonical(fields, body, "credential body")
    return Credential(user_id, public_key, not_before, not_after, authority, signature, version)


@dataclass(frozen=True, slots=True)
class UserKey:
    """What an agent signs votes with: its credential and the matching private key."""

    credential: Credential
    private_key: Ed25519PrivateKey

    @property
    def user_id(self) -> str:
        """The user id of the credential."""
        return self.credential.user_id

    def sign(self, message: bytes) -> bytes:
        """Return the Ed25519 signature of ``message`` by the user's key."""
        return self.private_key.sign(message)


def write_user_key(path: Path, user: UserKey) -> None:
    """Write a user credential file (mode 0600; refuses to overwrite)."""
    doc = {
        "format": USER_FILE_FORMAT,
        "user_id": user.user_id,
        "not_before_ms": user.credential.not_before_ms,
        "not_after_ms": user.credential.not_after_ms,
        "credential": b64(user.credential.encode()),
        "private_key": b64(user.private_key.private_bytes_raw()),
    }
    write_new_secret(path, dump_json(doc))


def load_user_key(path: str | Path) -> UserKey:
    """Read a user credential file written by ``p2pspam authority issue``; raise
    InputError if it is missing, readable by others, malformed, or its key does not
    match its credential."""
    path = Path(path)
    doc = json_document(read_secret(path, "credential file"), path, USER_FILE_FORMAT)
    try:
        credential = decode_credential(unb64(doc.get("credential"), "credential", path))
    except DecodeError as exc:
        raise InputError(f"{path}: malformed credential: {exc}") from None
    raw_private = unb64(doc.get("private_key"), "private key", path)
    if len(raw_private) != 32:
        raise InputError(f"{path}: the private key must be 32 bytes")
    private_key = Ed25519PrivateKey.from_private_bytes(raw_private)
    if public_bytes(private_key) != credential.public_key:
        raise InputError(f"{path}: the private key does not match the credential")
    return UserKey(credential, private_key)


def new_user_key(
    authority_key: Ed25519PrivateKey, user_id: str, not_before_ms: int, not_after_ms: int
) -> UserKey:
    """Create a fresh user key pair and its credential signed by the authority."""
    private_key = Ed25519PrivateKey.generate()
    credential = issue_credential(
        authority_key, user_id, public_bytes(private_key), not_before_ms, not_after_ms
    )
    return UserKey(credential, private_key)

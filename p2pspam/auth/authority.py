"""The central authority's directory of files, and what peers import from it.

Layout of the directory (default: ``default_authority_dir()``):

- ``authority.key`` — the authority's Ed25519 private key (JSON, mode 0600; ``init``
  refuses to overwrite it, every other operation refuses it if group or others may read);
- ``state.json`` — the issued users and peers, the revoked ones, the last list sequence;
- ``revocations.bin`` — the current signed revocation list (``revocation``).

``export()`` gives what peers need: the authority public key and the current signed
revocation list, in one JSON file that ``load_authority_export`` reads. The clock is
passed in (``now_ms``); only the command layer reads the system time.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pspam.auth.codec import DecodeError
from p2pspam.auth.credentials import (
    UserKey,
    check_user_id,
    key_id,
    load_public_key,
    new_user_key,
    public_bytes,
)
from p2pspam.auth.files import (
    b64,
    dump_json,
    json_document,
    read_bytes,
    read_secret,
    replace_file,
    unb64,
    write_new_secret,
)
from p2pspam.auth.revocation import RevocationList, decode_revocations, sign_revocations
from p2pspam.errors import InputError, ParameterError

KEY_FILE = "authority.key"
STATE_FILE = "state.json"
REVOCATIONS_FILE = "revocations.bin"
LOCK_FILE = ".lock"
KEY_FORMAT = "p2pspam-authority-key/1"
STATE_FORMAT = "p2pspam-authority-state/1"
EXPORT_FORMAT = "p2pspam-authority/1"
DAY_MS = 86_400_000
MAX_DAYS = 36_500


def default_authority_dir() -> Path:
    """Return the default authority directory (in the user's data directory)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("p2pspam")) / "authority"


@dataclass(frozen=True, slots=True)
class AuthorityExport:
    """What a peer is configured with: the authority public key (32 bytes) and the
    latest signed revocation list known to the exporter."""

    public_key: bytes
    revocations: bytes | None

    @property
    def key_id(self) -> bytes:
        """The 8-byte id of the authority key."""
        return key_id(self.public_key)

    def to_bytes(self) -> bytes:
        """Return the export file's content."""
        doc: dict[str, Any] = {
            "format": EXPORT_FORMAT,
            "public_key": b64(self.public_key),
            "key_id": self.key_id.hex(),
            "revocations": None if self.revocations is None else b64(self.revocations),
        }
        return dump_json(doc)


def load_authority_export(path: str | Path) -> AuthorityExport:
    """Read a file written by ``p2pspam authority export``; raise InputError if it is
    not one (the revocation list is only parsed here: verify it with ``VoteVerifier``)."""
    path = Path(path)
    doc = json_document(read_bytes(path, "authority file"), path, EXPORT_FORMAT)
    public_key = unb64(doc.get("public_key"), "public_key", path)
    try:
        load_public_key(public_key)
    except ParameterError as exc:
        raise InputError(f"{path}: {exc}") from None
    revocations = None
    if doc.get("revocations") is not None:
        revocations = unb64(doc["revocations"], "revocations", path)
        try:
            decode_revocations(revocations)
        except DecodeError as exc:
            raise InputError(f"{path}: malformed revocation list: {exc}") from None
    return AuthorityExport(public_key, revocations)


class Authority:
    """An authority directory opened for use (see the module docstring)."""

    def __init__(self, directory: Path, private_key: Ed25519PrivateKey) -> None:
        self.directory = directory
        self._key = private_key
        self._state = self._read_state()

    # -- creation and opening -------------------------------------------------------------

    @classmethod
    def init(cls, directory: str | Path, now_ms: int) -> Authority:
        """Create a new authority in ``directory`` (created 0700 if missing); refuse when
        an authority key is already there."""
        directory = Path(directory)
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create {directory}: {exc.strerror}") from None
        key = Ed25519PrivateKey.generate()
        doc = {
            "format": KEY_FORMAT,
            "private_key": b64(key.private_bytes_raw()),
            "public_key": b64(public_bytes(key)),
            "created_ms": now_ms,
        }
        write_new_secret(directory / KEY_FILE, dump_json(doc))
        state = {
            "format": STATE_FORMAT,
            "users": {},
            "peers": {},
            "revoked_users": {},
            "revoked_peers": {},
            "sequence": 0,
        }
        replace_file(directory / STATE_FILE, dump_json(state), 0o600)
        authority = cls(directory, key)
        with authority._changing():
            authority._sign_revocations(now_ms)
        return authority

    @classmethod
    def open(cls, directory: str | Path) -> Authority:
        """Open the authority in ``directory``; raise InputError if there is none or its
        key file is readable by others."""
        directory = Path(directory)
        path = directory / KEY_FILE
        if not path.exists():
            raise InputError(
                f"no authority in {directory}; create one with: "
                f"p2pspam authority init --dir {directory}"
            )
        doc = json_document(read_secret(path, "authority key"), path, KEY_FORMAT)
        raw = unb64(doc.get("private_key"), "private_key", path)
        if len(raw) != 32:
            raise InputError(f"{path}: the private key must be 32 bytes")
        return cls(directory, Ed25519PrivateKey.from_private_bytes(raw))

    # -- state ----------------------------------------------------------------------------

    def _read_state(self) -> dict[str, Any]:
        path = self.directory / STATE_FILE
        doc = json_document(read_bytes(path, "authority state"), path, STATE_FORMAT)
        for name in ("users", "peers", "revoked_users", "revoked_peers"):
            if not isinstance(doc.get(name), dict):
                raise InputError(f"{path}: {name} must be a JSON object")
        if type(doc.get("sequence")) is not int or doc["sequence"] < 0:
            raise InputError(f"{path}: sequence must be a non-negative integer")
        return doc

    def _write_state(self) -> None:
        replace_file(self.directory / STATE_FILE, dump_json(self._state), 0o600)

    @contextlib.contextmanager
    def _changing(self) -> Iterator[dict[str, Any]]:
        """Hold the directory's lock, re-read the state, and write it back on success:
        two commands run at once never lose an entry or reuse a list sequence."""
        try:
            fd = os.open(self.directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise InputError(f"cannot lock {self.directory}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._state = self._read_state()
            yield self._state
            self._write_state()
        finally:
            os.close(fd)

    @property
    def private_key(self) -> Ed25519PrivateKey:
        """The authority's signing key."""
        return self._key

    @property
    def public_key(self) -> bytes:
        """The authority's 32-byte public key."""
        return public_bytes(self._key)

    @property
    def key_id(self) -> bytes:
        """The 8-byte id of the authority key (carried in every credential)."""
        return key_id(self.public_key)

    # -- users ----------------------------------------------------------------------------

    def issue(self, user_id: str, days: int, now_ms: int) -> UserKey:
        """Create a key pair and a credential valid ``days`` days from ``now_ms`` for
        ``user_id`` (a user may hold several; a revoked user gets none)."""
        check_user_id(user_id)
        check_days(days)
        user = new_user_key(self._key, user_id, now_ms, now_ms + days * DAY_MS)
        entry = {
            "public_key": user.credential.public_key.hex(),
            "not_before_ms": user.credential.not_before_ms,
            "not_after_ms": user.credential.not_after_ms,
        }
        with self._changing() as state:
            if user_id in state["revoked_users"]:
                raise InputError(f"user {user_id!r} is revoked; choose another user id")
            state["users"].setdefault(user_id, []).append(entry)
        return user

    def revoke(self, user_id: str, now_ms: int) -> RevocationList:
        """Add ``user_id`` to the revocation list and sign a new list."""
        with self._changing() as state:
            if user_id not in state["users"]:
                raise InputError(f"unknown user {user_id!r}: this authority never issued it")
            if user_id in state["revoked_users"]:
                raise InputError(f"user {user_id!r} is already revoked")
            state["revoked_users"][user_id] = now_ms
            return self._sign_revocations(now_ms)

    def users(self) -> list[dict[str, Any]]:
        """Return one row per issued user: user_id, credentials, latest expiry, revoked_ms."""
        rows = []
        for user_id, entries in sorted(self._state["users"].items()):
            rows.append(
                {
                    "user_id": user_id,
                    "credentials": len(entries),
                    "not_after_ms": max(e["not_after_ms"] for e in entries),
                    "revoked_ms": self._state["revoked_users"].get(user_id),
                }
            )
        return rows

    # -- peers (closed federation) --------------------------------------------------------

    def record_peer(
        self, node_name: str, node_id: bytes, public_key: bytes, not_after_ms: int
    ) -> None:
        """Remember a peer credential issued for ``node_name``."""
        entry = {
            "node_id": node_id.hex(),
            "public_key": public_key.hex(),
            "not_after_ms": not_after_ms,
        }
        with self._changing() as state:
            if node_name in state["revoked_peers"]:
                raise InputError(f"peer {node_name!r} is revoked; choose another node name")
            state["peers"].setdefault(node_name, []).append(entry)

    def revoke_peer(self, node_name: str, now_ms: int) -> RevocationList:
        """Revoke every node id issued to ``node_name`` and sign a new list."""
        with self._changing() as state:
            if node_name not in state["peers"]:
                raise InputError(f"unknown peer {node_name!r}: this authority never issued it")
            if node_name in state["revoked_peers"]:
                raise InputError(f"peer {node_name!r} is already revoked")
            state["revoked_peers"][node_name] = now_ms
            return self._sign_revocations(now_ms)

    def peers(self) -> list[dict[str, Any]]:
        """Return one row per issued peer: node_name, node_ids, latest expiry, revoked_ms."""
        return [
            {
                "node_name": name,
                "node_ids": [e["node_id"] for e in entries],
                "not_after_ms": max(e["not_after_ms"] for e in entries),
                "revoked_ms": self._state["revoked_peers"].get(name),
            }
            for name, entries in sorted(self._state["peers"].items())
        ]

    # -- revocations and export -----------------------------------------------------------

    def _sign_revocations(self, now_ms: int) -> RevocationList:
        """Sign the next revocation list (call with the lock held, in ``_changing``)."""
        nodes = {
            bytes.fromhex(e["node_id"])
            for name in self._state["revoked_peers"]
            for e in self._state["peers"].get(name, [])
        }
        sequence = self._state["sequence"] + 1
        signed = sign_revocations(
            self._key, sequence, now_ms, set(self._state["revoked_users"]), nodes
        )
        # The list is written before the state: a crash in between re-signs the same
        # sequence later, never reuses a sequence for a different published list.
        replace_file(self.directory / REVOCATIONS_FILE, signed.encode(), 0o644)
        self._state["sequence"] = sequence
        return signed

    def revocations(self) -> bytes:
        """Return the current signed revocation list."""
        return read_bytes(self.directory / REVOCATIONS_FILE, "revocation list")

    def export(self) -> AuthorityExport:
        """Return what peers need: the public key and the current revocation list."""
        return AuthorityExport(self.public_key, self.revocations())


def check_days(days: int) -> None:
    """Raise ParameterError unless 1 <= days <= MAX_DAYS."""
    if type(days) is not int or not 1 <= days <= MAX_DAYS:
        raise ParameterError(f"--days must be 1..{MAX_DAYS}, got {days}")


def file_mode(path: Path) -> int:
    """Return the permission bits of ``path``."""
    return os.stat(path).st_mode & 0o777

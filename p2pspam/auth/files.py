"""Small file helpers for key material: create-only secret files, permission checks,
atomic replacement of public state, and JSON documents with base64 binary fields."""

from __future__ import annotations

import base64
import binascii
import json
import os
import stat
from pathlib import Path
from typing import Any

from p2pspam.errors import InputError

SECRET_MODE = 0o600


def write_new_secret(path: Path, data: bytes) -> None:
    """Create ``path`` with mode 0600 holding ``data``; refuse to overwrite anything."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, SECRET_MODE)
    except FileExistsError:
        raise InputError(f"{path} exists already; refusing to overwrite it") from None
    except OSError as exc:
        raise InputError(f"cannot create {path}: {exc.strerror}") from None
    try:
        os.fchmod(fd, SECRET_MODE)  # the umask may only have removed bits; be explicit
        with os.fdopen(fd, "wb") as out:
            fd = -1
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        if fd >= 0:
            os.close(fd)
        path.unlink(missing_ok=True)
        raise


def replace_file(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Atomically replace ``path`` with ``data`` (write a sibling, fsync, rename)."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InputError(f"cannot write {path}: {exc.strerror}") from None


def read_secret(path: Path, what: str) -> bytes:
    """Return the bytes of a secret file; refuse one that group or others may access."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise InputError(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{what} {path} is not a regular file")
    if st.st_mode & 0o077:
        raise InputError(
            f"{what} {path} is accessible by group or others (mode "
            f"{stat.S_IMODE(st.st_mode):04o}); run: chmod 600 {path}"
        )
    return read_bytes(path, what)


def read_bytes(path: Path, what: str) -> bytes:
    """Return the bytes of ``path`` or raise InputError naming ``what`` it should be."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{what} {path} is a directory") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror}") from None


def b64(data: bytes) -> str:
    """Return ``data`` as standard base64 text."""
    return base64.b64encode(data).decode("ascii")


def unb64(text: Any, what: str, path: Path) -> bytes:
    """Decode a base64 field of a JSON document, with an error naming the file."""
    if not isinstance(text, str):
        raise InputError(f"{path}: {what} must be base64 text")
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise InputError(f"{path}: {what} is not valid base64") from None


def json_document(data: bytes, path: Path, expected_format: str) -> dict[str, Any]:
    """Parse a JSON object whose ``format`` field must equal ``expected_format``."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise InputError(f"{path} is not a {expected_format} file (not JSON)") from None
    if not isinstance(doc, dict) or doc.get("format") != expected_format:
        raise InputError(f"{path} is not a {expected_format} file")
    return doc


def dump_json(doc: dict[str, Any]) -> bytes:
    """Return a JSON document as UTF-8 bytes with a final newline."""
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8")

"""Reading messages from the places users keep them: files, directories, mbox, Maildir,
stdin. Every source yields either a message or a one-line reason it could not be read."""

from __future__ import annotations

import mailbox
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # larger "messages" are refused, not read into memory


@dataclass(frozen=True, slots=True)
class RawMessage:
    """One message's bytes and where it came from (``path``, ``path:N`` for mbox)."""

    source: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Unreadable:
    """An input that could not be read, with the reason."""

    source: str
    reason: str


def is_maildir(path: Path) -> bool:
    """Return True when ``path`` is a Maildir (has cur/, new/ and tmp/)."""
    return all((path / sub).is_dir() for sub in ("cur", "new", "tmp"))


def looks_like_mbox(path: Path) -> bool:
    """Return True when the file starts with an mbox ``From `` line."""
    try:
        with path.open("rb") as handle:
            return handle.read(5) == b"From "
    except OSError:
        return False


def _read_file(path: Path, source: str) -> RawMessage | Unreadable:
    try:
        size = path.stat().st_size
        if size > MAX_MESSAGE_BYTES:
            return Unreadable(source, f"larger than {MAX_MESSAGE_BYTES} bytes ({size})")
        return RawMessage(source, path.read_bytes())
    except OSError as exc:
        return Unreadable(source, exc.strerror or str(exc))


def _iter_mbox(path: Path) -> Iterator[RawMessage | Unreadable]:
    try:
        box = mailbox.mbox(path, create=False)
        keys = box.keys()
    except (OSError, mailbox.Error) as exc:
        yield Unreadable(str(path), f"cannot read mbox: {exc}")
        return
    for index, key in enumerate(keys):
        source = f"{path}:{index}"
        try:
            yield RawMessage(source, box.get_bytes(key))
        except (OSError, KeyError, mailbox.Error) as exc:
            yield Unreadable(source, f"cannot read mbox message: {exc}")


def _iter_maildir(path: Path) -> Iterator[RawMessage | Unreadable]:
    for sub in ("new", "cur"):
        for entry in sorted((path / sub).iterdir()):
            if entry.is_file() and not entry.name.startswith("."):
                yield _read_file(entry, str(entry))


def _iter_directory(path: Path) -> Iterator[RawMessage | Unreadable]:
    for root, dirs, files in os.walk(path):
        dirs.sort()
        here = Path(root)
        if is_maildir(here):
            yield from _iter_maildir(here)
            dirs[:] = [d for d in dirs if d not in ("cur", "new", "tmp")]
            continue
        for name in sorted(files):
            if name.startswith("."):
                continue
            yield from _iter_file(here / name)


def _iter_file(path: Path) -> Iterator[RawMessage | Unreadable]:
    if looks_like_mbox(path):
        yield from _iter_mbox(path)
    else:
        yield _read_file(path, str(path))


def iter_messages(inputs: list[str]) -> Iterator[RawMessage | Unreadable]:
    """Yield every message of every input: ``-`` (stdin, one message), a file of one
    message, an mbox file, a Maildir, or a directory of any of these."""
    for spec in inputs:
        if spec == "-":
            data = sys.stdin.buffer.read(MAX_MESSAGE_BYTES + 1)
            if len(data) > MAX_MESSAGE_BYTES:
                yield Unreadable("-", f"larger than {MAX_MESSAGE_BYTES} bytes")
            else:
                yield RawMessage("-", data)
            continue
        path = Path(spec)
        if not path.exists():
            yield Unreadable(spec, "no such file or directory")
        elif path.is_dir():
            if is_maildir(path):
                yield from _iter_maildir(path)
            else:
                yield from _iter_directory(path)
        elif path.is_file():
            yield from _iter_file(path)
        else:
            yield Unreadable(spec, "not a regular file, directory or mailbox")

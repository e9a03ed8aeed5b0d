"""Adding the X-P2PSpam-* headers to a message without touching anything else (pure).

The new header lines go first in the header block (after an mbox ``From `` envelope line
if there is one), written with the message's own line ending; every original byte
follows unchanged. Values are folded to one printable ASCII line.
"""

from __future__ import annotations

import re

from agent.verdicts import SPAM, UNKNOWN, Verdict

_UNSAFE = re.compile(r"[^\x20-\x7e]+")
MAX_REASON = 200


def safe_value(text: str) -> str:
    """``text`` as one printable ASCII line (other characters become spaces)."""
    return " ".join(_UNSAFE.sub(" ", text).split())[:MAX_REASON]


def verdict_headers(verdict: Verdict | None, failure: str | None = None) -> list[tuple[str, str]]:
    """The (name, value) headers for a verdict, or for a failure reason."""
    if verdict is None or failure is not None:
        reason = safe_value(failure or "no verdict")
        return [("X-P2PSpam-Status", f"Unknown ({reason})")]
    if verdict.status == UNKNOWN:
        status = f"Unknown ({safe_value(verdict.reason or 'no verdict')})"
    else:
        status = "Yes" if verdict.status == SPAM else "No"
    m = verdict.match
    if m is None:
        score = f"overlap=0/{verdict.features} thres={verdict.thres}"
        match = "none"
    else:
        votes = "selftest" if m.selftest else f"spam={m.spam} ham={m.ham}"
        score = f"overlap={m.overlap}/{verdict.features} thres={verdict.thres} {votes}"
        match = f"{m.guid.hex()} ({verdict.status})"
    scheme = verdict.namespace or verdict.scheme
    if scheme:
        score += f" scheme={safe_value(scheme)}"
    return [("X-P2PSpam-Status", status), ("X-P2PSpam-Score", score), ("X-P2PSpam-Match", match)]


def _line_ending(raw: bytes) -> bytes:
    end = raw.find(b"\n")
    return b"\r\n" if end > 0 and raw[end - 1 : end] == b"\r" else b"\n"


def add_headers(raw: bytes, headers: list[tuple[str, str]]) -> bytes:
    """Return ``raw`` with ``headers`` inserted at the top of its header block."""
    eol = _line_ending(raw)
    block = b"".join(f"{n}: {v}".encode("ascii") + eol for n, v in headers)
    if raw.startswith(b"From "):
        end = raw.find(b"\n")
        if end >= 0:
            return raw[: end + 1] + block + raw[end + 1 :]
    return block + raw

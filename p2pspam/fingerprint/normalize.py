"""From raw RFC 5322 bytes (or plain text) to the canonical text that schemes fingerprint.

The exact rules are in ``docs/fingerprint-spec.md``; change them only together with the
spec version, or agents written against the old rules stop matching.

Parsing uses the standard ``email`` package with the ``compat32`` policy. The modern
``email.policy.default`` parses every structured header it touches through the header
registry, which measured 370 us per 5 KB message here, five times our whole
per-message budget; we read only Content-Type, Content-Transfer-Encoding and
Content-Disposition, whose parameters ``compat32`` parses the same way.
"""

from __future__ import annotations

import codecs
import email
import email.message
import re
import unicodedata
from dataclasses import dataclass
from email import policy

from p2pspam.fingerprint.html import html_to_text

# Code points removed before anything else: C0/C1 controls other than whitespace, and
# the invisible "default ignorable" characters spammers use to break up words.
_IGNORABLE = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff"
    "\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
_ASCII_IGNORABLE = {c: None for c in [*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F]}

NOTE_NO_TEXT_BODY = "no text body"


@dataclass(frozen=True, slots=True)
class CanonicalBody:
    """The canonical text of a message body and, when it has none, why."""

    text: str
    note: str | None = None


def canonical_text(text: str) -> str:
    """Return the canonical form of already-decoded text: ignorable code points removed,
    NFKC, case-folded, NFKC again, every run of whitespace folded to one space, trimmed."""
    if text.isascii():
        text = text.translate(_ASCII_IGNORABLE).lower()
    else:
        text = _IGNORABLE.sub("", text)
        text = unicodedata.normalize("NFKC", text).casefold()
        text = unicodedata.normalize("NFKC", text)  # case folding can denormalise
    return " ".join(text.split())


def decode_bytes(payload: bytes, charset: str | None) -> str:
    """Decode a body part: its declared charset when Python knows it (bad bytes become
    U+FFFD), otherwise UTF-8 when valid, otherwise Windows-1252 with replacement."""
    if charset:
        try:
            codec = codecs.lookup(charset.strip().strip('"').lower()).name
        except (LookupError, ValueError):
            codec = None
        if codec is not None:
            try:
                return payload.decode(codec, errors="replace")
            except (UnicodeError, ValueError, TypeError):
                pass
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError:
        return payload.decode("cp1252", errors="replace")


def _is_attachment(part: email.message.Message) -> bool:
    disposition = part.get("Content-Disposition")
    if disposition is None:
        return False
    return str(disposition).split(";", 1)[0].strip().lower() == "attachment"


def _leaf_text(part: email.message.Message) -> str | None:
    ctype = part.get_content_type()
    if ctype not in ("text/plain", "text/html") or _is_attachment(part):
        return None
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return None
    try:
        charset = part.get_content_charset()
    except (LookupError, ValueError, TypeError):
        charset = None
    text = decode_bytes(payload, charset)
    return html_to_text(text) if ctype == "text/html" else text


def _collect(part: email.message.Message, out: list[str], depth: int) -> None:
    if depth > 32:  # hostile nesting: stop descending
        return
    if part.get_content_maintype() == "message":
        payload = part.get_payload()
        if isinstance(payload, list):
            for inner in payload:
                if isinstance(inner, email.message.Message):
                    _collect(inner, out, depth + 1)
        return
    if not part.is_multipart():
        text = _leaf_text(part)
        if text is not None:
            out.append(text)
        return
    children = [c for c in part.get_payload() if isinstance(c, email.message.Message)]
    if part.get_content_subtype() == "alternative":
        # One rendering of the same content: plain text when it has any, else HTML,
        # else the richest (last) structured alternative.
        for wanted in ("text/plain", "text/html"):
            for child in children:
                if child.get_content_type() == wanted and not _is_attachment(child):
                    text = _leaf_text(child)
                    if text is not None and text.strip():
                        out.append(text)
                        return
        for child in reversed(children):
            before = len(out)
            _collect(child, out, depth + 1)
            if len(out) > before:
                return
        return
    for child in children:
        _collect(child, out, depth + 1)


def parse_message(raw: bytes) -> email.message.Message:
    """Parse raw RFC 5322 bytes the way the canonical text does (never raises)."""
    return email.message_from_bytes(raw, policy=policy.compat32)


def message_parts(message: email.message.Message) -> list[str]:
    """Return the decoded texts of the body parts that make up the canonical text, in
    order, before canonicalisation (lines and case kept; HTML rendered as text)."""
    parts: list[str] = []
    _collect(message, parts, 0)
    return parts


def body_parts(raw: bytes) -> list[str]:
    """Return ``message_parts`` of raw RFC 5322 bytes."""
    return message_parts(parse_message(raw))


def canonical_body(raw: bytes) -> CanonicalBody:
    """Return the canonical text of the body of an RFC 5322 message given as raw bytes.

    Headers are not part of it. Never raises on malformed mail: what cannot be decoded
    is replaced, and a message with no text part has an empty text and a note."""
    parts = body_parts(raw)
    if not parts:
        return CanonicalBody("", NOTE_NO_TEXT_BODY)
    text = canonical_text("\n".join(parts))
    if not text:
        return CanonicalBody("", NOTE_NO_TEXT_BODY)
    return CanonicalBody(text)


def canonical_body_of_text(text: str) -> CanonicalBody:
    """Return the canonical body of plain text that is not an RFC 5322 message."""
    canon = canonical_text(text)
    return CanonicalBody(canon, None if canon else NOTE_NO_TEXT_BODY)

"""The canonical body with normalisation defences applied.

``canonical_body`` (``p2pspam.fingerprint.normalize``) folds every part to one line, so
the stripping rules, which need lines, run on each decoded text part first. The MIME walk
below follows the same rules as ``normalize._collect`` (text parts, attachments skipped,
one rendering of ``multipart/alternative``), but HTML keeps a line break at every block
element. Whitespace is folded afterwards by the same ``canonical_text``, so with every
rule disabled the result is byte-identical to ``canonical_body`` (a test checks this).
"""

from __future__ import annotations

import email
import email.message
from email import policy

from selectolax.lexbor import LexborHTMLParser

from p2pspam.defences.strip import NO_STRIP, StripOptions, strip_boilerplate
from p2pspam.fingerprint.html import _BLOCKS, _DROPPED  # the same element sets
from p2pspam.fingerprint.normalize import (
    NOTE_NO_TEXT_BODY,
    CanonicalBody,
    canonical_body,
    canonical_text,
    decode_bytes,
)

_MAX_DEPTH = 32


def html_to_lines(html: str) -> str:
    """Return the visible text of HTML with a line break before every ``<br>`` and a
    blank line before every other block element (``html_to_text`` uses a space)."""
    tree = LexborHTMLParser(html)
    for node in tree.css(_DROPPED):
        node.decompose()
    for node in tree.css(_BLOCKS):
        node.insert_before("\n" if node.tag == "br" else "\n\n")
    root = tree.body if tree.body is not None else tree.root
    return "" if root is None else root.text(separator="")


def _is_attachment(part: email.message.Message) -> bool:
    disposition = part.get("Content-Disposition")
    return disposition is not None and str(disposition).split(";", 1)[0].strip().lower() == (
        "attachment"
    )


def _leaf(part: email.message.Message) -> str | None:
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
    return html_to_lines(text) if ctype == "text/html" else text


def _collect(part: email.message.Message, out: list[str], depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    if part.get_content_maintype() == "message":
        payload = part.get_payload()
        if isinstance(payload, list):
            for inner in payload:
                if isinstance(inner, email.message.Message):
                    _collect(inner, out, depth + 1)
        return
    if not part.is_multipart():
        text = _leaf(part)
        if text is not None:
            out.append(text)
        return
    children = [c for c in part.get_payload() if isinstance(c, email.message.Message)]
    if part.get_content_subtype() == "alternative":
        for wanted in ("text/plain", "text/html"):
            for child in children:
                if child.get_content_type() == wanted and not _is_attachment(child):
                    text = _leaf(child)
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


LIST_HEADERS = ("List-Id", "List-Unsubscribe", "List-Post")


def decoded_parts(raw: bytes) -> list[str]:
    """Return the decoded text parts of a message, with their line structure."""
    message = email.message_from_bytes(raw, policy=policy.compat32)
    parts: list[str] = []
    _collect(message, parts, 0)
    return parts


def defended_body(raw: bytes, options: StripOptions) -> CanonicalBody:
    """Return the canonical body of raw RFC 5322 bytes after the enabled stripping rules
    (each text part stripped on its own; the last one knows whether the message carries
    list headers); never raises on malformed mail."""
    if not options.any:
        return canonical_body(raw)
    message = email.message_from_bytes(raw, policy=policy.compat32)
    listed = any(message.get(h) is not None for h in LIST_HEADERS)
    found: list[str] = []
    _collect(message, found, 0)
    last = len(found) - 1
    parts = [strip_boilerplate(p, options, listed and i == last) for i, p in enumerate(found)]
    text = canonical_text("\n".join(parts)) if parts else ""
    return CanonicalBody(text) if text else CanonicalBody("", NOTE_NO_TEXT_BODY)


__all__ = ["NO_STRIP", "decoded_parts", "defended_body", "html_to_lines"]

"""The canonical body with normalisation defences applied.

The stripping rules need lines, so they run on each decoded text part (from
``normalize.message_parts``, HTML rendered with a line break per block) before whitespace
is folded by the same ``canonical_text``; with every rule disabled the result is
byte-identical to ``canonical_body`` (a test checks this).
"""

from __future__ import annotations

from p2pspam.defences.strip import NO_STRIP, StripOptions, strip_boilerplate
from p2pspam.fingerprint.normalize import (
    NOTE_NO_TEXT_BODY,
    CanonicalBody,
    canonical_body,
    canonical_text,
    message_parts,
    parse_message,
)

LIST_HEADERS = ("List-Id", "List-Unsubscribe", "List-Post")


def defended_body(raw: bytes, options: StripOptions) -> CanonicalBody:
    """Return the canonical body of raw RFC 5322 bytes after the enabled stripping rules
    (each text part stripped on its own; the last one knows whether the message carries
    list headers); never raises on malformed mail."""
    if not options.any:
        return canonical_body(raw)
    message = parse_message(raw)
    listed = any(message.get(h) is not None for h in LIST_HEADERS)
    found = message_parts(message)
    last = len(found) - 1
    parts = [strip_boilerplate(p, options, listed and i == last) for i, p in enumerate(found)]
    text = canonical_text("\n".join(parts)) if parts else ""
    return CanonicalBody(text) if text else CanonicalBody("", NOTE_NO_TEXT_BODY)


__all__ = ["NO_STRIP", "defended_body"]

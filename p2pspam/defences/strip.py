"""Normalisation defences: drop quoted reply text, signature blocks and recognisable
mailing-list / newsletter / disclaimer footers before a body is fingerprinted.

These rules work on decoded text that still has its line structure (canonical text has
none). Footers are only recognised at the end of a message: a block that starts at a
separator line (``____``, ``----``, ``-- Sponsor --~-->``) or a trailing paragraph, short
(at most ``MAX_FOOTER_LINES`` lines) and containing a footer phrase. Quoted text is
dropped only when enough of the author's own text remains (``MIN_OWN_CHARS``), so a spam
written entirely as a quotation is not emptied by its own quoting.
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass

MAX_FOOTER_LINES = 12
MAX_SIGNATURE_LINES = 15
MIN_OWN_CHARS = 50
MAX_FOOTER_BLOCKS = 6  # stacked footers (sponsor banner, list footer, disclaimer)

_SEPARATOR = re.compile(r"^\s*(?:[-_=~*#+]{5,}.*[-_=~*#+>]{3,}|[-_=~*#+]{5,})\s*$")
_SIGNATURE = re.compile(r"^--\s*$")
_QUOTED = re.compile(r"^\s*(?:>|\|\s)")
_ATTRIBUTION = re.compile(
    r"^\s*(?:on\b.{0,200}\b(?:wrote|writes)|.{0,120}\b(?:wrote|writes|schrieb|a écrit)):?\s*$",
    re.IGNORECASE,
)
_ATTRIBUTION_ENDINGS = (
    "wrote",
    "wrote:",
    "writes",
    "writes:",
    "schrieb",
    "schrieb:",
    "écrit",
    "écrit:",
)
_ORIGINAL = re.compile(r"^\s*-{2,}\s*original message\s*-{2,}\s*$", re.IGNORECASE)
_FOOTER_PHRASES = re.compile(
    "|".join(
        (
            r"mailing list",
            r"listinfo",
            r"unsubscribe",
            r"subscription",
            r"list archives?",
            r"you received this message because",
            r"to view this discussion",
            r"for additional commands",
            r"\bsponsor",
            r"update (?:your|subscription) preferences",
            r"opted in",
            r"mailing address",
            r"automated message",
            r"do not reply to this (?:e-?mail|message)",
            r"privacy policy",
            r"intended (?:solely|only|recipient)",
            r"received this (?:e-?mail|message|communication) (?:in error|by mistake)",
            r"\bconfidential",
            r"disclaimer",
            r"before printing this",
        )
    )
)  # matched against lower-cased text


@dataclass(frozen=True, slots=True)
class StripOptions:
    """Which normalisation defences run."""

    quotes: bool = True
    signatures: bool = True
    footers: bool = True

    @property
    def any(self) -> bool:
        """True when at least one rule runs."""
        return self.quotes or self.signatures or self.footers


NO_STRIP = StripOptions(False, False, False)


def _trim(lines: list[str]) -> list[str]:
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    return lines[:end]


def _phrase_lines(lines: list[str]) -> list[bool]:
    """For each line: does a footer phrase start on it (possibly wrapped to the next)?"""
    flags = [False] * len(lines)
    if not lines:
        return flags
    # One pass over the block; line breaks read as spaces, so wrapped phrases are found.
    text = " ".join(lines).lower()
    ends = list(itertools.accumulate(len(line) + 1 for line in lines))
    for found in _FOOTER_PHRASES.finditer(text):
        flags[bisect.bisect_right(ends, found.start())] = True
    return flags


def _footer_start(lines: list[str], phrases: list[bool]) -> int | None:
    """Return where a trailing footer block starts, or None."""
    n = len(lines)
    found = False  # a phrase at or after ``start``
    for start in range(n - 1, max(-1, n - 1 - MAX_FOOTER_LINES), -1):
        found = found or phrases[start]
        if found and _SEPARATOR.match(lines[start]):
            return start
    start = n
    while start and lines[start - 1].strip():
        start -= 1
    if 0 < n - start <= MAX_FOOTER_LINES and any(phrases[start:n]):
        return start
    return None


def strip_footers(lines: list[str]) -> list[str]:
    """Drop recognisable footer blocks from the end of a message, innermost last."""
    lines = _trim(lines)
    tail = max(0, len(lines) - MAX_FOOTER_LINES * MAX_FOOTER_BLOCKS - 1)
    phrases = [False] * tail + _phrase_lines(lines[tail:])
    for _ in range(MAX_FOOTER_BLOCKS):
        start = _footer_start(lines, phrases)
        if start is None:
            break
        lines = _trim(lines[:start])
    return lines


def strip_trailer(lines: list[str]) -> list[str]:
    """Drop the last paragraph (the footer a list server or bulk sender appends) when it
    has at most ``MAX_FOOTER_LINES`` lines and at least ``MIN_OWN_CHARS`` characters of
    text remain above it."""
    lines = _trim(lines)
    start = len(lines)
    while start and lines[start - 1].strip():
        start -= 1
    kept = _trim(lines[:start])
    if not 0 < len(lines) - start <= MAX_FOOTER_LINES:
        return lines
    return kept if sum(len(x.strip()) for x in kept) >= MIN_OWN_CHARS else lines


def strip_signature(lines: list[str]) -> list[str]:
    """Drop the block after the last ``-- `` line when it is signature-sized."""
    for i in range(len(lines) - 1, max(-1, len(lines) - 2 - MAX_SIGNATURE_LINES), -1):
        if _SIGNATURE.match(lines[i]):
            return _trim(lines[:i])
    return lines


def strip_quotes(lines: list[str]) -> list[str]:
    """Drop quoted lines, their attribution lines and Outlook ``Original Message``
    blocks, unless less than ``MIN_OWN_CHARS`` characters of own text would remain."""
    out: list[str] = []
    for i, line in enumerate(lines):
        if _ORIGINAL.match(line):
            break
        if _QUOTED.match(line):
            continue
        if (
            line.rstrip().lower().endswith(_ATTRIBUTION_ENDINGS)
            and _ATTRIBUTION.match(line)
            and any(_QUOTED.match(x) for x in lines[i + 1 : i + 3])
        ):
            continue
        out.append(line)
    own = sum(len(x.strip()) for x in out)
    return _trim(out) if own >= MIN_OWN_CHARS else lines


def strip_boilerplate(text: str, options: StripOptions, listed: bool = False) -> str:
    """Return ``text`` without the parts the enabled rules recognise as boilerplate.

    ``listed``: the text ends a message that carries list headers (``List-Id``,
    ``List-Unsubscribe``, ``List-Post``), so a list server or bulk sender appended a
    footer: when no footer rule recognises it, its last paragraph is taken as the footer
    (``strip_trailer``)."""
    if not options.any:
        return text
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if options.footers:
        before = len(_trim(lines))
        lines = strip_footers(lines)
        if listed and len(lines) == before:
            lines = strip_trailer(lines)
    if options.signatures:
        lines = strip_signature(lines)
    if options.quotes:
        lines = strip_quotes(lines)
    if options.footers:
        lines = strip_footers(lines)  # a footer above a signature or a quotation
    return "\n".join(lines)

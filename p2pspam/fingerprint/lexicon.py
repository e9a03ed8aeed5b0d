"""The I-Match lexicons, derived from ``wordfreq``'s English "large" word list.

A term is a lowercase alphanumeric word of 4+ characters with at most one decimal digit. With
Zipf(t) = log10(frequency per 10^9 words) as wordfreq reports it:

(wordfreq stores words in buckets of 0.01 Zipf; the bounds are bucket bounds)

- stop band: Zipf >= 5.0 (ignored: not part of a document's U);
- primary lexicon L: 4.5 <= Zipf < 5.0 (the mid-frequency band);
- secondary lexicon B: 2.0 <= Zipf < 4.5, ranked by decreasing frequency (ties: by code
  points).

The band is the paper's email lexicon, normalised idf in [0.2, 0.3] over a news corpus of
556,000 documents of 662 terms on average, carried over to word frequencies with a Poisson
model: idf = nidf * ln(556000) gives a document frequency e^-idf of 7.1 % .. 1.9 %, and
1 - exp(-662 f) = df gives f = 1.1e-4 .. 2.9e-5, i.e. Zipf 5.0 .. 4.5 (docs/schemes/imatch.md).

Everything is derived once per process, lazily, from the installed wordfreq data. The
digest of the derived lists names the lexicon in the scheme namespace, so agents whose
wordfreq data differ never compare signatures.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import re
from dataclasses import dataclass

STOP_ZIPF = 5.0
PRIMARY_MIN_ZIPF = 4.5
SECONDARY_MIN_ZIPF = 2.0
WORDLIST = "large"

_WORD = re.compile(r"[^\W_]+")
# 4+ word characters other than "_", at most one of them a decimal digit (Unicode Nd)
_TERM = re.compile(r"(?=[^\W_]{4})[^\W\d_]*(?:\d[^\W\d_]*)?")


def is_term(word: str) -> bool:
    """Return True for a lowercase alphanumeric word of 4+ characters with <= 1 digit."""
    return _TERM.fullmatch(word) is not None and word == word.lower()


def document_terms(text: str) -> set[str]:
    """Return the unique terms of canonical (already case-folded) text."""
    words = set(_WORD.findall(text))
    # letters only (str.isalpha, a fast path) or the full rule
    return {w for w in words if len(w) >= 4 and (w.isalpha() or _TERM.fullmatch(w))}


@dataclass(frozen=True, slots=True)
class Lexicons:
    """The stop band, the primary lexicon and the ranked secondary lexicon."""

    stop: frozenset[str]
    primary: frozenset[str]
    secondary_rank: dict[str, int]
    digest: str
    wordfreq_version: str


def _bucket(zipf: float) -> int:
    return round((9.0 - zipf) * 100)


@functools.cache
def lexicons() -> Lexicons:
    """Return the lexicons (derived on first use, then shared by the process)."""
    import wordfreq

    # Bucket i of wordfreq's frequency list holds the words of frequency 10^(-i/100),
    # i.e. Zipf = 9 - i/100: integer bucket bounds make the bands exact.
    buckets = wordfreq.get_frequency_list("en", WORDLIST)
    stop: list[str] = []
    primary: list[str] = []
    secondary: list[tuple[int, str]] = []
    for index, words in enumerate(buckets[: _bucket(SECONDARY_MIN_ZIPF) + 1]):
        zipf_centi = 900 - index
        for word in words:
            if not is_term(word):
                continue
            if zipf_centi >= round(STOP_ZIPF * 100):
                stop.append(word)
            elif zipf_centi >= round(PRIMARY_MIN_ZIPF * 100):
                primary.append(word)
            else:
                secondary.append((index, word))
    secondary.sort()
    ranked = [w for _, w in secondary]
    digest = hashlib.sha256()
    for name, words in (("stop", sorted(stop)), ("L", sorted(primary)), ("B", ranked)):
        digest.update(f"{name}\0{len(words)}\0".encode())
        digest.update("\n".join(words).encode("utf-8"))
    return Lexicons(
        stop=frozenset(stop),
        primary=frozenset(primary),
        secondary_rank={w: i for i, w in enumerate(ranked)},
        digest=digest.hexdigest()[:16],
        wordfreq_version=importlib.metadata.version("wordfreq"),
    )

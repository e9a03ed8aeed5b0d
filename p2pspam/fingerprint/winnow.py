"""Winnowing over word pairs (Nguyen The Huy, *Elimination of Redundant Emails*, NUS 2007);
spec: docs/schemes/winnow.md.

Words are the maximal runs of letters and digits of the canonical text (every other
character is a delimiter: the thesis's punctuation-and-whitespace list, generalised to
Unicode); the thesis's stop words are dropped. Word i is hashed together with its successor
(the last word with the empty string): h_i = first 8 bytes of SHA-256("p2pspam/winnow/1\\0"
+ w_i + "\\0" + w_{i+1}). Winnowing with window w keeps, in every window of w consecutive
hashes, the minimum (the rightmost on ties), each position once; a text with fewer than w
hashes keeps its minimum. Fingerprints are compared as sets: containment(A, B) =
|F_A ∩ F_B| / |F_A|, resemblance = (containment(A, B) + containment(B, A)) / 2.

The thesis gives each word a dictionary-assigned odd number and hashes pairs as a*x + b*y;
that numbering depends on the collection, so two agents would disagree. A 64-bit
cryptographic hash of the pair keeps the "pair -> hash" property across agents.

As a network scheme the vector is the ``count`` smallest distinct fingerprints (a bottom-k
sample of the winnowed set, so it estimates resemblance), and THRES = ⌈5 * count / 8⌉.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from p2pspam.fingerprint.normalize import CanonicalBody
from p2pspam.fingerprint.schemeparams import build_vector, int_param, reject_extra
from p2pspam.fingerprint.vector import FeatureVector

SCHEME_NAME = "winnow"
SPEC_VERSION = 1
DEFAULT_WINDOW = 3
DEFAULT_COUNT = 16
MAX_WINDOW = 100
MAX_COUNT = 64  # a vote carries at most 64 features (p2pspam.auth.votes.MAX_FEATURES)
# Figure 6 of the thesis, plus "dear", "ll" and "will", which section 5 adds.
_STOP_LIST = """the to and of a in from for on is that http an was www about hi hey
dear ll will"""
STOP_WORDS = frozenset(_STOP_LIST.split())
_WORD = re.compile(r"[^\W_]+")
_PREFIX = b"p2pspam/winnow/1\0"


def words(text: str) -> list[str]:
    """Return the words of canonical text with the stop words dropped."""
    return [w for w in _WORD.findall(text) if w not in STOP_WORDS]


def pair_hashes(word_list: Sequence[str]) -> list[int]:
    """Return h_i for each word and its successor (a single word: with "")."""
    if len(word_list) == 1:
        return [_pair_hash(word_list[0], "")]
    return [_pair_hash(a, b) for a, b in itertools.pairwise(word_list)]


def _pair_hash(word: str, following: str) -> int:
    data = _PREFIX + f"{word}\0{following}".encode()
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big")


def winnow(hashes: Sequence[int], window: int = DEFAULT_WINDOW) -> list[int]:
    """Return the winnowed hashes in selection order (rightmost minimum of every window,
    each position once; the minimum of all when there are fewer than ``window``)."""
    if not hashes:
        return []
    if len(hashes) < window:
        best = min(range(len(hashes)), key=lambda i: (hashes[i], i))
        return [hashes[best]]
    selected: list[int] = []
    last = -1
    for start in range(len(hashes) - window + 1):
        pos = start
        for i in range(start + 1, start + window):
            if hashes[i] <= hashes[pos]:
                pos = i
        if pos != last:
            selected.append(hashes[pos])
            last = pos
    return selected


def fingerprints(text: str, window: int = DEFAULT_WINDOW) -> frozenset[int]:
    """Return the set of winnowed word-pair fingerprints of canonical text."""
    return frozenset(winnow(pair_hashes(words(text)), window))


def containment(a: frozenset[int], b: frozenset[int]) -> float:
    """Return how much of A is inside B: |A ∩ B| / |A| (0 for an empty A)."""
    return len(a & b) / len(a) if a else 0.0


def resemblance(a: frozenset[int], b: frozenset[int]) -> float:
    """Return (containment(A, B) + containment(B, A)) / 2, as the thesis defines it."""
    return (containment(a, b) + containment(b, a)) / 2


@dataclass(frozen=True, slots=True)
class Redundant:
    """Message ``index`` is made redundant by message ``by`` (containment >= threshold)."""

    index: int
    by: int
    containment: float


def redundant_pairs(prints: Sequence[frozenset[int]], threshold: float = 0.95) -> list[Redundant]:
    """Return, for every message contained in another at >= ``threshold``, the one that
    contains it most (ties: the longer container, then the earlier). Of two messages that
    contain each other, only the later (or the shorter) one is reported."""
    owners: dict[int, list[int]] = {}
    for index, fps in enumerate(prints):
        for fp in fps:
            owners.setdefault(fp, []).append(index)
    result = []
    for index, fps in enumerate(prints):
        if not fps:
            continue
        shared: dict[int, int] = {}
        for fp in fps:
            for other in owners[fp]:
                if other != index:
                    shared[other] = shared.get(other, 0) + 1
        best: tuple[float, int, int] | None = None
        for other, count in shared.items():
            score = count / len(fps)
            if score < threshold or _keeps(index, other, prints, threshold):
                continue
            key = (score, len(prints[other]), -other)
            if best is None or key > best:
                best = key
        if best is not None:
            result.append(Redundant(index, -best[2], best[0]))
    return result


def _keeps(index: int, other: int, prints: Sequence[frozenset[int]], threshold: float) -> bool:
    """True when ``index`` is the one kept of two messages that contain each other."""
    if containment(prints[other], prints[index]) < threshold:
        return False
    mine, theirs = len(prints[index]), len(prints[other])
    return mine > theirs or (mine == theirs and index < other)


def bottom(prints: Iterable[int], count: int) -> list[int]:
    """Return the ``count`` smallest values, smallest first."""
    return sorted(prints)[:count]


@dataclass(frozen=True, slots=True)
class WinnowScheme:
    """Winnowed word pairs: the ``count`` smallest fingerprints, THRES = ⌈5 count / 8⌉."""

    window: int = DEFAULT_WINDOW
    count: int = DEFAULT_COUNT

    def __post_init__(self) -> None:
        int_param(SCHEME_NAME, "w", self.window, 1, MAX_WINDOW)
        int_param(SCHEME_NAME, "N", self.count, 1, MAX_COUNT)

    @property
    def name(self) -> str:
        """The scheme name carried with every vector."""
        return SCHEME_NAME

    @property
    def namespace(self) -> str:
        """The feature space (N only truncates the sample, so it is not part of it)."""
        return f"{SCHEME_NAME}/{SPEC_VERSION}/w={self.window}"

    @property
    def params(self) -> dict[str, int]:
        """The parameters that travel with every vector."""
        return {"w": self.window, "N": self.count}

    @property
    def default_thres(self) -> int:
        """Five eighths of the sample, rounded up: a bottom-k sample shares about
        resemblance * N values, and newsletters sharing a footer reach N / 2."""
        return max(1, -(-5 * self.count // 8))

    def vector(self, body: CanonicalBody) -> FeatureVector:
        """Return the feature vector of a canonical body."""
        features = bottom(fingerprints(body.text, self.window), self.count)
        note = None if features else "no words outside the stop list"
        return build_vector(SCHEME_NAME, self.namespace, self.params, body, features, note)

    def vectors(self, bodies: Sequence[CanonicalBody]) -> list[FeatureVector]:
        """Return the feature vectors of many canonical bodies."""
        return [self.vector(b) for b in bodies]


def make_winnow(w: Any = None, count: Any = None, N: Any = None, **extra: Any) -> WinnowScheme:
    """Build the scheme from CLI-style parameters: w (window), N or --count (sample)."""
    reject_extra(SCHEME_NAME, extra, "w, N (or --count)")
    kwargs: dict[str, int] = {}
    if w is not None:
        kwargs["window"] = int_param(SCHEME_NAME, "w", w, 1, MAX_WINDOW)
    size = N if N is not None else count
    if size is not None:
        kwargs["count"] = int_param(SCHEME_NAME, "N", size, 1, MAX_COUNT)
    return WinnowScheme(**kwargs)

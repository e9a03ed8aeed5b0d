"""I-Match with randomized lexicons (Kołcz & Chowdhury 2008); spec: docs/schemes/imatch.md.

A document's unique terms U (lexicon.py) are intersected with the primary lexicon L and
with K auxiliary lexicons L_1..L_K, each L minus a seeded random fraction p of its terms.
Lexicon k drops term t when the 16-bit value u_k(t), bytes 2k..2k+1 of
SHA-256("p2pspam/imatch/drop\\0" + seed + "\\0" + t), is below round(p * 65536): every
agent derives the same auxiliary lexicons without storing them. The secondary lexicon B
is perturbed the same way (paper, section 4).

Long-document fix (paper, section 3): U excludes the stop band; when |S_k| is below
``min_terms`` or |S_k| / |U| below ``min_ratio``, S_k is extended by the most frequent
terms of U ∩ B_k until neither is; a signature is rejected when that is not possible.

Signature k = first 8 bytes (big-endian) of SHA-256("p2pspam/imatch/1\\0" + k as one byte +
"\\0" + the sorted terms of S_k joined by "\\n"). The vector lists the signatures that were
not rejected, lexicon 0 (the original) first. Two documents are near duplicates when they
share one signature: THRES = 1.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from p2pspam.errors import ParameterError
from p2pspam.fingerprint.lexicon import document_terms, lexicons
from p2pspam.fingerprint.normalize import CanonicalBody
from p2pspam.fingerprint.schemeparams import build_vector, int_param, reject_extra
from p2pspam.fingerprint.vector import FeatureVector

SCHEME_NAME = "imatch"
SPEC_VERSION = 1
MAX_K = 31  # a 64-byte drop digest holds 32 16-bit values: lexicon 0 never drops
DEFAULT_K = 10
DEFAULT_P_PCT = 33
DEFAULT_MIN_TERMS = 5
DEFAULT_MIN_RATIO_PCT = 10
DEFAULT_SEED = 1
_DROP_PREFIX = b"p2pspam/imatch/drop\0"
_SIG_PREFIX = b"p2pspam/imatch/1\0"


@functools.lru_cache(maxsize=1 << 18)
def drop_values(term: str, seed: int) -> bytes:
    """Return the 64 bytes whose 16-bit words u_1..u_31 decide which lexicons drop
    ``term`` (word k is bytes 2k..2k+1, big-endian)."""
    data = _DROP_PREFIX + str(seed).encode() + b"\0" + term.encode("utf-8")
    return hashlib.sha512(data).digest()


def kept_in(term: str, lexicon: int, seed: int, p_pct: int) -> bool:
    """Return True when auxiliary lexicon ``lexicon`` (1..31; 0 is the original) keeps
    ``term``."""
    return not (drop_mask(term, seed, p_pct) >> lexicon) & 1


@functools.lru_cache(maxsize=1 << 18)
def drop_mask(term: str, seed: int, p_pct: int) -> int:
    """Return the bits k (1..31) of the auxiliary lexicons that drop ``term``."""
    values = drop_values(term, seed)
    bound = _drop_bound(p_pct)
    mask = 0
    for k in range(1, MAX_K + 1):
        if int.from_bytes(values[2 * k : 2 * k + 2], "big") < bound:
            mask |= 1 << k
    return mask


def _drop_bound(p_pct: int) -> int:
    return round(p_pct * 65536 / 100)


def signature(lexicon: int, terms: Sequence[str]) -> int:
    """Return the 64-bit signature of a set of terms under lexicon number ``lexicon``."""
    joined = "\n".join(sorted(set(terms))).encode("utf-8")
    digest = hashlib.sha256(_SIG_PREFIX + bytes([lexicon]) + b"\0" + joined).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True, slots=True)
class LexiconSelection:
    """The terms chosen for one lexicon, or why none were."""

    lexicon: int
    terms: tuple[str, ...]
    rejected: str | None


def select_terms(
    text: str,
    lexicons_count: int = DEFAULT_K,
    p_pct: int = DEFAULT_P_PCT,
    min_terms: int = DEFAULT_MIN_TERMS,
    min_ratio_pct: int = DEFAULT_MIN_RATIO_PCT,
    seed: int = DEFAULT_SEED,
) -> list[LexiconSelection]:
    """Return the term set S_k of each of the K + 1 lexicons for canonical text."""
    lex = lexicons()
    universe = {t for t in document_terms(text) if t not in lex.stop}
    primary = [t for t in universe if t in lex.primary]
    secondary = sorted(
        (t for t in universe if t in lex.secondary_rank), key=lex.secondary_rank.__getitem__
    )
    needed = max(min_terms, math.ceil(min_ratio_pct * len(universe) / 100))
    result = []
    masks = {t: drop_mask(t, seed, p_pct) for t in primary}
    for k in range(lexicons_count + 1):
        chosen = [t for t in primary if not (masks[t] >> k) & 1]
        if len(chosen) < needed:
            extra = (t for t in secondary if kept_in(t, k, seed, p_pct))
            chosen.extend(itertools.islice(extra, needed - len(chosen)))
        rejected = None
        if len(chosen) < needed:
            rejected = (
                f"{len(chosen)} lexicon terms of {len(universe)}, "
                f"fewer than {min_terms} or {min_ratio_pct}%"
            )
        result.append(LexiconSelection(k, tuple(sorted(chosen)), rejected))
    return result


def imatch_features(
    text: str,
    lexicons_count: int = DEFAULT_K,
    p_pct: int = DEFAULT_P_PCT,
    min_terms: int = DEFAULT_MIN_TERMS,
    min_ratio_pct: int = DEFAULT_MIN_RATIO_PCT,
    seed: int = DEFAULT_SEED,
) -> tuple[list[int], str | None]:
    """Return the extended I-Match signature of canonical text (rejected lexicons left
    out) and, when every lexicon was rejected, why."""
    selections = select_terms(text, lexicons_count, p_pct, min_terms, min_ratio_pct, seed)
    features = [signature(s.lexicon, s.terms) for s in selections if s.rejected is None]
    note = None if features else f"no I-Match signature: {selections[0].rejected}"
    return features, note


@dataclass(frozen=True, slots=True)
class IMatchScheme:
    """I-Match with K randomized lexicons (K + 1 signatures, THRES = 1)."""

    lexicons_count: int = DEFAULT_K
    p_pct: int = DEFAULT_P_PCT
    min_terms: int = DEFAULT_MIN_TERMS
    min_ratio_pct: int = DEFAULT_MIN_RATIO_PCT
    seed: int = DEFAULT_SEED
    default_thres: int = 1

    def __post_init__(self) -> None:
        int_param(SCHEME_NAME, "K", self.lexicons_count, 0, MAX_K)
        int_param(SCHEME_NAME, "p", self.p_pct, 1, 99)
        int_param(SCHEME_NAME, "min_terms", self.min_terms, 1, 1000)
        int_param(SCHEME_NAME, "min_ratio", self.min_ratio_pct, 0, 100)
        int_param(SCHEME_NAME, "seed", self.seed, 0, 2**32 - 1)

    @property
    def name(self) -> str:
        """The scheme name carried with every vector."""
        return SCHEME_NAME

    @property
    def namespace(self) -> str:
        """The feature space: the lexicon digest and every parameter that changes a
        signature (K only adds signatures, so it is not part of it)."""
        return (
            f"{SCHEME_NAME}/{SPEC_VERSION}/lex={lexicons().digest}/p={self.p_pct}"
            f"/seed={self.seed}/min={self.min_terms}/ratio={self.min_ratio_pct}"
        )

    @property
    def params(self) -> dict[str, int]:
        """The parameters that travel with every vector."""
        return {
            "K": self.lexicons_count,
            "p_pct": self.p_pct,
            "min_terms": self.min_terms,
            "min_ratio_pct": self.min_ratio_pct,
            "seed": self.seed,
        }

    def vector(self, body: CanonicalBody) -> FeatureVector:
        """Return the feature vector (the K + 1 signatures) of a canonical body."""
        features, note = imatch_features(
            body.text,
            self.lexicons_count,
            self.p_pct,
            self.min_terms,
            self.min_ratio_pct,
            self.seed,
        )
        return build_vector(SCHEME_NAME, self.namespace, self.params, body, features, note)

    def vectors(self, bodies: Sequence[CanonicalBody]) -> list[FeatureVector]:
        """Return the feature vectors of many canonical bodies."""
        return [self.vector(b) for b in bodies]


def make_imatch(
    K: Any = None,
    p: Any = None,
    min_terms: Any = None,
    min_ratio: Any = None,
    seed: Any = None,
    **extra: Any,
) -> IMatchScheme:
    """Build the scheme from CLI-style parameters: K, p (percent, or a fraction < 1),
    min_terms, min_ratio (percent, or a fraction < 1), seed."""
    reject_extra(SCHEME_NAME, extra, "K, p, min_terms, min_ratio, seed")
    kwargs: dict[str, int] = {}
    if K is not None:
        kwargs["lexicons_count"] = int_param(SCHEME_NAME, "K", K, 0, MAX_K)
    if p is not None:
        kwargs["p_pct"] = _percent("p", p)
    if min_terms is not None:
        kwargs["min_terms"] = int_param(SCHEME_NAME, "min_terms", min_terms, 1, 1000)
    if min_ratio is not None:
        kwargs["min_ratio_pct"] = _percent("min_ratio", min_ratio)
    if seed is not None:
        kwargs["seed"] = int_param(SCHEME_NAME, "seed", seed, 0, 2**32 - 1)
    return IMatchScheme(**kwargs)


def _percent(name: str, value: Any) -> int:
    """A fraction in (0, 1) becomes whole percent; an integer is taken as percent."""
    if isinstance(value, float) and 0 < value < 1:
        pct = value * 100
        if abs(pct - round(pct)) > 1e-9:
            raise ParameterError(f"{SCHEME_NAME}: {name} must be whole percent, got {value!r}")
        return round(pct)
    return int_param(SCHEME_NAME, name, value, 0, 100)

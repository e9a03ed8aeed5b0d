"""Edit-distance embedding with an LSH forest (Sokolov 2008); spec: docs/schemes/lsh.md.

The letters of the canonical text (``str.isalpha``; everything else dropped, as in the
paper's spam experiment) are cut to n, or repeated cyclically up to n when shorter (a
constant pad would make all short texts alike). Hash function (j, i) of tree j, level i
looks at the window of w letters at a seeded position and computes

    h = floor((<v, phi> + b) / r)

where v counts the q-grams of the window for q = q1..q2, phi gives each q-gram a Cauchy
deviate drawn from a seeded hash, and b is uniform in [0, r). Everything is integer
arithmetic in fixed point (deviates from a 65536-entry quantile table, scale 2^16), so
every platform computes the same values. Tree j's K values form its hash vector; a
``LshForest`` keeps the vectors of known spam in L prefix trees and returns candidates
ordered by the depth up to which they agree with a query. As a network scheme a message's
features are its L full-depth hash vectors, each hashed to 64 bits: THRES = 1.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from p2pspam.errors import ParameterError
from p2pspam.fingerprint.normalize import CanonicalBody
from p2pspam.fingerprint.schemeparams import build_vector, int_param, reject_extra
from p2pspam.fingerprint.vector import FeatureVector

SCHEME_NAME = "lsh"
SPEC_VERSION = 1
FIXED_ONE = 1 << 16
_TABLE_BITS = 16
_GRAM_BASE = np.uint64(0x9E3779B97F4A7C15)
_SEEDED = b"p2pspam/lsh/seed\0"
_TREE = b"p2pspam/lsh/1\0"


@dataclass(frozen=True, slots=True)
class LshParams:
    """n letters, window w, q-grams q1..q2, bucket width r, K levels, L trees, seed."""

    n: int = 1000
    w: int = 100
    q1: int = 3
    q2: int = 4
    r: int = 100
    K: int = 5
    L: int = 20
    seed: int = 1

    def __post_init__(self) -> None:
        int_param(SCHEME_NAME, "n", self.n, 16, 100_000)
        int_param(SCHEME_NAME, "w", self.w, 2, self.n)
        int_param(SCHEME_NAME, "q1", self.q1, 1, self.w)
        int_param(SCHEME_NAME, "q2", self.q2, self.q1, self.w)
        int_param(SCHEME_NAME, "r", self.r, 1, 1_000_000)
        int_param(SCHEME_NAME, "K", self.K, 1, 64)
        int_param(SCHEME_NAME, "L", self.L, 1, 64)  # a vote carries at most 64 features
        int_param(SCHEME_NAME, "seed", self.seed, 0, 2**32 - 1)


def _seeded(seed: int, *parts: int) -> int:
    data = _SEEDED + b"\0".join(str(p).encode() for p in (seed, *parts))
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big")


def _splitmix(values: np.ndarray) -> np.ndarray:
    """The SplitMix64 finaliser, element-wise (uint64 arithmetic wraps)."""
    with np.errstate(over="ignore"):
        z = values + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


@functools.cache
def cauchy_table() -> np.ndarray:
    """Return the 65536 Cauchy quantiles tan(pi * ((i + 0.5) / 65536 - 1/2)) in fixed
    point (rounded to 1/65536)."""
    size = 1 << _TABLE_BITS
    values = [round(math.tan(math.pi * ((i + 0.5) / size - 0.5)) * FIXED_ONE) for i in range(size)]
    return np.array(values, dtype=np.int64)


@dataclass(frozen=True, slots=True)
class _Plan:
    """The seeded constants of every hash function (positions, keys, offsets)."""

    positions: np.ndarray  # (L*K,) window starts
    keys: np.ndarray  # (L*K,) uint64 keys of the phi hash
    offsets: np.ndarray  # (L*K,) b in fixed point, uniform in [0, r)


@functools.lru_cache(maxsize=32)
def _plan(params: LshParams) -> _Plan:
    count = params.L * params.K
    span = params.n - params.w + 1
    positions = [_seeded(params.seed, 0, f) % span for f in range(count)]
    keys = [_seeded(params.seed, 1, f) for f in range(count)]
    width = params.r * FIXED_ONE
    offsets = [_seeded(params.seed, 2, f) % width for f in range(count)]
    return _Plan(
        np.array(positions, dtype=np.int64),
        np.array(keys, dtype=np.uint64),
        np.array(offsets, dtype=np.int64),
    )


def letters(text: str, n: int) -> np.ndarray | None:
    """Return the first n letters of the text (repeated cyclically when fewer) as code
    points, or None when there are none."""
    kept = "".join(filter(str.isalpha, text))
    if not kept:
        return None
    if len(kept) < n:
        kept = kept * -(-n // len(kept))
    return np.array([ord(c) for c in kept[:n]], dtype=np.uint64)


def _gram_hashes(points: np.ndarray, q: int) -> np.ndarray:
    """Polynomial hashes of every q-gram, mixed and tagged with q."""
    count = len(points) - q + 1
    value = np.zeros(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(q):
            value = value * _GRAM_BASE + points[j : j + count]
    return _splitmix(value ^ np.uint64(q))


def hash_matrix(text: str, params: LshParams) -> np.ndarray | None:
    """Return the (L, K) matrix of hash values of canonical text, or None when it has
    fewer than w letters."""
    kept_letters = sum(1 for c in text if c.isalpha())
    if kept_letters < params.w:
        return None
    points = letters(text, params.n)
    assert points is not None
    plan = _plan(params)
    table = cauchy_table()
    total = np.zeros(len(plan.positions), dtype=np.int64)
    for q in range(params.q1, params.q2 + 1):
        grams = _gram_hashes(points, q)
        idx = plan.positions[:, None] + np.arange(params.w - q + 1, dtype=np.int64)[None, :]
        mixed = _splitmix(grams[idx] ^ plan.keys[:, None])
        total += table[(mixed >> np.uint64(64 - _TABLE_BITS)).astype(np.int64)].sum(axis=1)
    values = np.floor_divide(total + plan.offsets, params.r * FIXED_ONE)
    return values.reshape(params.L, params.K)


def tree_keys(matrix: np.ndarray) -> list[int]:
    """Return the 64-bit feature of each tree's full-depth hash vector."""
    out = []
    for j, row in enumerate(matrix):
        data = _TREE + j.to_bytes(2, "big") + row.astype(">i8").tobytes()
        out.append(int.from_bytes(hashlib.sha256(data).digest()[:8], "big"))
    return out


@dataclass(frozen=True, slots=True)
class Candidate:
    """A stored item and the deepest level at which one of its trees agreed."""

    item: Hashable
    level: int


class LshForest:
    """A local nearest-neighbour index: L prefix trees of depth K over hash vectors."""

    def __init__(self, params: LshParams | None = None) -> None:
        self.params = params or LshParams()
        # (tree, depth, prefix bytes) -> items: one entry per node of every tree
        self._nodes: dict[tuple[int, int, bytes], list[Hashable]] = {}
        self._items: dict[Hashable, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self._items)

    def add_text(self, item: Hashable, text: str) -> bool:
        """Index canonical text under ``item``; False when it is too short to hash."""
        matrix = hash_matrix(text, self.params)
        if matrix is None:
            return False
        self.add(item, matrix)
        return True

    def add(self, item: Hashable, matrix: np.ndarray) -> None:
        """Index an (L, K) hash matrix under ``item`` (again: replaced)."""
        if item in self._items:
            self.remove(item)
        self._items[item] = matrix
        for key in self._paths(matrix):
            self._nodes.setdefault(key, []).append(item)

    def remove(self, item: Hashable) -> None:
        """Forget ``item`` (no error when unknown)."""
        matrix = self._items.pop(item, None)
        if matrix is None:
            return
        for key in self._paths(matrix):
            members = self._nodes.get(key)
            if members is not None:
                members.remove(item)
                if not members:
                    del self._nodes[key]

    def _paths(self, matrix: np.ndarray) -> list[tuple[int, int, bytes]]:
        keys = []
        for j, row in enumerate(matrix):
            encoded = row.astype(">i8").tobytes()
            keys.extend((j, d, encoded[: 8 * d]) for d in range(1, self.params.K + 1))
        return keys

    def query_text(self, text: str, limit: int | None = None) -> list[Candidate]:
        """Return candidates for canonical text (see ``query``)."""
        matrix = hash_matrix(text, self.params)
        return [] if matrix is None else self.query(matrix, limit)

    def query(self, matrix: np.ndarray, limit: int | None = None) -> list[Candidate]:
        """Return stored items by decreasing depth of agreement with the query, level by
        level from the leaves up, until at least ``limit`` (default 2L) were found."""
        limit = 2 * self.params.L if limit is None else limit
        encoded = [row.astype(">i8").tobytes() for row in matrix]
        found: dict[Hashable, int] = {}
        for depth in range(self.params.K, 0, -1):
            for j, row in enumerate(encoded):
                for item in self._nodes.get((j, depth, row[: 8 * depth]), ()):
                    found.setdefault(item, depth)
            if len(found) >= limit:
                break
        return [Candidate(item, level) for item, level in found.items()]


@dataclass(frozen=True, slots=True)
class LshScheme:
    """The full-depth LSH hash vectors of a message as a network scheme (THRES = 1)."""

    lsh: LshParams = LshParams()
    default_thres: int = 1

    @property
    def name(self) -> str:
        """The scheme name carried with every vector."""
        return SCHEME_NAME

    @property
    def namespace(self) -> str:
        """The feature space: every parameter but L (which only adds trees)."""
        p = self.lsh
        return (
            f"{SCHEME_NAME}/{SPEC_VERSION}/n={p.n}/w={p.w}/q={p.q1}-{p.q2}/r={p.r}"
            f"/K={p.K}/seed={p.seed}"
        )

    @property
    def params(self) -> dict[str, int]:
        """The parameters that travel with every vector."""
        p = self.lsh
        return {
            "n": p.n,
            "w": p.w,
            "q1": p.q1,
            "q2": p.q2,
            "r": p.r,
            "K": p.K,
            "L": p.L,
            "seed": p.seed,
        }

    def vector(self, body: CanonicalBody) -> FeatureVector:
        """Return the feature vector (L tree keys) of a canonical body."""
        matrix = hash_matrix(body.text, self.lsh)
        features = [] if matrix is None else tree_keys(matrix)
        note = None if features else f"fewer than w={self.lsh.w} letters"
        return build_vector(SCHEME_NAME, self.namespace, self.params, body, features, note)

    def vectors(self, bodies: Sequence[CanonicalBody]) -> list[FeatureVector]:
        """Return the feature vectors of many canonical bodies."""
        return [self.vector(b) for b in bodies]


_NAMES = ("n", "w", "q1", "q2", "r", "K", "L", "seed")


def make_lsh(**given: Any) -> LshScheme:
    """Build the scheme from CLI-style parameters n, w, q1, q2, r, K, L, seed."""
    extra = {k: v for k, v in given.items() if k not in _NAMES}
    reject_extra(SCHEME_NAME, extra, ", ".join(_NAMES))
    values = {k: v for k, v in given.items() if k in _NAMES and v is not None}
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParameterError(f"{SCHEME_NAME}: {key} must be an integer, got {value!r}")
    return LshScheme(LshParams(**values))

"""The analytic robustness model of Appendix A of the SpamWatch paper.

Notation (the paper's): A, B are the checksum sets of the original and modified document,
X = A - B (checksums destroyed by the modification), Y = B - A (checksums created),
N = |FP(A)| = |FP(B)| the vector size. FP(.) keeps the N highest checksums; checksums
behave as independent uniform values, so which checksums of A land in FP(A) is a uniform
random N-subset of A. Hence (equations 1 and 2, hypergeometric):

    P(x) = C(|X|, x) C(|A| - |X|, N - x) / C(|A|, N),    x = |FP(A) ∩ X|
    P(y) = C(|Y|, y) C(|B| - |Y|, N - y) / C(|B|, N),    y = |FP(B) ∩ Y|

The N - x surviving entries of FP(A) are the top N - x of A - X; FP(B) takes y entries from
Y and the top N - y of A - X, so the number of new entries z = |FP(B) - FP(A)| is
max(x, y). Treating x and y as independent (equation 3, the law of the maximum):

    P(z) = P(y = z) sum_{i<=z} P(x = i) + P(x = z) sum_{i<=z} P(y = i) - P(x = z) P(y = z)

and (equation 4) P(|FP(A) ∩ FP(B)| >= k) = sum_{i=0}^{N-k} P(z = i).

|X| and |Y| per modification (one operation of d characters, windows of L characters,
away from the document's ends): update |X| = |Y| = L - 1 + d; insert |X| = L - 1,
|Y| = L - 1 + d; delete |X| = L - 1 + d, |Y| = L - 1. Several operations: X and Y are
unions; the paper uses an approximate average size, which :func:`expected_union_size`
computes exactly for uniformly placed updates.
"""

from __future__ import annotations

from math import comb

import numpy as np


def hypergeom_pmf(population: int, marked: int, draws: int) -> np.ndarray:
    """P(exactly i of ``draws`` uniform draws without replacement from ``population``
    items hit one of the ``marked`` ones), i = 0..draws (equations 1 and 2)."""
    if not 0 <= marked <= population or not 0 <= draws <= population:
        raise ValueError(f"bad sizes: population={population} marked={marked} draws={draws}")
    total = comb(population, draws)
    return np.array(
        [comb(marked, i) * comb(population - marked, draws - i) / total for i in range(draws + 1)]
    )


def z_pmf(px: np.ndarray, py: np.ndarray) -> np.ndarray:
    """Distribution of z = max(x, y) for independent x, y (equation 3)."""
    cx, cy = np.cumsum(px), np.cumsum(py)
    return py * cx + px * cy - px * py


def survival(
    a_size: int, x_size: int, y_size: int, n: int = 10, b_size: int | None = None
) -> np.ndarray:
    """P(|FP(A) ∩ FP(B)| >= k) for k = 1..n (equation 4); index k-1."""
    b = a_size if b_size is None else b_size
    if a_size < n or b < n:
        raise ValueError(f"documents need at least N={n} checksums, got |A|={a_size} |B|={b}")
    pz = z_pmf(hypergeom_pmf(a_size, x_size, n), hypergeom_pmf(b, y_size, n))
    # P(>= k) = P(z <= n - k)
    cz = np.cumsum(pz)
    return np.clip(np.array([cz[n - k] for k in range(1, n + 1)]), 0.0, 1.0)


def update_sizes(length: int, d: int) -> tuple[int, int]:
    """(|X_i|, |Y_i|) of updating d consecutive characters (away from the ends)."""
    return length - 1 + d, length - 1 + d


def insert_sizes(length: int, d: int) -> tuple[int, int]:
    """(|X_i|, |Y_i|) of inserting d characters."""
    return length - 1, length - 1 + d


def delete_sizes(length: int, d: int) -> tuple[int, int]:
    """(|X_i|, |Y_i|) of deleting d characters."""
    return length - 1 + d, length - 1


def expected_union_size(chars: int, length: int, d: int, count: int) -> float:
    """E|X| when ``count`` updates of ``d`` characters are placed independently and
    uniformly in a ``chars``-character document (window starts 0..chars-length): the
    expected number of windows touched by at least one update, ends included."""
    starts = np.arange(chars - length + 1)
    positions = chars - d + 1
    # update at p touches window s iff p <= s + length - 1 and p + d - 1 >= s
    lo = np.maximum(starts - d + 1, 0)
    hi = np.minimum(starts + length - 1, chars - d)
    q = (hi - lo + 1) / positions
    return float(np.sum(1.0 - (1.0 - q) ** count))


def touched_windows(chars: int, length: int, regions: list[tuple[int, int]]) -> int:
    """Exact number of windows overlapping any modified region [start, stop)."""
    hit = np.zeros(chars - length + 1, dtype=bool)
    for start, stop in regions:
        hit[max(start - length + 1, 0) : min(stop - 1, chars - length) + 1] = True
    return int(hit.sum())

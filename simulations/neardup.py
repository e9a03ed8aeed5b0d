"""Reference near-duplicate clusters: cosine similarity of unique word sets >= a
threshold (0.9 in the I-Match paper's evaluation protocol), found without comparing all
pairs.

For binary word-set vectors, cos(A, B) = |A ∩ B| / sqrt(|A| |B|). Candidates come from a
prefix filter: order each set by increasing document frequency; two sets with cosine
>= t must share a word among the first |A| - ceil(t^2 |A|) + 1 words of A (else
|A ∩ B| < t^2 |A| <= t sqrt(|A| |B|) when |B| <= |A|, and symmetrically), so only pairs
sharing a prefix word are verified exactly. Clusters are the connected components of the
graph of verified pairs.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from simulations.invindex import shared_feature_pairs

_WORD = re.compile(r"\w+")


def word_set(text: str) -> frozenset[str]:
    """The unique words of a text."""
    return frozenset(_WORD.findall(text))


def similar_pairs(
    sets: Sequence[frozenset[str]], threshold: float = 0.9
) -> list[tuple[int, int, float]]:
    """Every pair (i < j) whose word-set cosine is at least ``threshold``."""
    if not 0 < threshold <= 1:
        raise ValueError(f"cosine threshold must be in (0, 1], got {threshold}")
    df = Counter(w for s in sets for w in s)
    vocab = {w: i for i, w in enumerate(sorted(df, key=lambda w: (df[w], w)))}
    ids: list[int] = []
    vals: list[int] = []
    for doc, s in enumerate(sets):
        if not s:
            continue
        ranked = sorted(vocab[w] for w in s)
        prefix = len(s) - math.ceil(threshold * threshold * len(s)) + 1
        for token in ranked[:prefix]:
            ids.append(doc)
            vals.append(token)
    first, second, _ = shared_feature_pairs(np.array(ids), np.array(vals))
    out = []
    for i, j in zip(first.tolist(), second.tolist(), strict=True):
        a, b = sets[i], sets[j]
        cos = len(a & b) / math.sqrt(len(a) * len(b))
        if cos >= threshold:
            out.append((i, j, cos))
    return out


def clusters(count: int, pairs: Sequence[tuple[int, int, float]]) -> np.ndarray:
    """Cluster label of each of ``count`` documents (connected components of pairs)."""
    if not pairs:
        return np.arange(count)
    i = np.array([p[0] for p in pairs])
    j = np.array([p[1] for p in pairs])
    graph = coo_matrix((np.ones(len(i)), (i, j)), shape=(count, count))
    return connected_components(graph, directed=False)[1]

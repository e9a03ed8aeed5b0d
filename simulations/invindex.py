"""Pairs of documents sharing features, found through an inverted index (sorting the
(feature, document) postings), never by comparing all pairs."""

from __future__ import annotations

import numpy as np


def shared_feature_pairs(
    doc_ids: np.ndarray, values: np.ndarray, side: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(first, second, shared)``: every pair of documents (first < second) with
    at least one feature in common, and how many they share.

    ``doc_ids[i]`` owns feature ``values[i]`` (a document lists a feature once). With
    ``side`` (a boolean per document id), only pairs across the two sides are returned.
    """
    doc_ids = np.asarray(doc_ids, dtype=np.int64)
    values = np.asarray(values)
    if doc_ids.shape != values.shape or doc_ids.ndim != 1:
        raise ValueError("doc_ids and values must be 1-D arrays of the same length")
    empty = np.empty(0, dtype=np.int64)
    if len(values) < 2:
        return empty, empty, empty
    order = np.lexsort((doc_ids, values))
    v, d = values[order], doc_ids[order]
    firsts: list[np.ndarray] = []
    seconds: list[np.ndarray] = []
    offset = 1
    while offset < len(v):
        same = v[offset:] == v[:-offset]
        if not same.any():
            break  # postings are sorted: no run is longer than this offset
        a, b = d[:-offset][same], d[offset:][same]
        if side is not None:
            cross = side[a] != side[b]
            a, b = a[cross], b[cross]
        firsts.append(np.minimum(a, b))
        seconds.append(np.maximum(a, b))
        offset += 1
    if not firsts:
        return empty, empty, empty
    first, second = np.concatenate(firsts), np.concatenate(seconds)
    span = int(doc_ids.max()) + 1
    codes, shared = np.unique(first * span + second, return_counts=True)
    return codes // span, codes % span, shared.astype(np.int64)


def overlap_histogram(shared: np.ndarray, upto: int) -> dict[str, int]:
    """Count pairs by number of shared features: keys "1".."upto" and ">upto"."""
    hist = {str(k): int(np.count_nonzero(shared == k)) for k in range(1, upto + 1)}
    hist[f">{upto}"] = int(np.count_nonzero(shared > upto))
    return hist

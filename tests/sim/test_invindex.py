"""Pairs sharing features through the inverted index equal the brute-force answer."""

from itertools import combinations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from simulations.invindex import overlap_histogram, shared_feature_pairs

docs_strategy = st.lists(st.sets(st.integers(0, 30), max_size=6), min_size=0, max_size=12)


def _flatten(docs):
    ids = [i for i, d in enumerate(docs) for _ in d]
    vals = [v for d in docs for v in sorted(d)]
    return np.array(ids, dtype=np.int64), np.array(vals, dtype=np.uint64)


@given(docs_strategy)
def test_pairs_equal_brute_force(docs):
    first, second, shared = shared_feature_pairs(*_flatten(docs))
    got = {(int(a), int(b)): int(s) for a, b, s in zip(first, second, shared, strict=True)}
    want = {
        (i, j): len(docs[i] & docs[j])
        for i, j in combinations(range(len(docs)), 2)
        if docs[i] & docs[j]
    }
    assert got == want


@given(docs_strategy, st.data())
def test_side_keeps_only_cross_pairs(docs, data):
    side = np.array([data.draw(st.booleans()) for _ in docs], dtype=bool)
    first, second, _ = shared_feature_pairs(*_flatten(docs), side=side)
    assert all(side[a] != side[b] for a, b in zip(first, second, strict=True))


def test_histogram_counts_by_shared_features():
    assert overlap_histogram(np.array([1, 1, 2, 3, 5]), 2) == {"1": 2, "2": 1, ">2": 2}

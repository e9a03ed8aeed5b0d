"""The winnowing code computes exactly the test vectors of docs/schemes/winnow.md, and
the hashes and selections follow from the document's text alone."""

import hashlib
import itertools

import pytest

from p2pspam.fingerprint import canonical_text
from p2pspam.fingerprint.winnow import bottom, pair_hashes, winnow, words

from .specdoc import spec_vectors

VECTORS = spec_vectors("winnow")
IDS = [v["name"] for v in VECTORS]


def _hash_from_text(word: str, following: str) -> str:
    return hashlib.sha256(f"p2pspam/winnow/1\0{word}\0{following}".encode()).digest()[:8].hex()


def _winnow_from_text(hashes: list[int], w: int) -> list[int]:
    if len(hashes) < w:
        return [min(hashes)] if hashes else []
    picked, last = [], None
    for s in range(len(hashes) - w + 1):
        window = hashes[s : s + w]
        pos = s + max(i for i, h in enumerate(window) if h == min(window))
        if pos != last:
            picked.append(hashes[pos])
            last = pos
    return picked


def test_spec_has_at_least_five_test_vectors():
    assert len(VECTORS) >= 5


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_words_match_spec_vector(vector):
    assert canonical_text(vector["input_text"]) == vector["canonical"]
    assert words(vector["canonical"]) == vector["words"]


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_pair_hashes_match_spec_vector_and_spec_text(vector):
    got = [f"{h:016x}" for h in pair_hashes(vector["words"])]
    assert got == vector["hashes"]
    ws = vector["words"]
    pairs = list(itertools.pairwise(ws)) if len(ws) > 1 else [(w, "") for w in ws]
    expected = [_hash_from_text(a, b) for a, b in pairs]
    assert got == expected


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_winnowed_selection_matches_spec_vector_and_spec_text(vector):
    hashes = [int(h, 16) for h in vector["hashes"]]
    got = [f"{h:016x}" for h in winnow(hashes, 3)]
    assert got == vector["winnowed"]
    assert got == [f"{h:016x}" for h in _winnow_from_text(hashes, 3)]


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_features_match_spec_vector(vector):
    selected = {int(h, 16) for h in vector["winnowed"]}
    assert [f"{h:016x}" for h in bottom(selected, 16)] == vector["features"]

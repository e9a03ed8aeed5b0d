"""The LSH code computes exactly the test vectors of docs/schemes/lsh.md, and hash values
follow from the document's text in plain integer arithmetic."""

import hashlib
import math

import pytest

from p2pspam.fingerprint import canonical_text
from p2pspam.fingerprint.lsh import LshParams, hash_matrix, tree_keys

from .specdoc import spec_vectors

VECTORS = spec_vectors("lsh")
IDS = [v["name"] for v in VECTORS]
M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def _mix(z: int) -> int:
    z = (z + GOLDEN) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def _seeded(seed: int, kind: int, f: int) -> int:
    text = f"p2pspam/lsh/seed\0{seed}\0{kind}\0{f}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big")


def _table(u: int) -> int:
    return round(math.tan(math.pi * ((u + 0.5) / 65536 - 0.5)) * 65536)


def _hash_value_from_text(text: str, p: LshParams, j: int, i: int) -> int:
    letters = "".join(c for c in text if c.isalpha())
    letters = (letters * (p.n // len(letters) + 1))[: p.n]
    x = [ord(c) for c in letters]
    f = j * p.K + i
    start = _seeded(p.seed, 0, f) % (p.n - p.w + 1)
    key = _seeded(p.seed, 1, f)
    offset = _seeded(p.seed, 2, f) % (p.r * 65536)
    total = 0
    for q in range(p.q1, p.q2 + 1):
        for t in range(p.w - q + 1):
            v = 0
            for c in x[start + t : start + t + q]:
                v = (v * GOLDEN + c) & M64
            total += _table(_mix(_mix(v ^ q) ^ key) >> 48)
    return (total + offset) // (p.r * 65536)


def test_spec_has_at_least_three_test_vectors():
    assert len(VECTORS) >= 3


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_matrix_and_features_match_spec_vector(vector):
    assert canonical_text(vector["input_text"]) == vector["canonical"]
    matrix = hash_matrix(vector["canonical"], LshParams())
    if vector["matrix"] is None:
        assert matrix is None and vector["features"] == []
        return
    assert matrix.tolist() == vector["matrix"]
    assert [f"{k:016x}" for k in tree_keys(matrix)] == vector["features"]


@pytest.mark.parametrize("vector", [v for v in VECTORS if v["matrix"]], ids=lambda v: v["name"])
def test_hash_values_follow_from_the_spec_text(vector):
    params = LshParams()
    for j, i in [(0, 0), (7, 3), (19, 4)]:
        expected = _hash_value_from_text(vector["canonical"], params, j, i)
        assert vector["matrix"][j][i] == expected


@pytest.mark.parametrize("vector", [v for v in VECTORS if v["matrix"]], ids=lambda v: v["name"])
def test_tree_keys_follow_from_the_spec_text(vector):
    for j, row in enumerate(vector["matrix"]):
        data = b"p2pspam/lsh/1\0" + j.to_bytes(2, "big")
        data += b"".join(h.to_bytes(8, "big", signed=True) for h in row)
        assert hashlib.sha256(data).digest()[:8].hex() == vector["features"][j]

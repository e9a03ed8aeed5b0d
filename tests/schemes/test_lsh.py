"""The LSH forest (Sokolov 2008): a local nearest-spam index and a network scheme."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pspam.errors import ParameterError
from p2pspam.fingerprint import get_scheme
from p2pspam.fingerprint.lsh import LshForest, LshParams, LshScheme, hash_matrix, letters
from p2pspam.fingerprint.normalize import CanonicalBody

WORDS = [
    "offer",
    "cheap",
    "watches",
    "price",
    "discount",
    "order",
    "today",
    "customer",
    "account",
    "secure",
    "free",
    "shipping",
    "delivery",
    "quality",
    "brand",
    "store",
    "online",
    "limited",
    "exclusive",
    "premium",
    "save",
]


def _text(seed: int, words: int = 200) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) + rng.choice("abcdefgh") for _ in range(words))


def test_letters_keep_only_alphabetic_characters_and_repeat_short_texts():
    assert "".join(map(chr, letters("ab, c1d!", 10))) == "abcdabcdab"
    assert letters("123 !!", 10) is None


def test_texts_with_fewer_than_w_letters_have_no_hash_vectors():
    assert hash_matrix("short text", LshParams()) is None
    vector = get_scheme("lsh").vector(CanonicalBody("short text"))
    assert vector.features == () and "fewer than w=100 letters" in vector.note


@given(st.text(alphabet="abcdefghij klm", min_size=100, max_size=600))
def test_hash_vectors_are_deterministic_with_l_rows_of_k(text):
    params = LshParams(L=4, K=3)
    first = hash_matrix(text, params)
    if first is None:
        assert sum(c.isalpha() for c in text) < params.w
        return
    assert first.shape == (4, 3)
    assert (first == hash_matrix(text, params)).all()


def test_text_beyond_n_letters_does_not_change_the_vector():
    base = _text(1)
    assert get_scheme("lsh").vector(CanonicalBody(base + " tail words here " * 20)).features == (
        get_scheme("lsh").vector(CanonicalBody(base)).features
    )


def test_forest_ranks_a_near_copy_above_unrelated_texts():
    forest = LshForest()
    original = _text(1)
    forest.add_text("spam", original)
    for n in range(2, 30):
        forest.add_text(f"other{n}", _text(n))
    near_copy = "dear bob " + original
    candidates = forest.query_text(near_copy)
    assert candidates[0].item == "spam"
    assert candidates[0].level > max((c.level for c in candidates[1:]), default=0)


def test_forest_returns_candidates_by_decreasing_level_up_to_the_limit():
    forest = LshForest(LshParams(L=4, K=4))
    for n in range(40):
        forest.add_text(n, _text(n))
    candidates = forest.query_text(_text(0), limit=8)
    levels = [c.level for c in candidates]
    assert levels == sorted(levels, reverse=True)
    assert candidates[0].item == 0 and candidates[0].level == 4
    assert len({c.item for c in candidates}) == len(candidates)


def test_forest_forgets_removed_items():
    forest = LshForest()
    forest.add_text("a", _text(1))
    forest.remove("a")
    assert len(forest) == 0
    assert forest.query_text(_text(1)) == []
    forest.remove("never added")


def test_network_scheme_has_l_features_and_thres_one():
    scheme = get_scheme("lsh", L=8)
    assert scheme == LshScheme(LshParams(L=8)) and scheme.default_thres == 1
    vector = scheme.vector(CanonicalBody(_text(3)))
    assert len(vector.features) == 8
    assert scheme.namespace == get_scheme("lsh").namespace  # L only adds trees


@pytest.mark.parametrize(
    "params", [{"w": 2000}, {"q1": 5, "q2": 4}, {"K": 0}, {"r": 1.5}, {"count": 3}, {"x": 1}]
)
def test_bad_lsh_parameters_are_refused(params):
    with pytest.raises(ParameterError):
        get_scheme("lsh", **params)

"""I-Match with randomized lexicons: behaviour the paper claims, and the scheme API."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pspam.errors import ParameterError
from p2pspam.fingerprint import get_scheme
from p2pspam.fingerprint.imatch import IMatchScheme, imatch_features, select_terms
from p2pspam.fingerprint.lexicon import lexicons
from p2pspam.fingerprint.normalize import CanonicalBody

LEX = lexicons()
PRIMARY = sorted(LEX.primary)[::7]
STOP = sorted(LEX.stop)[::5]
SECONDARY = sorted(LEX.secondary_rank)[::500]
VOCAB = PRIMARY + STOP + SECONDARY + ["zqxv", "blorp", "a", "it", "x7y"]

documents = st.lists(st.sampled_from(VOCAB), min_size=0, max_size=120)


@given(documents, st.randoms(use_true_random=False))
def test_signature_does_not_depend_on_word_order(words, rnd):
    shuffled = list(words)
    rnd.shuffle(shuffled)
    assert imatch_features(" ".join(words)) == imatch_features(" ".join(shuffled))


@given(documents)
def test_signature_does_not_depend_on_repeated_words(words):
    assert imatch_features(" ".join(words)) == imatch_features(" ".join(words + words))


@given(documents)
def test_signature_is_deterministic_and_has_at_most_k_plus_one_features(words):
    first, _ = imatch_features(" ".join(words))
    assert first == imatch_features(" ".join(words))[0]
    assert len(first) <= 11
    assert all(0 <= f < 2**64 for f in first)


@given(documents, st.sampled_from(STOP))
def test_adding_a_stop_band_word_changes_nothing(words, stop_word):
    text = " ".join(words)
    assert imatch_features(text) == imatch_features(f"{text} {stop_word}")


def test_changing_one_lexicon_term_keeps_some_auxiliary_signature():
    words = PRIMARY[:40]
    changed = PRIMARY[1:41]  # one term out, one in: n = 2 changes
    before, _ = imatch_features(" ".join(words), lexicons_count=31)
    after, _ = imatch_features(" ".join(changed), lexicons_count=31)
    assert before[0] != after[0]
    assert set(before[1:]) & set(after[1:])


def test_too_few_terms_gives_no_signature_and_says_why():
    vector = get_scheme("imatch").vector(CanonicalBody("see you at the meeting tomorrow"))
    assert vector.features == ()
    assert vector.note.startswith("no I-Match signature")


def test_long_document_fix_fills_from_the_secondary_lexicon_most_frequent_first():
    rare = sorted(LEX.secondary_rank, key=LEX.secondary_rank.__getitem__)[:3]
    junk = [f"zz{chr(97 + i)}{chr(97 + j)}qq" for i in range(10) for j in range(5)]
    words = PRIMARY[:4] + rare + junk + [SECONDARY[-1]]
    chosen = select_terms(" ".join(words), lexicons_count=0)[0]
    # |U| = 58: 10 % needs 6 terms, so the two most frequent secondary terms join
    assert chosen.rejected is None
    assert chosen.terms == tuple(sorted(PRIMARY[:4] + rare[:2]))


def test_a_document_mostly_outside_the_lexicons_gets_no_signature():
    junk = [f"zz{chr(97 + i)}{chr(97 + j)}qq" for i in range(26) for j in range(26)]
    features, note = imatch_features(" ".join(PRIMARY[:20] + junk))
    assert features == []
    assert "10%" in note


def test_get_scheme_builds_imatch_with_parameters():
    scheme = get_scheme("imatch", K=3, p=0.5, min_terms=2, min_ratio=5, seed=7)
    assert scheme == IMatchScheme(3, 50, 2, 5, 7)
    assert scheme.default_thres == 1
    assert "p=50" in scheme.namespace and "seed=7" in scheme.namespace


def test_k_is_not_part_of_the_namespace_but_p_is():
    assert get_scheme("imatch", K=3).namespace == get_scheme("imatch", K=10).namespace
    assert get_scheme("imatch", p=20).namespace != get_scheme("imatch").namespace


@pytest.mark.parametrize(
    "params",
    [{"count": 10}, {"length": 5}, {"K": 32}, {"p": 0}, {"p": 1.5}, {"K": "x"}, {"bogus": 1}],
)
def test_bad_parameters_are_refused_with_a_parameter_error(params):
    with pytest.raises(ParameterError):
        get_scheme("imatch", **params)


def test_batched_vectors_equal_single_vectors():
    scheme = get_scheme("imatch")
    bodies = [CanonicalBody(" ".join(PRIMARY[i : i + 30])) for i in range(0, 90, 10)]
    assert scheme.vectors(bodies) == [scheme.vector(b) for b in bodies]

"""Winnowing over word pairs and ``agent dedup``: the thesis's guarantees and its five
categories of redundant mail."""

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pspam.errors import ParameterError
from p2pspam.fingerprint import canonical_body, get_scheme
from p2pspam.fingerprint.normalize import CanonicalBody
from p2pspam.fingerprint.winnow import (
    STOP_WORDS,
    WinnowScheme,
    containment,
    fingerprints,
    redundant_pairs,
    resemblance,
    winnow,
)

from .redundant_cases import CATEGORIES, generate_cases

word = st.from_regex(r"[a-z]{1,8}", fullmatch=True).filter(lambda w: w not in STOP_WORDS)
text_words = st.lists(word, max_size=40)


@given(text_words, text_words, text_words, text_words, st.lists(word, min_size=4, max_size=12))
def test_a_shared_run_of_w_plus_one_words_is_always_detected(pre_a, post_a, pre_b, post_b, run):
    a = " ".join(pre_a + run + post_a)
    b = " ".join(pre_b + run + post_b)
    assert fingerprints(a) & fingerprints(b)


@given(st.lists(word, min_size=1, max_size=60))
def test_fingerprints_are_deterministic_and_never_empty_for_words(words):
    text = " ".join(words)
    assert fingerprints(text) == fingerprints(text)
    assert fingerprints(text)


@given(st.lists(st.integers(0, 2**64 - 1), max_size=50), st.integers(1, 6))
def test_every_window_contributes_its_minimum(hashes, w):
    picked = set(winnow(hashes, w))
    for s in range(len(hashes) - w + 1):
        assert min(hashes[s : s + w]) in picked


def test_stop_words_and_punctuation_do_not_change_fingerprints():
    assert fingerprints("cheap watches, best prices!") == fingerprints(
        "the cheap -- watches of the best: prices"
    )


def test_containment_and_resemblance_follow_the_thesis_formulas():
    a, b = frozenset({1, 2, 3, 4}), frozenset({3, 4, 5})
    assert containment(a, b) == 0.5
    assert containment(b, a) == pytest.approx(2 / 3)
    assert resemblance(a, b) == pytest.approx((0.5 + 2 / 3) / 2)
    assert containment(frozenset(), b) == 0.0


def test_of_two_identical_messages_only_the_later_is_reported():
    same = fingerprints("one two three four five six seven")
    assert [(r.index, r.by) for r in redundant_pairs([same, same])] == [(1, 0)]


def test_a_quoted_message_is_redundant_by_the_reply_quoting_it():
    original = fingerprints("meeting moved to room four on friday afternoon please confirm")
    reply = fingerprints(
        "yes works for me > meeting moved to room four on friday afternoon please confirm"
    )
    assert [(r.index, r.by) for r in redundant_pairs([original, reply])] == [(0, 1)]


def test_dedup_has_precision_and_recall_of_at_least_095_on_the_five_categories():
    reported = truth = true_positive = 0
    for seed in (1, 2, 3):
        case = generate_cases(seed)
        prints = [fingerprints(canonical_body(m).text) for m in case.messages]
        found = {frozenset((r.index, r.by)) for r in redundant_pairs(prints, 0.95)}
        reported += len(found)
        truth += len(case.pairs)
        true_positive += len(found & case.pairs)
    assert true_positive / reported >= 0.95
    assert true_positive / truth >= 0.95


@pytest.mark.parametrize("category", CATEGORIES)
def test_dedup_finds_every_category(category):
    case = generate_cases(3, per_category=6, unrelated=10)
    prints = [fingerprints(canonical_body(m).text) for m in case.messages]
    found = {frozenset((r.index, r.by)) for r in redundant_pairs(prints)}
    of_category = {p for p in case.pairs if any(case.categories[i] == category for i in p)}
    assert len(found & of_category) >= len(of_category) - 1


def test_agent_dedup_lists_the_redundant_messages(tmp_path):
    case = generate_cases(4, per_category=2, unrelated=3)
    for n, raw in enumerate(case.messages):
        (tmp_path / f"m{n:02d}.eml").write_bytes(raw)
    done = subprocess.run(
        [sys.executable, "-m", "p2pspam.cli", "agent", "dedup", "--json", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    index = {str(tmp_path / f"m{n:02d}.eml"): n for n in range(len(case.messages))}
    reported = {frozenset((index[r["redundant"]], index[r["by"]])) for r in rows}
    assert reported <= case.pairs
    assert len(reported) >= len(case.pairs) - 1
    assert all(r["containment"] >= 0.95 for r in rows)


def test_agent_dedup_refuses_a_threshold_outside_zero_to_one(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "p2pspam.cli", "agent", "dedup", "-t", "1.5", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "--threshold" in done.stderr


def test_network_scheme_is_the_bottom_n_with_thres_five_eighths_of_n():
    scheme = get_scheme("winnow", N=8)
    assert scheme == WinnowScheme(3, 8) and scheme.default_thres == 5
    assert get_scheme("winnow").default_thres == 10
    text = " ".join(f"word{i}" for i in range(100))
    vector = scheme.vector(CanonicalBody(text))
    assert list(vector.features) == sorted(fingerprints(text))[:8]
    assert get_scheme("winnow", count=8) == scheme


def test_stop_words_only_gives_an_empty_vector_with_a_note():
    vector = get_scheme("winnow").vector(CanonicalBody("the and of to"))
    assert vector.features == () and vector.note


@pytest.mark.parametrize("params", [{"w": 0}, {"N": 1000}, {"length": 50}, {"x": 1}])
def test_bad_winnow_parameters_are_refused(params):
    with pytest.raises(ParameterError):
        get_scheme("winnow", **params)

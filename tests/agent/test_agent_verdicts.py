"""Verdicts from check replies: validation, the vote policy, and the choice of match."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.verdicts import (
    CLEAN,
    HAM,
    SPAM,
    Match,
    combine,
    parse_matches,
    scheme_verdict,
)
from agent.wire import AgentError
from p2pspam.auth.policy import Policy
from p2pspam.auth.tally import TallySummary
from p2pspam.fingerprint import canonical_body, get_scheme
from p2pspam.samples import SPAM_ORIGINAL


@given(
    spam=st.integers(0, 50),
    ham=st.integers(0, 50),
    min_votes=st.integers(1, 10),
    ratio=st.floats(0.0, 1.0),
)
def test_deciding_on_counts_is_deciding_on_the_tally(
    spam: int, ham: int, min_votes: int, ratio: float
) -> None:
    reference = Policy(min_votes=min_votes, ratio=ratio)
    expected = reference.decide(TallySummary(spam, ham, spam + ham, None))
    assert reference.decide_counts(spam, ham) == expected


def reply(*matches: dict) -> dict:
    return {"matches": list(matches), "rounds": 1}


def raw_match(spam: int = 0, ham: int = 0, overlap: int = 5, selftest: bool = False) -> dict:
    tally = {"spam": spam, "ham": ham, "voters": spam + ham, "last_vote_ms": None}
    return {"guid": bytes(20), "overlap": overlap, "matched": [], "discounted": [],
            "tally": tally, "selftest": selftest}  # fmt: skip


@pytest.mark.parametrize(
    "bad",
    [
        None,
        {},
        {"matches": "x"},
        reply({"guid": b"short", "overlap": 1, "tally": {}}),
        reply({**raw_match(), "overlap": -1}),
        reply({**raw_match(), "overlap": True}),
        reply({**raw_match(), "tally": {"spam": "many"}}),
        reply("not a map"),
    ],
)
def test_malformed_check_replies_are_refused(bad: object) -> None:
    with pytest.raises(AgentError):
        parse_matches(bad)


def vector():
    return get_scheme("ata").vector(canonical_body(SPAM_ORIGINAL.encode()))


def test_a_spam_match_beats_a_closer_ham_match() -> None:
    matches = parse_matches(reply(raw_match(spam=2, overlap=4), raw_match(ham=3, overlap=9)))
    verdict = scheme_verdict("m", vector(), 3, matches, Policy())
    assert verdict.status == SPAM
    assert verdict.match is not None and verdict.match.overlap == 4


def test_a_match_without_live_votes_leaves_the_message_clean() -> None:
    verdict = scheme_verdict("m", vector(), 3, parse_matches(reply(raw_match())), Policy())
    assert verdict.status == CLEAN


def test_ham_votes_alone_make_the_message_ham() -> None:
    matches = parse_matches(reply(raw_match(ham=1)))
    assert scheme_verdict("m", vector(), 3, matches, Policy()).status == HAM


def test_the_self_test_object_is_spam_without_votes() -> None:
    matches = parse_matches(reply(raw_match(selftest=True)))
    assert scheme_verdict("m", vector(), 3, matches, Policy()).status == SPAM


def test_min_votes_is_respected() -> None:
    matches = parse_matches(reply(raw_match(spam=1)))
    assert scheme_verdict("m", vector(), 3, matches, Policy(min_votes=2)).status == CLEAN


def test_across_schemes_the_strongest_outcome_wins() -> None:
    clean = scheme_verdict("m", vector(), 3, [], Policy())
    spam = scheme_verdict("m", vector(), 3, [Match(bytes(20), 3, 1, 0, 1, None, False)], Policy())
    assert combine([clean, spam]).status == SPAM
    assert combine([spam, clean]).status == SPAM

"""The decision policy: spam when enough spam votes with a large enough share."""

from __future__ import annotations

import pytest

from p2pspam.auth.policy import Policy
from p2pspam.auth.tally import TallySummary
from p2pspam.errors import ParameterError


def tally(spam: int, ham: int) -> TallySummary:
    return TallySummary(
        spam=spam, ham=ham, voters=spam + ham, last_vote_ms=1 if spam + ham else None
    )


def test_defaults_are_one_vote_and_half_the_voters():
    assert Policy() == Policy(min_votes=1, ratio=0.5)


def test_one_spam_vote_is_spam_by_default():
    assert Policy().decide(tally(1, 0)) == "spam"


def test_an_even_split_is_spam_by_default():
    assert Policy().decide(tally(2, 2)) == "spam"


def test_ham_votes_outnumbering_spam_protect_a_mailing_list():
    assert Policy().decide(tally(3, 4)) == "ham"


def test_no_votes_is_unknown():
    assert Policy().decide(tally(0, 0)) == "unknown"


def test_fewer_spam_votes_than_the_minimum_is_unknown():
    assert Policy(min_votes=3).decide(tally(2, 0)) == "unknown"


def test_the_minimum_reached_with_a_high_enough_share_is_spam():
    assert Policy(min_votes=3, ratio=0.75).decide(tally(3, 1)) == "spam"
    assert Policy(min_votes=3, ratio=0.8).decide(tally(3, 1)) == "ham"


@pytest.mark.parametrize("kwargs", [{"min_votes": 0}, {"ratio": 1.5}, {"ratio": -0.1}])
def test_out_of_range_parameters_are_refused(kwargs):
    with pytest.raises(ParameterError):
        Policy(**kwargs)

"""The per-user vote rate limit (token bucket, clock passed in)."""

from __future__ import annotations

import pytest

from p2pspam.auth.ratelimit import HOUR_MS, VoteRateLimiter
from p2pspam.errors import ParameterError


def test_the_default_is_two_hundred_votes_per_hour():
    limiter = VoteRateLimiter()
    assert sum(limiter.allow("u", 0) for _ in range(300)) == 200


def test_users_are_limited_independently():
    limiter = VoteRateLimiter(per_hour=2)
    assert [limiter.allow("a", 0) for _ in range(3)] == [True, True, False]
    assert limiter.allow("b", 0)


def test_the_allowance_comes_back_at_the_configured_rate():
    limiter = VoteRateLimiter(per_hour=4)
    for _ in range(4):
        limiter.allow("u", 0)
    assert not limiter.allow("u", HOUR_MS // 4 - 1)
    assert limiter.allow("u", HOUR_MS // 4)
    assert limiter.remaining("u", 10 * HOUR_MS) == 4


def test_a_refused_vote_does_not_use_up_allowance():
    limiter = VoteRateLimiter(per_hour=1)
    limiter.allow("u", 0)
    for t in range(0, HOUR_MS, HOUR_MS // 10):
        limiter.allow("u", t)
    assert limiter.allow("u", HOUR_MS)


def test_a_clock_going_backwards_grants_nothing():
    limiter = VoteRateLimiter(per_hour=1)
    assert limiter.allow("u", HOUR_MS)
    assert not limiter.allow("u", 0)
    assert not limiter.allow("u", HOUR_MS)


def test_memory_stays_bounded_with_many_users():
    limiter = VoteRateLimiter(per_hour=10, max_users=100)
    for i in range(1000):
        limiter.allow(f"user{i}", i)
    assert len(limiter._buckets) <= 100


def test_a_limit_below_one_is_refused():
    with pytest.raises(ParameterError):
        VoteRateLimiter(per_hour=0)

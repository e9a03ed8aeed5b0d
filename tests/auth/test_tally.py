"""Tallies: one live vote per user, whatever the delivery order, duplication or replay."""

from __future__ import annotations

import random

import pytest

from p2pspam.auth.credentials import public_bytes
from p2pspam.auth.revocation import sign_revocations
from p2pspam.auth.tally import LiveVotes, TallySummary, summarize, tally_record
from p2pspam.auth.verify import VoteVerifier

from .helpers import NOW, authority_key, user, vector_of, vote


@pytest.fixture(scope="module")
def authority():
    return authority_key()


@pytest.fixture(scope="module")
def verifier(authority):
    return VoteVerifier(public_bytes(authority))


@pytest.fixture(scope="module")
def users(authority):
    return [user(authority, f"user{i}") for i in range(50)]


def verified(verifier, key, verdict="spam", ts=NOW, vector=None):
    return verifier.verify(vote(key, verdict, ts, vector).encode(), NOW + 10**6)


def test_one_user_casting_a_thousand_spam_votes_counts_once(verifier, users):
    stuffer = users[0]
    votes = [verified(verifier, stuffer, "spam", NOW + i) for i in range(1000)]
    assert summarize(votes) == TallySummary(spam=1, ham=0, voters=1, last_vote_ms=NOW + 999)


def test_fifty_users_count_fifty(verifier, users):
    votes = [verified(verifier, u) for u in users]
    assert summarize(votes) == TallySummary(spam=50, ham=0, voters=50, last_vote_ms=NOW)


def test_the_latest_vote_of_a_user_wins(verifier, users):
    first = verified(verifier, users[0], "spam", NOW)
    second = verified(verifier, users[0], "ham", NOW + 1)
    assert summarize([first, second]) == TallySummary(0, 1, 1, NOW + 1)
    assert summarize([second, first]) == TallySummary(0, 1, 1, NOW + 1)


def test_replaying_an_old_vote_after_a_newer_one_does_not_resurrect_it(verifier, users):
    tally = LiveVotes()
    old_spam = verified(verifier, users[0], "spam", NOW)
    assert tally.add(old_spam)
    assert tally.add(verified(verifier, users[0], "ham", NOW + 5))
    assert not tally.add(old_spam)
    assert tally.summary() == TallySummary(spam=0, ham=1, voters=1, last_vote_ms=NOW + 5)


def test_a_withdrawal_counts_for_neither_side(verifier, users):
    votes = [
        verified(verifier, users[0], "spam", NOW),
        verified(verifier, users[0], "withdraw", NOW + 1),
        verified(verifier, users[1], "spam", NOW),
    ]
    assert summarize(votes) == TallySummary(spam=1, ham=0, voters=1, last_vote_ms=NOW + 1)


def test_a_tie_on_the_timestamp_is_broken_the_same_way_everywhere(verifier, users):
    spam = verified(verifier, users[0], "spam", NOW)
    ham = verified(verifier, users[0], "ham", NOW)
    winner = max(spam, ham, key=lambda v: v.encoded).verdict
    for order in ([spam, ham], [ham, spam]):
        assert LiveVotes(order).live()["user0"].verdict == winner


def test_merges_are_commutative_associative_and_idempotent(verifier, users):
    rng = random.Random(7)
    pool = [
        verified(
            verifier,
            rng.choice(users[:8]),
            rng.choice(["spam", "ham", "withdraw"]),
            NOW + rng.randrange(20),
        )
        for _ in range(60)
    ]
    a, b, c = LiveVotes(pool[:20]), LiveVotes(pool[20:40]), LiveVotes(pool[40:])
    assert a.merge(b).live() == b.merge(a).live()
    assert a.merge(b).merge(c).live() == a.merge(b.merge(c)).live()
    assert a.merge(a).live() == a.live()
    assert a.merge(b).merge(c).summary() == summarize(pool)


def test_an_unverified_vote_cannot_enter_a_tally(users):
    with pytest.raises(TypeError, match="verified votes only"):
        summarize([vote(users[0])])
    with pytest.raises(TypeError):
        LiveVotes().add(vote(users[0]))  # type: ignore[arg-type]


def test_votes_on_different_messages_do_not_mix(verifier, users):
    other = vector_of(
        "another message entirely, long enough to have fingerprints of its own "
        "because it is well over fifty characters of text in total"
    )
    with pytest.raises(ValueError, match="tally of"):
        summarize([verified(verifier, users[0]), verified(verifier, users[1], vector=other)])


def test_an_empty_tally_has_no_last_vote():
    assert summarize([]) == TallySummary(0, 0, 0, None)


def test_a_stored_register_is_tallied_after_re_verification(authority, users):
    verifier = VoteVerifier(public_bytes(authority))
    register = {}
    for key, verdict in ((users[0], "spam"), (users[1], "spam"), (users[2], "ham")):
        signed = vote(key, verdict)
        register[key.user_id] = (signed.timestamp_ms, signed.encode())
    summary, dropped = tally_record(register, verifier, NOW)
    assert summary == TallySummary(spam=2, ham=1, voters=3, last_vote_ms=NOW)
    assert dropped == {}


def test_a_stored_register_drops_revoked_tampered_and_misfiled_votes(authority, users):
    verifier = VoteVerifier(public_bytes(authority))
    verifier.update_revocations(sign_revocations(authority, 1, NOW, {"user1"}).encode(), NOW)
    good, revoked = vote(users[0]), vote(users[1])
    tampered = vote(users[2], "ham")
    from dataclasses import replace

    register = {
        "user0": (NOW, good.encode()),
        "user1": (NOW, revoked.encode()),
        "user2": (NOW, replace(tampered, verdict="spam").encode()),
        "user3": (NOW, vote(users[4]).encode()),  # filed under the wrong user
    }
    summary, dropped = tally_record(register, verifier, NOW)
    assert summary == TallySummary(spam=1, ham=0, voters=1, last_vote_ms=NOW)
    assert dropped == {"user1": "revoked", "user2": "bad_signature", "user3": "malformed"}

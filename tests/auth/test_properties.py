"""Properties: canonical encodings round-trip, hostile bytes never crash the decoder,
tallies do not depend on delivery order or duplication."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pspam.auth.credentials import public_bytes
from p2pspam.auth.revocation import RevocationRejected, decode_revocations, sign_revocations
from p2pspam.auth.tally import LiveVotes, summarize
from p2pspam.auth.verify import VoteRejected, VoteVerifier
from p2pspam.auth.votes import decode_vote, sign_vote
from p2pspam.fingerprint.vector import FeatureVector

from .helpers import NOW, authority_key, user, vote

AUTHORITY = authority_key()
USERS = [user(AUTHORITY, f"u{i}") for i in range(6)]
VERIFIER = VoteVerifier(public_bytes(AUTHORITY))

user_ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}", fullmatch=True)
features = st.lists(st.integers(0, (1 << 64) - 1), min_size=1, max_size=256, unique=True)
params = st.dictionaries(
    st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,15}", fullmatch=True),
    st.integers(0, (1 << 64) - 1),
    max_size=16,
)
vectors = st.builds(
    FeatureVector,
    scheme=st.from_regex(r"[a-z][a-z0-9_-]{0,31}", fullmatch=True),
    namespace=st.from_regex(r"[!-~]{1,128}", fullmatch=True),
    params=params,
    features=features.map(tuple),
    guid=st.binary(min_size=20, max_size=20),
    chars=st.just(0),
)


@given(
    vector=vectors,
    verdict=st.sampled_from(["spam", "ham", "withdraw"]),
    ts=st.integers(0, (1 << 53) - 1),
)
def test_any_signed_vote_round_trips_through_its_encoding(vector, verdict, ts):
    signed = sign_vote(USERS[0], vector, verdict, ts)
    data = signed.encode()
    assert decode_vote(data) == signed
    assert decode_vote(data).encode() == data


@given(data=st.binary(max_size=600))
def test_random_bytes_are_refused_with_a_reason_never_a_crash(data):
    with pytest.raises(VoteRejected) as info:
        VERIFIER.verify(data, NOW)
    assert info.value.reason in ("malformed", "oversized")


VALID = vote(USERS[0]).encode()


@given(position=st.integers(0, len(VALID) - 1), value=st.integers(0, 255))
def test_any_single_byte_change_of_a_vote_is_refused(position, value):
    changed = bytearray(VALID)
    if changed[position] == value:
        value ^= 0xFF
    changed[position] = value
    with pytest.raises(VoteRejected):
        VERIFIER.verify(bytes(changed), NOW)


@given(uid=user_ids)
def test_any_valid_user_id_round_trips_in_a_credential(uid):
    from p2pspam.auth.credentials import decode_credential, new_user_key

    key = new_user_key(AUTHORITY, uid, 0, NOW)
    assert decode_credential(key.credential.encode()) == key.credential


@given(users=st.sets(user_ids, max_size=20), sequence=st.integers(0, 2**40))
def test_revocation_lists_round_trip(users, sequence):
    signed = sign_revocations(AUTHORITY, sequence, NOW, users)
    assert decode_revocations(signed.encode()) == signed


@given(data=st.binary(max_size=300))
def test_random_revocation_lists_are_refused_never_crash(data):
    verifier = VoteVerifier(public_bytes(AUTHORITY))
    with pytest.raises(RevocationRejected):
        verifier.update_revocations(data, NOW)


# A pool of verified votes by a few users on one message, with equal timestamps among
# them so that tie-breaking is exercised too.
POOL = [
    VERIFIER.verify(vote(u, verdict, NOW + ts).encode(), NOW)
    for u in USERS
    for verdict in ("spam", "ham", "withdraw")
    for ts in (0, 1)
]


@given(deliveries=st.lists(st.sampled_from(range(len(POOL))), max_size=60), seed=st.randoms())
def test_tallies_do_not_depend_on_order_or_duplication(deliveries, seed):
    delivered = [POOL[i] for i in deliveries]
    shuffled = delivered + delivered[: len(delivered) // 2]
    seed.shuffle(shuffled)
    assert summarize(shuffled) == summarize(delivered)
    assert summarize(shuffled) == summarize(set(delivered))


@given(
    a=st.lists(st.sampled_from(POOL), max_size=20), b=st.lists(st.sampled_from(POOL), max_size=20)
)
def test_merging_tallies_equals_tallying_the_union(a, b):
    assert LiveVotes(a).merge(LiveVotes(b)).summary() == summarize(a + b)

"""VoteVerifier: every rejection reason, each built from a concrete bad vote."""

from __future__ import annotations

from dataclasses import replace

import msgpack
import pytest

from p2pspam.auth.credentials import public_bytes
from p2pspam.auth.revocation import RevocationRejected, sign_revocations
from p2pspam.auth.verify import (
    DEFAULT_MAX_FUTURE_MS,
    RateLimitedVerifier,
    VerifiedVote,
    VoteRateLimiter,
    VoteRejected,
    VoteVerifier,
)
from p2pspam.auth.votes import MAX_VOTE_BYTES

from .helpers import (
    DAY,
    NOW,
    authority_key,
    forged_user,
    tampered,
    user,
    vector_of,
    vote,
)


@pytest.fixture
def authority():
    return authority_key()


@pytest.fixture
def verifier(authority):
    return VoteVerifier(public_bytes(authority))


@pytest.fixture
def alice(authority):
    return user(authority, "alice")


def rejection(verifier: VoteVerifier, data: bytes, now_ms: int = NOW, **kw) -> VoteRejected:
    with pytest.raises(VoteRejected) as info:
        verifier.verify(data, now_ms, **kw)
    return info.value


def test_a_valid_vote_is_accepted_and_returned_verified(verifier, alice):
    signed = vote(alice)
    accepted = verifier.verify(signed.encode(), NOW)
    assert isinstance(accepted, VerifiedVote)
    assert accepted.user_id == "alice"
    assert accepted.features == signed.features
    assert accepted.encoded == signed.encode()


def test_altered_features_after_signing_are_a_bad_signature(verifier, alice):
    signed = vote(alice)
    features = (signed.features[0] ^ 1, *signed.features[1:])
    error = rejection(verifier, tampered(signed, features=features))
    assert error.reason == "bad_signature"
    assert "alice" in str(error)


def test_altered_verdict_after_signing_is_a_bad_signature(verifier, alice):
    signed = vote(alice, "ham")
    assert rejection(verifier, tampered(signed, verdict="spam")).reason == "bad_signature"


def test_altered_timestamp_or_guid_after_signing_is_a_bad_signature(verifier, alice):
    signed = vote(alice)
    later = tampered(signed, timestamp_ms=signed.timestamp_ms + 1)
    other_guid = tampered(signed, guid=bytes(20))
    assert rejection(verifier, later).reason == "bad_signature"
    assert rejection(verifier, other_guid).reason == "bad_signature"


def test_a_vote_signed_by_another_users_key_is_a_bad_signature(authority, verifier, alice):
    mallory = user(authority, "mallory")
    signed = vote(mallory)
    stolen_identity = tampered(signed, credential=alice.credential)
    assert rejection(verifier, stolen_identity).reason == "bad_signature"


def test_a_credential_from_another_authority_is_unknown_authority(verifier):
    stranger = user(authority_key(), "alice")
    error = rejection(verifier, vote(stranger).encode())
    assert error.reason == "unknown_authority"
    assert "trusts" in str(error)


def test_a_credential_with_a_copied_authority_signature_is_unknown_authority(
    authority, verifier, alice
):
    forged = forged_user(authority, alice, "mallory")
    assert rejection(verifier, vote(forged).encode()).reason == "unknown_authority"


def test_an_expired_credential_is_refused_for_fresh_votes(authority, verifier):
    old = user(authority, "old", NOW - 30 * DAY, NOW - DAY)
    error = rejection(verifier, vote(old, timestamp_ms=NOW - 2 * DAY).encode())
    assert error.reason == "credential_expired"
    assert "expired" in str(error)


def test_a_vote_dated_after_its_credential_expired_is_refused(authority, verifier):
    old = user(authority, "old", NOW - 30 * DAY, NOW - DAY)
    error = rejection(verifier, vote(old, timestamp_ms=NOW).encode(), replica=True)
    assert error.reason == "credential_expired"


def test_a_replica_cast_while_its_credential_was_valid_still_counts(authority, verifier):
    old = user(authority, "old", NOW - 30 * DAY, NOW - DAY)
    cast_in_time = vote(old, timestamp_ms=NOW - 2 * DAY).encode()
    assert verifier.verify(cast_in_time, NOW, replica=True).user_id == "old"


def test_a_credential_not_yet_valid_is_refused(authority, verifier):
    early = user(authority, "early", NOW + DAY, NOW + 30 * DAY)
    error = rejection(verifier, vote(early, timestamp_ms=NOW + DAY).encode(), NOW)
    assert error.reason == "credential_not_yet_valid"


def test_a_vote_dated_before_its_credential_is_refused(authority, verifier):
    fresh = user(authority, "fresh", NOW, NOW + 30 * DAY)
    error = rejection(verifier, vote(fresh, timestamp_ms=NOW - 1).encode(), NOW)
    assert error.reason == "credential_not_yet_valid"


def test_a_revoked_user_is_refused(authority, verifier, alice):
    revocations = sign_revocations(authority, 1, NOW, {"alice"})
    assert verifier.update_revocations(revocations.encode(), NOW)
    error = rejection(verifier, vote(alice).encode())
    assert error.reason == "revoked"
    assert "alice" in str(error)


def test_revocation_applies_to_votes_verified_before_it(authority, verifier, alice):
    data = vote(alice).encode()
    verifier.verify(data, NOW)  # now in the signature cache
    verifier.update_revocations(sign_revocations(authority, 1, NOW, {"alice"}).encode(), NOW)
    assert rejection(verifier, data).reason == "revoked"
    assert rejection(verifier, data, replica=True).reason == "revoked"


def test_a_timestamp_too_far_in_the_future_is_refused(verifier, alice):
    ahead = vote(alice, timestamp_ms=NOW + DEFAULT_MAX_FUTURE_MS + 1).encode()
    error = rejection(verifier, ahead)
    assert error.reason == "future_timestamp"


def test_a_timestamp_slightly_ahead_is_accepted(verifier, alice):
    ahead = vote(alice, timestamp_ms=NOW + DEFAULT_MAX_FUTURE_MS).encode()
    assert verifier.verify(ahead, NOW).timestamp_ms == NOW + DEFAULT_MAX_FUTURE_MS


def test_more_features_than_the_scheme_allows_is_a_bad_vector(verifier, alice):
    wide = replace(vector_of(), features=tuple(range(1, 12)))  # ATA N=10
    error = rejection(verifier, vote(alice, vector=wide).encode())
    assert error.reason == "bad_vector"
    assert "N=10" in str(error)


def test_duplicate_features_are_a_bad_vector(verifier, alice):
    vector = vector_of()
    doubled = replace(vector, features=(vector.features[0], *vector.features[:5]))
    assert rejection(verifier, vote(alice, vector=doubled).encode()).reason == "bad_vector"


def test_a_namespace_inconsistent_with_the_params_is_a_bad_vector(verifier, alice):
    wrong = replace(vector_of(), namespace="ata/1/L=40")
    error = rejection(verifier, vote(alice, vector=wrong).encode())
    assert error.reason == "bad_vector"
    assert "namespace" in str(error)


def test_ata_params_out_of_range_are_a_bad_vector(verifier, alice):
    huge = replace(vector_of(), params={"L": 50, "N": 100_000})
    assert rejection(verifier, vote(alice, vector=huge).encode()).reason == "bad_vector"


def test_missing_or_extra_params_are_a_bad_vector(verifier, alice):
    missing = replace(vector_of(), params={"L": 50})
    extra = replace(vector_of(), params={"L": 50, "N": 10, "X": 1})
    assert rejection(verifier, vote(alice, vector=missing).encode()).reason == "bad_vector"
    assert rejection(verifier, vote(alice, vector=extra).encode()).reason == "bad_vector"


def test_an_unknown_scheme_is_a_bad_vector(verifier, alice):
    unknown = replace(vector_of(), scheme="nilsimsa-x")
    error = rejection(verifier, vote(alice, vector=unknown).encode())
    assert error.reason == "bad_vector"
    assert "unknown scheme" in str(error)


def test_an_oversized_record_is_refused_before_decoding(verifier):
    error = rejection(verifier, b"\x00" * (MAX_VOTE_BYTES + 1))
    assert error.reason == "oversized"


def test_garbage_is_malformed(verifier):
    assert rejection(verifier, b"\xc1garbage").reason == "malformed"


def test_a_vote_with_trailing_bytes_is_malformed(verifier, alice):
    assert rejection(verifier, vote(alice).encode() + b"\x00").reason == "malformed"


def test_a_non_bytes_input_is_malformed(verifier):
    assert rejection(verifier, "not bytes").reason == "malformed"  # type: ignore[arg-type]


def test_a_map_instead_of_the_fixed_array_is_malformed(verifier, alice):
    as_map = msgpack.packb({"record": vote(alice).record(), "sig": b"x" * 64})
    assert rejection(verifier, as_map).reason == "malformed"


def test_the_rate_limiter_refuses_a_user_over_the_limit(verifier, authority):
    gate = RateLimitedVerifier(verifier, VoteRateLimiter(per_hour=3))
    bob = user(authority, "bob")
    for i in range(3):
        gate.verify(vote(bob, timestamp_ms=NOW + i).encode(), NOW)
    with pytest.raises(VoteRejected) as info:
        gate.verify(vote(bob, timestamp_ms=NOW + 3).encode(), NOW)
    assert info.value.reason == "rate_limited"
    assert "3 votes per hour" in str(info.value)


def test_an_older_revocation_list_is_not_adopted(authority, verifier):
    newer = sign_revocations(authority, 5, NOW, {"alice"})
    older = sign_revocations(authority, 4, NOW, set())
    assert verifier.update_revocations(newer.encode(), NOW)
    assert not verifier.update_revocations(older.encode(), NOW)
    assert not verifier.update_revocations(newer.encode(), NOW)
    assert verifier.is_revoked("alice")
    assert verifier.revocations.sequence == 5


def test_a_revocation_list_from_another_authority_is_refused(verifier):
    foreign = sign_revocations(authority_key(), 99, NOW, set())
    with pytest.raises(RevocationRejected) as info:
        verifier.update_revocations(foreign.encode(), NOW)
    assert info.value.reason == "unknown_authority"


def test_a_revocation_list_with_a_bad_signature_is_refused(authority, verifier):
    genuine = sign_revocations(authority, 7, NOW, {"alice"})
    emptied = replace(genuine, users=frozenset())
    with pytest.raises(RevocationRejected) as info:
        verifier.update_revocations(emptied.encode(), NOW)
    assert info.value.reason == "bad_signature"
    assert not verifier.is_revoked("alice") and verifier.revocations is None


def test_a_malformed_revocation_list_is_refused(verifier):
    with pytest.raises(RevocationRejected) as info:
        verifier.update_revocations(b"\x92\x01", NOW)
    assert info.value.reason == "malformed"


def test_the_verifier_starts_from_a_given_revocation_list(authority, alice):
    revocations = sign_revocations(authority, 1, NOW, {"alice"}).encode()
    verifier = VoteVerifier(public_bytes(authority), revocations)
    assert rejection(verifier, vote(alice).encode()).reason == "revoked"


def test_a_verified_vote_cannot_be_made_outside_the_verifier(alice):
    signed = vote(alice)
    with pytest.raises(TypeError):
        VerifiedVote(
            scheme=signed.scheme,
            namespace=signed.namespace,
            params=signed.params,
            guid=signed.guid,
            features=signed.features,
            verdict=signed.verdict,
            timestamp_ms=signed.timestamp_ms,
            credential=signed.credential,
            signature=signed.signature,
            encoded=signed.encode(),
        )


def test_cached_verification_still_checks_time(authority, verifier):
    short = user(authority, "short", NOW - DAY, NOW + DAY)
    data = vote(short).encode()
    verifier.verify(data, NOW)
    assert rejection(verifier, data, NOW + 2 * DAY).reason == "credential_expired"

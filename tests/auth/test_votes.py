"""The vote record: one canonical encoding, strict decoding, signing."""

from __future__ import annotations

from dataclasses import replace

import msgpack
import pytest

from p2pspam.auth.codec import pack
from p2pspam.auth.votes import MAX_VOTE_BYTES, Vote, VoteRejected, decode_vote, sign_vote
from p2pspam.errors import ParameterError

from .helpers import NOW, authority_key, user, vector_of, vote


@pytest.fixture
def alice():
    return user(authority_key(), "alice")


def record_fields(signed: Vote) -> list:
    return msgpack.unpackb(signed.record(), raw=False)


def rebuilt(fields: list, signature: bytes) -> bytes:
    return pack([pack(fields), signature])


def malformed(data: bytes) -> str:
    with pytest.raises(VoteRejected) as info:
        decode_vote(data)
    assert info.value.reason == "malformed", info.value
    return str(info.value)


def test_a_vote_decodes_to_itself(alice):
    signed = vote(alice)
    assert decode_vote(signed.encode()) == signed


def test_the_record_is_a_fixed_order_array_of_nine_fields(alice):
    fields = record_fields(vote(alice, "ham"))
    assert len(fields) == 9
    version, scheme, namespace, params, guid, features, verdict, ts, credential = fields
    assert (version, scheme, namespace, verdict, ts) == (1, "ata", "ata/1/L=50", "ham", NOW)
    assert params == [["L", 50], ["N", 10]]
    assert len(guid) == 20 and len(features) == 10 and isinstance(credential, bytes)


def test_the_encoding_is_the_same_whoever_builds_it(alice):
    signed = vote(alice)
    assert replace(signed, params={"N": 10, "L": 50}).encode() == signed.encode()


def test_a_non_minimal_integer_encoding_is_malformed(alice):
    signed = vote(alice)
    record = signed.record()
    version_at = 1  # after the fixarray header: positive fixint 1
    padded = record[:version_at] + b"\xcc\x01" + record[version_at + 1 :]  # uint8 1
    assert "canonical" in malformed(pack([padded, signed.signature]))


def test_a_boolean_where_an_integer_belongs_is_malformed(alice):
    signed = vote(alice)
    fields = record_fields(signed)
    fields[0] = True
    malformed(rebuilt(fields, signed.signature))


def test_unsorted_params_are_malformed(alice):
    signed = vote(alice)
    fields = record_fields(signed)
    fields[3] = [["N", 10], ["L", 50]]
    assert "sorted" in malformed(rebuilt(fields, signed.signature))


def test_a_guid_of_the_wrong_length_is_malformed(alice):
    signed = vote(alice)
    fields = record_fields(signed)
    fields[4] = b"\x01" * 19
    assert "guid" in malformed(rebuilt(fields, signed.signature))


def test_a_feature_beyond_64_bits_is_malformed(alice):
    signed = vote(alice)
    fields = record_fields(signed)
    fields[5] = [-1, *fields[5][1:]]
    malformed(rebuilt(fields, signed.signature))


def test_an_unknown_verdict_is_malformed(alice):
    signed = vote(alice)
    fields = record_fields(signed)
    fields[6] = "maybe"
    assert "verdict" in malformed(rebuilt(fields, signed.signature))


def test_an_empty_feature_list_is_malformed(alice):
    signed = vote(alice)
    fields = record_fields(signed)
    fields[5] = []
    malformed(rebuilt(fields, signed.signature))


def test_a_short_signature_is_malformed(alice):
    signed = vote(alice)
    assert "signature" in malformed(pack([signed.record(), signed.signature[:63]]))


def test_a_truncated_vote_is_malformed(alice):
    data = vote(alice).encode()
    for cut in (0, 1, 10, len(data) // 2, len(data) - 1):
        malformed(data[:cut])


def test_an_oversized_vote_is_refused_with_its_own_reason():
    with pytest.raises(VoteRejected) as info:
        decode_vote(b"\x90" * (MAX_VOTE_BYTES + 1))
    assert info.value.reason == "oversized"
    assert str(MAX_VOTE_BYTES) in str(info.value)


def test_signing_refuses_an_unknown_verdict(alice):
    with pytest.raises(ParameterError, match="verdict"):
        sign_vote(alice, vector_of(), "spammy", NOW)


def test_signing_refuses_a_message_without_features(alice):
    short = vector_of("too short")
    assert short.features == ()
    with pytest.raises(ParameterError, match="no feature vector"):
        sign_vote(alice, short, "spam", NOW)


def test_signing_refuses_a_negative_timestamp(alice):
    with pytest.raises(ParameterError, match="timestamp"):
        sign_vote(alice, vector_of(), "spam", -5)


def test_signing_refuses_a_feature_wider_than_64_bits(alice):
    wide = replace(vector_of(), features=(1 << 64,))
    with pytest.raises(ParameterError, match="cannot sign"):
        sign_vote(alice, wide, "spam", NOW)


def test_a_vote_gives_back_the_vector_it_is_about(alice):
    vector = vector_of()
    back = vote(alice, vector=vector).vector()
    assert (back.namespace, back.features, back.guid) == (
        vector.namespace,
        vector.features,
        vector.guid,
    )
    assert dict(back.params) == dict(vector.params)

"""Strict msgpack encoding of records: round trips, and nothing but RecordError for
malformed input."""

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pspam.adolr.errors import RecordError
from p2pspam.adolr.records import (
    MAX_VOTE_BYTES,
    FeatureEntry,
    FeatureObject,
    ObjectRecord,
    Pointer,
    decode_entry,
    decode_object,
    decode_pointer,
    decode_record,
    encode_entry,
    encode_object,
    encode_pointer,
    encode_record,
)

from .strategies import GUIDS, entries, feature_objects, pointers, records

G = GUIDS[0]
NS = "ata/1/L=50"
DECODERS = [decode_entry, decode_object, decode_record, decode_pointer]
GOOD_ENTRY = [G, NS, [1, 2], 1, 2, 3, None]
GOOD_RECORD = [G, NS, [1, 2], {"ann": [5, b"vote"]}, 9]
GOOD_POINTER = [G, G, "127.0.0.1", 8468, 9]


def _pack(obj):
    return msgpack.packb(obj, use_bin_type=True)


@given(entries())
def test_an_entry_round_trips(e):
    assert decode_entry(encode_entry(e)) == e


@given(feature_objects(cap=3))
def test_a_feature_object_round_trips(o):
    assert decode_object(encode_object(o), cap=3) == o


@given(records())
def test_an_object_record_round_trips(r):
    assert decode_record(encode_record(r)) == r


@given(pointers())
def test_a_pointer_round_trips(p):
    assert decode_pointer(encode_pointer(p)) == p


def test_the_well_formed_samples_decode():
    assert isinstance(decode_entry(_pack(GOOD_ENTRY)), FeatureEntry)
    assert isinstance(decode_record(_pack(GOOD_RECORD)), ObjectRecord)
    assert isinstance(decode_pointer(_pack(GOOD_POINTER)), Pointer)
    assert isinstance(decode_object(_pack([[GOOD_ENTRY], [], 0])), FeatureObject)


def _outcome(decode, data):
    """Return "decoded" or "refused"; any exception but RecordError propagates."""
    try:
        decode(data)
    except RecordError:
        return "refused"
    return "decoded"


def _with(sample, index, value):
    out = list(sample)
    out[index] = value
    return out


@pytest.mark.parametrize(
    ("obj", "reason"),
    [
        (GOOD_ENTRY[:6], "7 items"),
        (_with(GOOD_ENTRY, 0, G[:19]), "guid"),
        (_with(GOOD_ENTRY, 0, "x" * 20), "guid"),
        (_with(GOOD_ENTRY, 1, ""), "namespace"),
        (_with(GOOD_ENTRY, 1, "a\nb"), "namespace"),
        (_with(GOOD_ENTRY, 2, []), "empty"),
        (_with(GOOD_ENTRY, 2, [2, 1]), "increasing"),
        (_with(GOOD_ENTRY, 2, [1, 1]), "increasing"),
        (_with(GOOD_ENTRY, 2, [-1]), "feature"),
        (_with(GOOD_ENTRY, 2, [True]), "feature"),
        (_with(GOOD_ENTRY, 2, list(range(65))), "at most"),
        (_with(GOOD_ENTRY, 3, 5), "first_seen"),
        (_with(GOOD_ENTRY, 5, 1), "first_seen"),
        (_with(GOOD_ENTRY, 3, 1.0), "first_seen_ms"),
        (_with(GOOD_ENTRY, 6, -3), "removed_ms"),
        ({"guid": G}, "array"),
    ],
)
def test_a_malformed_entry_is_refused_with_the_reason(obj, reason):
    with pytest.raises(RecordError, match=reason):
        decode_entry(_pack(obj))


@pytest.mark.parametrize(
    ("obj", "reason"),
    [
        ([[GOOD_ENTRY, GOOD_ENTRY], [], 0], "duplicate"),
        ([[GOOD_ENTRY], [G, GUIDS[1], GUIDS[2]], 5], "must not hold entries"),
        ([[], [GUIDS[1], G, GUIDS[2]], 5], "increasing"),
        ([[], [], 5], "boilerplate_expires_ms"),
        ([[GOOD_ENTRY] * 4, [], 0], "at most 3"),
        ([[], GUIDS[:4], 5], "at most 3"),
    ],
)
def test_a_malformed_feature_object_is_refused_with_the_reason(obj, reason):
    with pytest.raises(RecordError, match=reason):
        decode_object(_pack(obj), cap=3)


@pytest.mark.parametrize(
    ("obj", "reason"),
    [
        (_with(GOOD_RECORD, 3, [["ann", 5, b"v"]]), "map"),
        (_with(GOOD_RECORD, 3, {"": [5, b"v"]}), "user_id"),
        (_with(GOOD_RECORD, 3, {"ann": [5, b""]}), "encoded vote"),
        (_with(GOOD_RECORD, 3, {"ann": [5, "text"]}), "encoded vote"),
        (_with(GOOD_RECORD, 3, {"ann": [5]}), "2 items"),
        (_with(GOOD_RECORD, 4, None), "expires_ms"),
    ],
)
def test_a_malformed_object_record_is_refused_with_the_reason(obj, reason):
    with pytest.raises(RecordError, match=reason):
        decode_record(_pack(obj))


def test_an_oversized_vote_is_refused():
    with pytest.raises(RecordError):
        decode_record(_pack(_with(GOOD_RECORD, 3, {"ann": [5, b"v" * (MAX_VOTE_BYTES + 1)]})))


@pytest.mark.parametrize(
    ("obj", "reason"),
    [
        (_with(GOOD_POINTER, 2, ""), "host"),
        (_with(GOOD_POINTER, 2, "a b"), "host"),
        (_with(GOOD_POINTER, 2, "hôte"), "host"),
        (_with(GOOD_POINTER, 3, 0), "port"),
        (_with(GOOD_POINTER, 3, 65536), "port"),
        (_with(GOOD_POINTER, 1, b"x"), "node_id"),
    ],
)
def test_a_malformed_pointer_is_refused_with_the_reason(obj, reason):
    with pytest.raises(RecordError, match=reason):
        decode_pointer(_pack(obj))


@pytest.mark.parametrize("decode", DECODERS)
def test_trailing_bytes_are_refused(decode):
    with pytest.raises(RecordError, match="msgpack"):
        decode(_pack(GOOD_POINTER) + b"\x00")


@pytest.mark.parametrize("decode", DECODERS)
def test_a_non_bytes_input_is_refused(decode):
    with pytest.raises(RecordError, match="bytes"):
        decode("not bytes")


@pytest.mark.parametrize("decode", DECODERS)
@given(data=st.binary(max_size=300))
def test_garbage_bytes_raise_only_record_errors(decode, data):
    assert _outcome(decode, data) in ("decoded", "refused")


msgpack_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats()
    | st.text(max_size=30)
    | st.binary(max_size=30)
    | st.sampled_from([G, NS, "127.0.0.1"]),
    lambda inner: (
        st.lists(inner, max_size=8)
        | st.dictionaries(st.text(max_size=5) | st.binary(max_size=5), inner, max_size=4)
    ),
    max_leaves=30,
)


@pytest.mark.parametrize("decode", DECODERS)
@given(value=msgpack_values)
def test_well_formed_msgpack_of_the_wrong_shape_raises_only_record_errors(decode, value):
    assert _outcome(decode, _pack(value)) in ("decoded", "refused")


@pytest.mark.parametrize(
    ("decode", "sample"),
    [
        (decode_entry, GOOD_ENTRY),
        (decode_record, GOOD_RECORD),
        (decode_pointer, GOOD_POINTER),
        (decode_object, [[GOOD_ENTRY], [], 0]),
    ],
)
@given(data=st.data())
def test_mutated_encodings_raise_only_record_errors(decode, sample, data):
    raw = bytearray(_pack(sample))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(raw)))
    assert _outcome(decode, bytes(raw[:cut])) in ("decoded", "refused")


def test_a_map_with_integer_keys_is_refused():
    with pytest.raises(RecordError):
        decode_record(_pack(_with(GOOD_RECORD, 3, {1: [5, b"v"]})))

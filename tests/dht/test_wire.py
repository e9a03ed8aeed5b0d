"""The datagram codec's limits and the per-source token buckets (pure)."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pspam.dht import wire


def datagram(payload: object, kind: int = wire.REQUEST) -> bytes:
    return bytes([kind]) + b"m" * 20 + msgpack.packb(payload)


def test_a_request_round_trips_through_the_codec():
    data = wire.encode_datagram(wire.REQUEST, b"i" * 20, ["ping", [b"n" * 20]])
    decoded = wire.decode_datagram(data)
    assert (decoded.kind, decoded.msg_id) == (wire.REQUEST, b"i" * 20)
    assert wire.request_parts(decoded.payload) == ("ping", [b"n" * 20])


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "undersize"),
        (b"\x00" * 21, "undersize"),
        (b"\x05" + b"\x00" * 30, "bad_kind"),
        (b"\x00" * (wire.MAX_DATAGRAM + 1), "oversize"),
        (datagram("x" * 5000), "bad_msgpack"),
        (datagram(list(range(2000))), "bad_msgpack"),
        (datagram({str(i): i for i in range(100)}), "bad_msgpack"),
        (bytes([0]) + b"m" * 20 + msgpack.packb(msgpack.ExtType(1, b"x")), "bad_msgpack"),
        (datagram([1]) + b"\x01", "trailing_bytes"),
    ],
)
def test_datagrams_over_a_limit_are_refused_with_their_reason(data, reason):
    with pytest.raises(wire.WireError) as info:
        wire.decode_datagram(data)
    assert info.value.reason == reason


def test_an_oversize_reply_cannot_be_encoded():
    with pytest.raises(wire.WireError, match="too_large"):
        wire.encode_datagram(wire.RESPONSE, b"i" * 20, b"x" * wire.MAX_DATAGRAM)


@given(st.binary(max_size=4096))
def test_decoding_any_bytes_either_succeeds_or_raises_wire_error(data):
    try:
        wire.decode_datagram(data)
    except wire.WireError as exc:
        assert exc.reason


@pytest.mark.parametrize(
    ("check", "value"),
    [
        (wire.node_id, b"short"),
        (wire.node_id, "x" * 20),
        (wire.features, []),
        (wire.features, [1, 1]),
        (wire.features, [1 << 64]),
        (wire.features, [True]),
        (wire.features, list(range(65))),
        (wire.namespace, ""),
        (wire.namespace, "x" * 65),
        (wire.namespace, "bad\nns"),
        (wire.ttl, 0),
        (wire.ttl, 65),
        (wire.contact, [b"x" * 20, "not an ip", 80]),
        (wire.contact, [b"x" * 20, "127.0.0.1", 0]),
        (wire.contacts, [[b"x" * 20, "127.0.0.1", 1]] * 41),
    ],
)
def test_argument_checks_refuse_out_of_range_values(check, value):
    with pytest.raises(wire.WireError, match="bad_args"):
        check(value)


def test_thres_must_be_between_one_and_the_vector_length():
    assert wire.thres(3, 10) == 3
    for bad in (0, 11, -1, "3"):
        with pytest.raises(wire.WireError):
            wire.thres(bad, 10)


def test_a_token_bucket_allows_a_burst_then_the_rate():
    buckets = wire.TokenBuckets(rate=10, burst=5)
    assert [buckets.allow("a", 0.0) for _ in range(6)] == [True] * 5 + [False]
    assert buckets.allow("b", 0.0)  # another source has its own bucket
    assert buckets.allow("a", 0.1)  # one token back after 1/rate seconds
    assert not buckets.allow("a", 0.1)


def test_token_buckets_keep_a_bounded_number_of_sources():
    buckets = wire.TokenBuckets(rate=1, burst=1, max_sources=100)
    for i in range(1000):
        buckets.allow(f"10.0.{i // 256}.{i % 256}", 0.0)
    assert len(buckets._buckets) == 100

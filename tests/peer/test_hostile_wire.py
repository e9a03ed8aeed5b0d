"""A live peer under hostile datagrams and API bytes keeps serving, and counts the drops."""

from __future__ import annotations

import asyncio
import os
import random
import socket

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pspam.dht import wire
from p2pspam.dht.protocol import ProtocolLimits
from p2pspam.peer.localnet import api_call, local_config, local_network

from .helpers import Authority, LoopRunner, random_vector

NID, KEY = b"x" * 20, b"k" * 20


@pytest.fixture(scope="module")
def net():
    runner = LoopRunner()
    limits = ProtocolLimits(rpc_timeout_s=1.0, rate_per_source=2000, burst_per_source=1000)
    cm = local_network(4, Authority().public_key, node_config=local_config(limits=limits))
    network = runner.run(cm.__aenter__())
    network.runner = runner
    rng = random.Random(3)
    network.vector, network.guid = random_vector(rng), rng.randbytes(20)
    runner.run(network.peers[1].node.publish_approx(network.vector, network.guid))
    network.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    yield network
    network.sock.close()
    runner.run(cm.__aexit__(None, None, None))
    runner.close()


def blast(net, datagrams: list[bytes], target: int = 0) -> None:
    address = net.peers[target].node.listen_address
    for i, data in enumerate(datagrams):
        net.sock.sendto(data, address)
        if i % 20 == 19:  # let the peer read, so the kernel buffer does not overflow
            net.runner.run(asyncio.sleep(0.002))
    net.runner.run(asyncio.sleep(0.05))


def request(name: str, args: list) -> bytes:
    return bytes([wire.REQUEST]) + os.urandom(20) + msgpack.packb([name, args])


def still_serving(net, target: int = 0) -> None:
    victim = net.peers[target].node
    other = net.peers[2].node
    ok, answer = net.runner.run(other.protocol.call(victim.listen_address, "ping", other.node_id))
    assert ok and answer == victim.node_id
    result = net.runner.run(victim.route_approx(net.vector, 3, use_cache=False))
    assert [m.guid for m in result.matches] == [net.guid]


def drops(net, target: int = 0) -> dict[str, int]:
    counters = net.peers[target].node.counters
    return {k[5:]: v for k, v in counters.items() if k.startswith("drop.")}


@settings(max_examples=150)
@given(st.binary(max_size=2048))
def test_random_bytes_never_break_the_peer(net, data):
    blast(net, [data])


def test_the_peer_still_answers_pings_and_queries_after_garbage(net):
    rng = random.Random(5)
    received = net.peers[0].node.counters["datagrams_in"]
    dropped = sum(drops(net).values())
    blast(net, [rng.randbytes(rng.randrange(0, 3000)) for _ in range(300)])
    received = net.peers[0].node.counters["datagrams_in"] - received
    assert received >= 250
    assert sum(drops(net).values()) - dropped == received
    still_serving(net)


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (msgpack.packb({"not": "a list"}), "bad_shape"),
        (msgpack.packb(["ping"]), "bad_shape"),
        (msgpack.packb([7, []]), "bad_shape"),
        (msgpack.packb(["ping", {"a": 1}]), "bad_shape"),
        (msgpack.packb(["no_such_rpc", []]), "unknown_rpc"),
        (msgpack.packb(["__class__", []]), "unknown_rpc"),
        (msgpack.packb(["store", [b"x" * 20, b"k" * 20, "v"]]), "unknown_rpc"),
        (msgpack.packb(["ping", [b"short"]]), "bad_args"),
        (msgpack.packb(["ping", [True]]), "bad_args"),
        (msgpack.packb(["find_node", [b"x" * 20]]), "bad_args"),
        (
            msgpack.packb(["find_approx", [NID, b"q", KEY, "ns", [1, 2], 3, True, True]]),
            "bad_args",
        ),
        (
            msgpack.packb(["find_approx", [NID, b"q", KEY, "ns", [1, 1], 1, True, True]]),
            "bad_args",
        ),
        (
            msgpack.packb(["find_approx", [NID, b"q", KEY, "ns", [-1], 1, True, True]]),
            "bad_args",
        ),
        (msgpack.packb(["store_batch", [b"x" * 20, [[b"k" * 20, [[], [], 5]]], []]]), "bad_args"),
        (msgpack.packb(["store_batch", [b"x" * 20, [], [["bad record"]]]]), "bad_args"),
        (msgpack.packb(["store_pointer", [b"x" * 20, []]]), "bad_args"),
        (msgpack.packb(["ping", [b"x" * 20]]) + b"trailing", "trailing_bytes"),
        (b"\xc1", "bad_msgpack"),
        (b"\x91" * 5000, "bad_msgpack"),
        (msgpack.packb(["ping", [b"x" * 20]])[:-3], "bad_msgpack"),
    ],
)
def test_each_malformed_request_is_counted_under_its_reason(net, payload, reason):
    before = drops(net).get(reason, 0)
    blast(net, [bytes([wire.REQUEST]) + os.urandom(20) + payload])
    assert drops(net).get(reason, 0) == before + 1


def test_oversize_undersize_and_unknown_kinds_are_counted(net):
    before = drops(net)
    blast(net, [b"\x00" * (wire.MAX_DATAGRAM + 1), b"\x00" * 10, b"\x07" + b"\x00" * 40])
    after = drops(net)
    for reason in ("oversize", "undersize", "bad_kind"):
        assert after.get(reason, 0) == before.get(reason, 0) + 1


def test_an_entry_stuffed_under_a_foreign_key_is_refused(net):
    rng = random.Random(9)
    vector = random_vector(rng)
    entry = [rng.randbytes(20), vector.namespace, list(vector.features), 1, 1, 2, None]
    before = drops(net).get("bad_args", 0)
    blast(
        net,
        [request("store_batch", [rng.randbytes(20), [[rng.randbytes(20), [[entry], [], 0]]], []])],
    )
    assert drops(net).get("bad_args", 0) == before + 1
    assert net.peers[0].store.get_feature_object(bytes(20)) is None


def test_unsolicited_responses_are_dropped(net):
    before = drops(net).get("unsolicited", 0)
    blast(net, [bytes([wire.RESPONSE]) + os.urandom(20) + msgpack.packb(True)])
    assert drops(net).get("unsolicited", 0) == before + 1


def test_a_flood_from_one_source_is_rate_limited_and_the_peer_keeps_serving(net):
    ping = request("ping", [os.urandom(20)])
    blast(net, [ping] * 3000, target=3)
    assert drops(net, 3).get("rate_limited", 0) > 0
    net.runner.run(asyncio.sleep(1.0))  # let the bucket refill for other tests
    still_serving(net, 3)


def test_status_shows_the_drops_by_reason(net):
    reply = net.runner.run(api_call(net.peers[0].api_address, "status"))
    reported = reply["result"]["counters"]["drops"]
    assert reported.get("unknown_rpc", 0) >= 3
    assert reported.get("bad_msgpack", 0) >= 1


async def raw_api(address, data: bytes) -> list[dict]:
    reader, writer = await asyncio.open_connection(*address)
    writer.write(data)
    await writer.drain()
    unpacker = msgpack.Unpacker(raw=False)
    replies = []
    try:
        while chunk := await asyncio.wait_for(reader.read(65536), 5):
            unpacker.feed(chunk)
            replies.extend(unpacker)
            if replies:
                break
    finally:
        writer.close()
    return replies


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (msgpack.packb([1, 2, 3]), "bad_request"),
        (msgpack.packb({"id": "x", "op": "status"}), "bad_request"),
        (msgpack.packb({"id": 1, "op": "status", "args": [], "x": 1}), "bad_request"),
        (msgpack.packb({"id": 1, "op": "status", "args": 5}), "bad_request"),
        (b"\xc1\xc1\xc1", "bad_request"),
        (msgpack.packb({"id": 1, "op": "check", "args": {"blob": b"x" * (2 << 20)}}), "too_large"),
    ],
)
def test_hostile_api_requests_get_error_replies(net, data, code):
    replies = net.runner.run(raw_api(net.peers[0].api_address, data))
    assert replies and replies[0]["ok"] is False
    assert replies[0]["error"]["code"] == code


def test_requests_are_answered_by_id_when_pipelined(net):
    async def pipelined():
        reader, writer = await asyncio.open_connection(*net.peers[0].api_address)
        for i in range(5):
            writer.write(msgpack.packb({"id": 100 + i, "op": "status", "args": {}}))
        await writer.drain()
        unpacker = msgpack.Unpacker(raw=False)
        got = []
        while len(got) < 5:
            unpacker.feed(await asyncio.wait_for(reader.read(65536), 5))
            got.extend(unpacker)
        writer.close()
        return got

    replies = net.runner.run(pipelined())
    assert sorted(r["id"] for r in replies) == [100, 101, 102, 103, 104]
    assert all(r["ok"] for r in replies)

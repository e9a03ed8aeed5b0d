"""Votes through the network: revocation gossip, tampered votes at storing peers, the API
allow-list."""

from __future__ import annotations

import asyncio
import os
import socket

import msgpack
import pytest

from p2pspam.adolr.records import new_record, record_to_wire
from p2pspam.auth.revocation import sign_revocations
from p2pspam.dht import wire
from p2pspam.peer.api import ApiServer, parse_networks
from p2pspam.peer.localnet import api_call, local_config, local_network

from .helpers import Authority, LoopRunner, demo_vectors, now_ms, spam_vote


@pytest.fixture(scope="module")
def net():
    runner = LoopRunner()
    authority = Authority()
    cm = local_network(8, authority.public_key, node_config=local_config())
    network = runner.run(cm.__aenter__())
    network.runner, network.authority = runner, authority
    yield network
    runner.run(cm.__aexit__(None, None, None))
    runner.close()


def check(net, peer: int, vector) -> list[dict]:
    args = {"namespace": vector.namespace, "features": list(vector.features), "thres": 3}
    reply = net.runner.run(api_call(net.peers[peer].api_address, "check", args))
    assert reply["ok"], reply
    return reply["result"]["matches"]


def test_a_revocation_list_pushed_to_one_peer_stops_the_users_votes_everywhere(net):
    spam, merged, *_ = demo_vectors()
    carol, dave = net.authority.user("carol"), net.authority.user("dave")
    for user in (carol, dave):
        reply = net.runner.run(
            api_call(net.peers[1].api_address, "publish", {"vote": spam_vote(user, spam)})
        )
        assert reply["ok"], reply
    assert check(net, 6, merged)[0]["tally"]["spam"] == 2
    signed = sign_revocations(net.authority.key, 5, now_ms(), {"carol"}).encode()
    reply = net.runner.run(api_call(net.peers[0].api_address, "revocations", {"list": signed}))
    assert reply["result"] == {"accepted": True}
    net.runner.run(asyncio.sleep(0.5))  # gossip
    for peer in range(1, 8):
        assert net.peers[peer].verifier.is_revoked("carol"), peer
    assert check(net, 6, merged)[0]["tally"]["spam"] == 1
    older = sign_revocations(net.authority.key, 4, now_ms(), set()).encode()
    reply = net.runner.run(api_call(net.peers[3].api_address, "revocations", {"list": older}))
    assert reply["result"] == {"accepted": False}
    assert net.peers[3].verifier.is_revoked("carol")


def send_store_batch(net, target: int, record) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    payload = ["store_batch", [os.urandom(20), [], [record_to_wire(record)]]]
    sock.sendto(
        bytes([wire.REQUEST]) + os.urandom(20) + msgpack.packb(payload),
        net.peers[target].node.listen_address,
    )
    sock.close()
    net.runner.run(asyncio.sleep(0.2))


def test_a_storing_peer_drops_a_vote_altered_in_transit(net):
    vector = demo_vectors()[3]
    eve = net.authority.user("eve")
    vote = bytearray(spam_vote(eve, vector))
    vote[-70] ^= 0x01  # flip a bit of the signed record
    record = new_record(
        vector.guid,
        vector.namespace,
        vector.features,
        now_ms(),
        10**9,
        {"eve": (now_ms(), bytes(vote))},
    )
    node = net.peers[4].node
    before = sum(v for k, v in node.counters.items() if k.startswith("vote_rejected."))
    send_store_batch(net, 4, record)
    stored = net.peers[4].store.get_object(vector.guid)
    assert stored is not None and "eve" not in stored.votes
    after = sum(v for k, v in node.counters.items() if k.startswith("vote_rejected."))
    assert after == before + 1


def test_a_vote_filed_under_another_user_is_dropped(net):
    vector = demo_vectors()[4]
    frank = net.authority.user("frank")
    encoded = spam_vote(frank, vector)
    record = new_record(
        vector.guid,
        vector.namespace,
        vector.features,
        now_ms(),
        10**9,
        {"grace": (now_ms(), encoded)},
    )
    send_store_batch(net, 5, record)
    stored = net.peers[5].store.get_object(vector.guid)
    assert stored is not None and stored.votes == {}
    assert net.peers[5].node.counters.get("vote_rejected.mismatch", 0) >= 1


def test_clients_outside_the_allow_list_are_disconnected():
    async def scenario() -> tuple[bytes, int]:
        async def dispatch(op, args):
            return {"op": op}

        server = ApiServer(dispatch, parse_networks(["10.0.0.0/8"]))
        address = await server.start("127.0.0.1", 0)
        reader, writer = await asyncio.open_connection(*address)
        writer.write(msgpack.packb({"id": 1, "op": "status", "args": {}}))
        await writer.drain()
        try:
            data = await asyncio.wait_for(reader.read(100), 5)
        except ConnectionResetError:
            data = b""
        writer.close()
        await server.stop()
        return data, server.counters["drop.client_not_allowed"]

    data, refused = asyncio.run(scenario())
    assert data == b"" and refused == 1


def test_a_client_inside_the_allow_list_is_served():
    async def scenario() -> dict:
        async def dispatch(op, args):
            return {"op": op}

        server = ApiServer(dispatch, parse_networks(["127.0.0.0/8"]))
        address = await server.start("127.0.0.1", 0)
        try:
            return await api_call(address, "anything")
        finally:
            await server.stop()

    assert asyncio.run(scenario()) == {"id": 1, "ok": True, "result": {"op": "anything"}}


def test_withdrawing_the_last_vote_unpublishes_the_vector(net):
    from p2pspam.auth.votes import sign_vote
    from p2pspam.fingerprint.vector import FeatureVector

    base = demo_vectors()[3]
    vector = FeatureVector(
        base.scheme,
        base.namespace,
        base.params,
        tuple(f ^ 0x5A5A for f in base.features),
        bytes(20 - 1) + b"\x07",
        base.chars,
    )
    henry = net.authority.user("henry")
    reply = net.runner.run(
        api_call(net.peers[2].api_address, "publish", {"vote": spam_vote(henry, vector)})
    )
    assert reply["ok"], reply
    assert check(net, 7, vector)[0]["tally"]["spam"] == 1
    withdraw = sign_vote(henry, vector, "withdraw", now_ms() + 1000).encode()
    bad = net.runner.run(
        api_call(net.peers[2].api_address, "unpublish", {"vote": spam_vote(henry, vector)})
    )
    assert bad["error"]["code"] == "bad_request"
    reply = net.runner.run(api_call(net.peers[2].api_address, "unpublish", {"vote": withdraw}))
    assert reply["ok"], reply
    for peer in (3, 5, 7):
        net.peers[peer].node._cache.clear()
        assert check(net, peer, vector) == []

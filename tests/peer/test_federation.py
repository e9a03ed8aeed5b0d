"""Closed federation: peers certified by the authority talk to each other; a stranger
(another authority's credential, or none) is refused and cannot join."""

from __future__ import annotations

import asyncio
import random

from p2pspam.auth.peers import issue_peer_key
from p2pspam.dht import wire
from p2pspam.peer.localnet import local_config, local_network

from .helpers import DAY_MS, Authority, LoopRunner, now_ms, random_vector


def test_certified_peers_work_together_and_strangers_are_refused():
    runner = LoopRunner()
    authority, other = Authority(), Authority()
    now = now_ms()

    def certified(index: int):
        return issue_peer_key(authority.key, f"peer{index}", now - DAY_MS, now + DAY_MS)

    async def scenario():
        rng = random.Random(6)
        async with local_network(
            6, authority.public_key, node_config=local_config(), peer_keys=certified
        ) as net:
            vector, guid = random_vector(rng), rng.randbytes(20)
            await net.peers[1].node.publish_approx(vector, guid)
            found = await net.peers[4].node.route_approx(vector, 3, use_cache=False)
            forged = issue_peer_key(other.key, "mallory", now - DAY_MS, now + DAY_MS)
            stranger = await net.add_peer(peer_key=forged)
            uncertified_contacts = len(stranger.node.contacts())
            lost = await stranger.node.route_approx(vector, 3, use_cache=False)
            # a raw request from an address that never shook hands is dropped
            ok, _ = await stranger.node.protocol.raw_call(
                net.peers[0].node.listen_address, "ping", stranger.node.node_id
            )
            await asyncio.sleep(0.1)
            drops = net.peers[0].node.counters.get("drop.unverified_peer", 0)
            leaked = any(
                n.id == stranger.node.node_id for p in net.peers[:6] for n in p.node.contacts()
            )
            return found, uncertified_contacts, lost, ok, drops, leaked

    try:
        found, contacts, lost, ok, drops, leaked = runner.run(scenario())
    finally:
        runner.close()
    assert [m.guid for m in found.matches] and found.matches[0].overlap == 10
    assert contacts == 0 and lost.matches == []
    assert ok is False and drops >= 1
    assert not leaked


def test_handshake_arguments_are_validated():
    from p2pspam.dht.federation import confirm_args, hello_args

    for bad in ([b"x" * 20, b"short", b"cred"], [b"x" * 20, b"c" * 32], []):
        try:
            hello_args(bad)
        except wire.WireError as exc:
            assert exc.reason == "bad_args"
        else:
            raise AssertionError("accepted")
    for bad in ([b"x" * 20, b"p" * 65], [b"x" * 19, b"p"]):
        try:
            confirm_args(bad)
        except wire.WireError as exc:
            assert exc.reason == "bad_args"
        else:
            raise AssertionError("accepted")

"""Replication: a node joining closer to a key receives what it should hold; periodic
republication restores replicas lost to churn."""

from __future__ import annotations

import asyncio
import random

from p2pspam.adolr.keys import feature_key
from p2pspam.dht.node import _int_id
from p2pspam.peer.localnet import local_config, local_network

from .helpers import Authority, LoopRunner, random_vector


def holders(net, key: bytes) -> set[int]:
    return {
        i
        for i, p in enumerate(net.peers)
        if i not in net._stopped and p.store.get_feature_object(key) is not None
    }


def test_a_new_peer_receives_the_records_of_keys_it_is_close_to():
    runner = LoopRunner()
    rng = random.Random(4)

    async def scenario():
        config = local_config(replicas=3)
        async with local_network(12, Authority().public_key, node_config=config) as net:
            vectors = [(random_vector(rng), rng.randbytes(20)) for _ in range(8)]
            for vector, guid in vectors:
                await net.peers[rng.randrange(12)].node.publish_approx(vector, guid)
            newcomer = await net.add_peer()
            await asyncio.sleep(1.0)  # hand-offs run in the background
            me = _int_id(newcomer.node.node_id)
            expected = received = 0
            for vector, _ in vectors:
                for f in vector.features:
                    key = feature_key(vector.namespace, f)
                    ranked = sorted(
                        (_int_id(p.node.node_id) ^ _int_id(key), i) for i, p in enumerate(net.peers)
                    )
                    if me ^ _int_id(key) <= ranked[2][0]:  # among the 3 closest now
                        expected += 1
                        received += newcomer.store.get_feature_object(key) is not None
            return expected, received, newcomer.node.counters.get("stored.objects", 0)

    try:
        expected, received, stored = runner.run(scenario())
    finally:
        runner.close()
    assert expected > 0
    assert received == expected
    assert stored >= expected


def test_republication_restores_lost_replicas():
    runner = LoopRunner()
    rng = random.Random(8)

    async def scenario():
        config = local_config(replicas=3)
        async with local_network(12, Authority().public_key, node_config=config) as net:
            vector, guid = random_vector(rng), rng.randbytes(20)
            await net.peers[0].node.publish_approx(vector, guid)
            await asyncio.sleep(0.3)  # let hand-offs of the join settle
            key = feature_key(vector.namespace, vector.features[0])
            before = holders(net, key) - {0}
            for index in sorted(before)[:2]:
                await net.stop_peer(index)
            lost = len(holders(net, key) - {0})
            await net.peers[0].node.republish()
            return len(before), lost, len(holders(net, key) - {0})

    try:
        before, lost, after = runner.run(scenario())
    finally:
        runner.close()
    assert lost < before
    assert after >= 3

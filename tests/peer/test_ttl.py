"""TTL semantics on a sparse loopback network: TTL = maximum number of lookup rounds.

Single-feature vectors (THRES = 1) make each query one lookup, as in the paper's Fig. 10
experiment. Small buckets (ksize 2, alpha 1, 2 replicas) make lookups take several
rounds on 40 peers."""

from __future__ import annotations

import asyncio
import random
import statistics

import pytest

from p2pspam.adolr.keys import feature_key
from p2pspam.adolr.records import Vector
from p2pspam.dht.node import _int_id
from p2pspam.peer.localnet import local_config, local_network

from .helpers import NAMESPACE, Authority, LoopRunner

PEERS = 40


@pytest.fixture(scope="module")
def net():
    runner = LoopRunner()
    config = local_config(ksize=2, replicas=2, alpha=1)
    cm = local_network(PEERS, Authority().public_key, node_config=config)
    network = runner.run(cm.__aenter__())
    network.runner = runner
    network.rng = random.Random(99)
    yield network
    runner.run(cm.__aexit__(None, None, None))
    runner.close()


def one_feature(rng: random.Random) -> Vector:
    return Vector(NAMESPACE, (rng.getrandbits(64),))


def publish(net, vector: Vector, guid: bytes, publishers: list[int]) -> None:
    for p in publishers:
        net.runner.run(net.peers[p].node.publish_approx(vector, guid))


def rounds_to_answer(net, vector: Vector, queriers: list[int]) -> list[int]:
    async def all_queries():
        return await asyncio.gather(
            *(net.peers[q].node.route_approx(vector, 1, use_cache=False) for q in queriers)
        )

    results = net.runner.run(all_queries())
    assert all(r.matches for r in results), "an exhaustive query missed a published vector"
    return [r.rounds for r in results]


def test_more_publishers_mean_fewer_rounds_to_the_first_answer(net):
    rng = net.rng
    means = {}
    for publishers in (1, 20):
        samples = []
        for _ in range(5):
            vector, guid = one_feature(rng), rng.randbytes(20)
            chosen = rng.sample(range(PEERS), publishers)
            publish(net, vector, guid, chosen)
            queriers = [q for q in range(PEERS) if q not in chosen]
            samples += rounds_to_answer(net, vector, queriers)
        means[publishers] = statistics.mean(samples)
    assert means[20] < means[1]


def holds(peer, key: bytes) -> bool:
    return peer.store.get_feature_object(key) is not None or bool(peer.store.get_pointers(key))


def far_pairs(net, key: bytes) -> list[int]:
    """Peers whose local store and first-round contact know nothing of ``key``."""
    by_id = {p.node.node_id: p for p in net.peers}
    far = []
    for index, peer in enumerate(net.peers):
        if holds(peer, key):
            continue
        seeds = peer.node._seeds(key)
        first = sorted(seeds, key=lambda s: s[0] ^ _int_id(key))[:1]
        if all(not holds(by_id[n.to_bytes(20, "big")], key) for n, _ in first):
            far.append(index)
    return far


def test_ttl_1_misses_a_far_vector_that_no_ttl_always_finds(net):
    rng = net.rng
    checked = 0
    for _ in range(30):
        if checked >= 3:
            break
        vector, guid = one_feature(rng), rng.randbytes(20)
        publish(net, vector, guid, [rng.randrange(PEERS)])
        key = feature_key(NAMESPACE, vector.features[0])
        for q in far_pairs(net, key)[:4]:
            node = net.peers[q].node
            limited = net.runner.run(node.route_approx(vector, 1, ttl=1, use_cache=False))
            assert limited.matches == [] and limited.rounds <= 1
            full = net.runner.run(node.route_approx(vector, 1, use_cache=False))
            assert [m.guid for m in full.matches] == [guid]
            checked += 1
    assert checked >= 3, "the network was too dense to find far vectors"


def test_a_query_never_travels_more_rounds_than_its_ttl(net):
    rng = net.rng
    for ttl in (1, 2, 3):
        for q in rng.sample(range(PEERS), 5):
            result = net.runner.run(
                net.peers[q].node.route_approx(one_feature(rng), 1, ttl=ttl, use_cache=False)
            )
            assert result.matches == [] and result.rounds <= ttl

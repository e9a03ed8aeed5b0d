"""Churn: after publication, 30% of the peers (chosen at random) stop; every vector is
still found from every remaining peer."""

from __future__ import annotations

import asyncio
import random

from p2pspam.dht.protocol import ProtocolLimits
from p2pspam.peer.localnet import local_config, local_network

from .helpers import Authority, LoopRunner, random_vector

PEERS = 32


def test_every_vector_is_found_after_30_percent_of_the_peers_stop():
    runner = LoopRunner()
    rng = random.Random(2024)
    config = local_config(limits=ProtocolLimits(rpc_timeout_s=0.5))

    published: list = []

    async def scenario() -> list[tuple[int, int, list[bytes]]]:
        async with local_network(PEERS, Authority().public_key, node_config=config) as net:
            for _ in range(6):
                publisher = rng.randrange(PEERS)
                vector, guid = random_vector(rng), rng.randbytes(20)
                await net.peers[publisher].node.publish_approx(vector, guid)
                published.append((vector, guid))
            stopped = rng.sample(range(PEERS), int(PEERS * 0.3))
            for index in stopped:
                await net.stop_peer(index)
            live = [i for i in range(PEERS) if i not in stopped]

            async def query(peer: int, vector, guid) -> tuple[int, int, list[bytes]]:
                result = await net.peers[peer].node.route_approx(vector, 3, use_cache=False)
                return peer, published.index((vector, guid)), [m.guid for m in result.matches]

            outcomes = []
            for vector, guid in published:
                outcomes += await asyncio.gather(*(query(p, vector, guid) for p in live))
            return [(p, i, found) for p, i, found in outcomes]

    try:
        outcomes = runner.run(scenario(), timeout=240)
    finally:
        runner.close()
    assert len(outcomes) == 6 * (PEERS - int(PEERS * 0.3))
    guids = [guid for _, guid in published]
    missed = [(peer, i) for peer, i, found in outcomes if found != [guids[i]]]
    assert missed == []

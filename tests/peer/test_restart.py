"""A restarted peer keeps its node id and rejoins through the contacts it saved."""

from __future__ import annotations

from p2pspam.peer.localnet import local_config, local_network
from p2pspam.peer.service import Peer, PeerSettings

from .helpers import Authority, LoopRunner


def test_a_restarted_peer_keeps_its_id_and_rejoins_without_bootstrap_addresses():
    runner = LoopRunner()
    authority = Authority()

    async def scenario() -> tuple[bytes, bytes, int]:
        async with local_network(4, authority.public_key, node_config=local_config()) as net:
            leaving = net.peers[3]
            node_id = leaving.node.node_id
            data_dir = leaving.settings.data_dir
            await net.stop_peer(3)
            again = Peer(
                PeerSettings(
                    data_dir=data_dir,
                    authority_public_key=authority.public_key,
                    listen=("127.0.0.1", 0),
                    api=None,
                    node=local_config(),
                )
            )
            await again.start()
            try:
                return node_id, again.node.node_id, len(again.node.contacts())
            finally:
                await again.stop()

    try:
        before, after, contacts = runner.run(scenario())
    finally:
        runner.close()
    assert after == before
    assert contacts >= 3

"""A local network of real peers on loopback UDP, for tests, benchmarks and the demo.

:func:`local_network` starts ``n`` :class:`~p2pspam.peer.service.Peer` objects in this
process on ``127.0.0.1`` (random free ports), each with its own data directory under a
temporary (or given) directory and the given authority public key, joins them through
the first peer, waits until every routing table is filled, and stops them all on exit::

    async with local_network(16, authority_public_key) as net:
        await net.peers[3].node.route_approx(vector, thres=3)

:func:`peer_command` builds the ``p2pspam peer ...`` command line to run one peer as a
separate process (the crash test kills it with SIGKILL), and :func:`wait_for_api` waits
until such a process answers on its agent API.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import msgpack

from p2pspam.auth.peers import PeerKey
from p2pspam.dht.node import NodeConfig
from p2pspam.peer.service import Peer, PeerSettings

LOOPBACK = "127.0.0.1"


@dataclass
class LocalNetwork:
    """Running peers of a local network (``peers[0]`` is the bootstrap peer)."""

    peers: list[Peer]
    root: Path
    authority_public_key: bytes
    node_config: NodeConfig
    with_api: bool = True
    # closed federation: index -> the peer's credential (None: an open network)
    peer_keys: Callable[[int], PeerKey | None] | None = None
    _stopped: set[int] = field(default_factory=set)

    @property
    def bootstrap_address(self) -> tuple[str, int]:
        """The UDP address of the first peer."""
        address = self.peers[0].node.listen_address
        assert address is not None
        return address

    def live(self) -> list[Peer]:
        """The peers not stopped."""
        return [p for i, p in enumerate(self.peers) if i not in self._stopped]

    async def add_peer(
        self,
        bootstrap: Sequence[tuple[str, int]] | None = None,
        peer_key: PeerKey | None = None,
    ) -> Peer:
        """Start one more peer and join it through ``bootstrap`` (default: peer 0); with
        ``peer_key`` (or ``peer_keys``), as a member of a closed federation."""
        index = len(self.peers)
        if peer_key is None and self.peer_keys is not None:
            peer_key = self.peer_keys(index)
        seeds = tuple(bootstrap) if bootstrap is not None else ()
        if bootstrap is None and self.peers:
            seeds = (self.bootstrap_address,)
        peer = Peer(
            PeerSettings(
                data_dir=self.root / f"peer{index:03d}",
                authority_public_key=self.authority_public_key,
                listen=(LOOPBACK, 0),
                api=(LOOPBACK, 0) if self.with_api else None,
                bootstrap=seeds,
                node=self.node_config,
                peer_key=peer_key,
            )
        )
        await peer.start()
        self.peers.append(peer)
        return peer

    async def stop_peer(self, index: int) -> None:
        """Stop peer ``index`` (as if it left the network)."""
        if index in self._stopped:
            return
        self._stopped.add(index)
        await self.peers[index].stop()

    async def refresh(self) -> None:
        """Let every live peer look up its own id again (fills routing tables)."""
        await asyncio.gather(*(p.node.bootstrap([]) for p in self.live()))

    async def close(self) -> None:
        """Stop every live peer."""
        for i in range(len(self.peers)):
            with contextlib.suppress(Exception):
                await self.stop_peer(i)


@contextlib.asynccontextmanager
async def local_network(
    n: int,
    authority_public_key: bytes,
    *,
    root: Path | None = None,
    node_config: NodeConfig | None = None,
    with_api: bool = True,
    join_concurrency: int = 8,
    peer_keys: Callable[[int], PeerKey | None] | None = None,
) -> AsyncIterator[LocalNetwork]:
    """Start ``n`` joined peers on loopback; stop them (and delete the temporary
    directory, if one was made) on exit."""
    if n < 1:
        raise ValueError("a local network needs at least one peer")
    tmp = None
    if root is None:
        tmp = tempfile.TemporaryDirectory(prefix="p2pspam-localnet-")
        root = Path(tmp.name)
    config = node_config or NodeConfig()
    # No periodic republication during short-lived networks unless asked.
    net = LocalNetwork([], root, authority_public_key, config, with_api, peer_keys)
    try:
        await net.add_peer(bootstrap=())
        sem = asyncio.Semaphore(join_concurrency)

        async def join() -> None:
            async with sem:
                await net.add_peer()

        # Peers are created in order so that data directories keep their indices.
        for _ in range(n - 1):
            await join()
        await net.refresh()
        yield net
    finally:
        await net.close()
        if tmp is not None:
            tmp.cleanup()


def local_config(**overrides: object) -> NodeConfig:
    """A ``NodeConfig`` for local networks: short RPC timeouts, no background
    republication within a test's lifetime."""
    from p2pspam.dht.protocol import ProtocolLimits

    # Every local peer shares the source address 127.0.0.1, so the per-source rate limit
    # (keyed by IP) is raised to what the whole network may send (unless ``limits`` is
    # given).
    limits = ProtocolLimits(rpc_timeout_s=2.0, rate_per_source=1e6, burst_per_source=1e6)
    base = NodeConfig(republish_interval_s=3600.0, limits=limits)
    return replace(base, **overrides)  # type: ignore[arg-type]


def peer_command(
    data_dir: Path,
    authority_file: Path,
    listen: tuple[str, int],
    api: tuple[str, int],
    bootstrap: Sequence[tuple[str, int]] = (),
) -> list[str]:
    """The command line running one peer as a separate process."""
    cmd = [
        sys.executable,
        "-m",
        "p2pspam.cli",
        "peer",
        "--data-dir",
        str(data_dir),
        "--listen",
        f"{listen[0]}:{listen[1]}",
        "--api",
        f"{api[0]}:{api[1]}",
        "--authority-key",
        str(authority_file),
    ]
    for host, port in bootstrap:
        cmd += ["--bootstrap", f"{host}:{port}"]
    return cmd


async def api_call(
    address: tuple[str, int], op: str, args: dict | None = None, timeout: float = 10.0
) -> dict:
    """Send one agent API request and return the reply map (a minimal client for
    tests and ``p2pspam peer status``)."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection(*address), timeout)
    try:
        writer.write(msgpack.packb({"id": 1, "op": op, "args": args or {}}, use_bin_type=True))
        await writer.drain()
        unpacker = msgpack.Unpacker(raw=False, max_buffer_size=1 << 20)
        while True:
            data = await asyncio.wait_for(reader.read(65536), timeout)
            if not data:
                raise ConnectionError("the peer closed the connection without a reply")
            unpacker.feed(data)
            for reply in unpacker:
                return reply
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


async def wait_for_api(address: tuple[str, int], timeout: float = 30.0) -> dict:
    """Poll ``status`` on ``address`` until the peer answers; return its status."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            reply = await api_call(address, "status", timeout=2.0)
            if reply.get("ok"):
                return reply["result"]
        except (OSError, TimeoutError, ConnectionError):
            pass
        if loop.time() > deadline:
            raise TimeoutError(f"no peer answered on {address[0]}:{address[1]}")
        await asyncio.sleep(0.1)

"""A throw-away p2pspam world on loopback for the demo, tests and benchmarks: an
authority, users with credential files and agent configs, and N real peers
(``p2pspam.peer.localnet``, asyncio) running in a background thread, so that trio
agents and agent subprocesses talk to them over real TCP and UDP."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class LocalWorld:
    """The authority, the peers' agent API addresses and a directory for files."""

    root: Path
    authority: Any
    api_addresses: list[str]
    network: Any = None
    loop: asyncio.AbstractEventLoop | None = None

    def add_user(self, user_id: str, peers: list[str] | None = None, **agent: Any) -> Path:
        """Issue a credential for ``user_id`` and write it with an agent config; return
        the config path (extra ``[agent]`` keys, e.g. ``request_timeout``, as keywords)."""
        from p2pspam.auth.credentials import write_user_key

        user = self.authority.issue(user_id, 30, int(time.time() * 1000))
        home = self.root / "users" / user_id
        home.mkdir(parents=True, exist_ok=True)
        key = home / "user.key"
        if not key.exists():
            write_user_key(key, user)
        return write_config(home / "agent.toml", peers or self.api_addresses, key, **agent)

    def call(self, coro_fn: Any, timeout: float = 60.0) -> Any:
        """Run ``coro_fn(network)`` on the peers' event loop and return its result."""
        assert self.loop is not None
        future = asyncio.run_coroutine_threadsafe(coro_fn(self.network), self.loop)
        return future.result(timeout)


def write_config(path: Path, peers: list[str], credential: Path, **agent: Any) -> Path:
    """Write an agent config with ``peers`` and ``credential`` (and extra keys)."""
    import json

    lines = [
        "[agent]",
        f"peers = {json.dumps(peers)}",
        f"credential = {json.dumps(str(credential))}",
    ]
    for key, value in agent.items():
        lines.append(f"{key} = {json.dumps(value)}")
    lines.append(f"state_dir = {json.dumps(str(path.parent / 'state'))}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@contextmanager
def local_world(
    root: Path, peers: int = 1, *, start_timeout: float = 120.0
) -> Iterator[LocalWorld]:
    """Create an authority in ``root`` and run ``peers`` joined peers on loopback in a
    background thread until the block exits."""
    from p2pspam.auth.authority import Authority
    from p2pspam.peer.localnet import local_config, local_network

    root.mkdir(parents=True, exist_ok=True)
    authority = Authority.init(root / "authority", int(time.time() * 1000))
    world = LocalWorld(root, authority, [])
    ready = threading.Event()
    failure: list[BaseException] = []
    stop_box: dict[str, Any] = {}

    async def main() -> None:
        stop = asyncio.Event()
        stop_box["stop"] = stop
        world.loop = asyncio.get_running_loop()
        try:
            async with local_network(
                peers, authority.public_key, root=root / "peers", node_config=local_config()
            ) as net:
                world.network = net
                world.api_addresses = [
                    f"{p.api_address[0]}:{p.api_address[1]}" for p in net.peers if p.api_address
                ]
                ready.set()
                await stop.wait()
        except BaseException as exc:
            failure.append(exc)
            ready.set()
            raise

    thread = threading.Thread(target=lambda: asyncio.run(main()), name="p2pspam-peers", daemon=True)
    thread.start()
    if not ready.wait(start_timeout) or failure:
        raise RuntimeError(f"local peers did not start: {failure[0] if failure else 'timeout'}")
    try:
        yield world
    finally:
        loop = world.loop
        if loop is not None and "stop" in stop_box:
            loop.call_soon_threadsafe(stop_box["stop"].set)
        thread.join(60)

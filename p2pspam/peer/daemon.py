"""The ``p2pspam peer`` process: configuration to a running peer, signals, status."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
from pathlib import Path

from p2pspam.errors import InputError, P2PSpamError
from p2pspam.peer.config import PeerConfig
from p2pspam.peer.logs import setup_logging

log = logging.getLogger("p2pspam.peer")


def _settings(conf: PeerConfig):  # -> PeerSettings (imported lazily)
    from p2pspam.auth.authority import load_authority_export
    from p2pspam.peer.service import PeerSettings

    key_file = conf.authority_key or conf.data_dir / "authority.json"
    if not Path(key_file).exists():
        raise InputError(
            f"no authority key at {key_file}: a peer verifies every vote against the "
            "authority's public key; pass --authority-key FILE (written by "
            "'p2pspam authority export --out FILE')"
        )
    export = load_authority_export(key_file)
    peer_key = None
    if conf.peer_key is not None:
        from p2pspam.auth.peers import load_peer_key

        peer_key = load_peer_key(conf.peer_key)
    return PeerSettings(
        data_dir=conf.data_dir,
        authority_public_key=export.public_key,
        revocations=export.revocations,
        listen=conf.listen,
        api=conf.api,
        api_allow=conf.api_allow,
        bootstrap=conf.bootstrap,
        votes_per_hour=conf.votes_per_hour,
        node=conf.node,
        peer_key=peer_key,
    )


async def _serve(conf: PeerConfig) -> None:
    from p2pspam.peer.service import Peer

    peer = Peer(_settings(conf))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await peer.start()
    except OSError as exc:
        await peer.stop()
        raise P2PSpamError(f"cannot listen: {exc.strerror or exc}") from None
    log.info(
        "peer running",
        extra={
            "node_id": peer.node.node_id.hex(),
            "listen": "{}:{}".format(*peer.node.listen_address),
            "api": None if peer.api_address is None else "{}:{}".format(*peer.api_address),
            "data_dir": str(conf.data_dir),
            "contacts": len(peer.node.contacts()),
        },
    )
    try:
        await stop.wait()
    finally:
        log.info("peer stopping")
        await peer.stop()
        log.info("peer stopped")


def run_daemon(conf: PeerConfig) -> int:
    """Run a peer until SIGTERM or SIGINT; return the exit code."""
    setup_logging(conf.log_level)
    asyncio.run(_serve(conf))
    return 0


def print_status(api: tuple[str, int], as_json: bool = False) -> int:
    """Print a running peer's status (asked over its agent API)."""
    from p2pspam.peer.localnet import api_call

    try:
        reply = asyncio.run(api_call(api, "status", timeout=5.0))
    except (OSError, TimeoutError, ConnectionError) as exc:
        raise P2PSpamError(
            f"no peer answers on {api[0]}:{api[1]} ({exc}); is 'p2pspam peer' running?"
        ) from None
    if not reply.get("ok"):
        error = reply.get("error", {})
        raise P2PSpamError(f"status failed: {error.get('code')}: {error.get('message')}")
    status = reply["result"]
    if as_json:
        json.dump(status, sys.stdout, indent=2, sort_keys=True, default=str)
        print()
        return 0
    print(f"node id    {status['node_id']}")
    print(f"listen     {status['listen']} (udp)   api {status['api']} (tcp)")
    print(f"uptime     {status['uptime_s']:.0f} s")
    print(f"contacts   {status['contacts']}")
    records = status["records"]
    print("records    " + ", ".join(f"{k} {v}" for k, v in sorted(records.items())))
    counters = status["counters"]
    for title, key in (("requests", "requests"), ("peer rpcs", "rpcs"), ("drops", "drops")):
        items = counters.get(key, {})
        text = ", ".join(f"{k} {v}" for k, v in sorted(items.items())) or "none"
        print(f"{title:10} {text}")
    return 0

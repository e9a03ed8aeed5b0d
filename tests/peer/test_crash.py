"""A peer process killed with SIGKILL restarts with every record it acknowledged."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from p2pspam.auth.authority import AuthorityExport
from p2pspam.peer.localnet import api_call, peer_command, wait_for_api

from .helpers import Authority, demo_vectors, spam_vote

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def free_port(kind: int) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cmd: list[str], log: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log.open("ab"), env=env)


def test_a_sigkilled_peer_serves_every_acknowledged_record_after_restart(tmp_path):
    authority = Authority()
    key_file = tmp_path / "authority.json"
    key_file.write_bytes(AuthorityExport(authority.public_key, None).to_bytes())
    udp, tcp = free_port(socket.SOCK_DGRAM), free_port(socket.SOCK_STREAM)
    api = ("127.0.0.1", tcp)
    cmd = peer_command(tmp_path / "data", key_file, ("127.0.0.1", udp), api)
    users = [authority.user(f"user{i}") for i in range(3)]
    spam, merged, *_ = demo_vectors()

    async def publish_all() -> list[bytes]:
        await wait_for_api(api)
        acked = []
        for user in users:
            reply = await api_call(api, "publish", {"vote": spam_vote(user, spam)})
            assert reply["ok"], reply
            acked.append(reply["result"]["guid"])
        return acked

    async def check() -> dict:
        await wait_for_api(api)
        args = {"namespace": merged.namespace, "features": list(merged.features), "thres": 3}
        reply = await api_call(api, "check", args)
        assert reply["ok"], reply
        return reply["result"]

    process = start(cmd, tmp_path / "peer.log")
    try:
        acked = asyncio.run(publish_all())
        process.send_signal(signal.SIGKILL)
        assert process.wait(10) == -signal.SIGKILL
        process = start(cmd, tmp_path / "peer.log")
        result = asyncio.run(check())
    finally:
        process.kill()
        process.wait(10)
    (match,) = result["matches"]
    assert match["guid"] == acked[0] == spam.guid
    assert match["tally"]["spam"] == len(users)


def test_sigterm_stops_a_peer_cleanly(tmp_path):
    authority = Authority()
    key_file = tmp_path / "authority.json"
    key_file.write_bytes(AuthorityExport(authority.public_key, None).to_bytes())
    api = ("127.0.0.1", free_port(socket.SOCK_STREAM))
    cmd = peer_command(tmp_path / "data", key_file, ("127.0.0.1", 0), api)
    process = start(cmd, tmp_path / "peer.log")
    try:
        asyncio.run(wait_for_api(api))
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
    finally:
        process.kill()
    log = (tmp_path / "peer.log").read_text()
    assert '"msg": "peer stopped"' in log

"""The network demo finds the campaign's edited copies and leaves the ham alone."""

from __future__ import annotations

import asyncio
import io

from rich.console import Console

from p2pspam.peer.demo import network_demo


def test_network_demo_finds_every_spam_copy_and_no_ham():
    out = io.StringIO()
    rows = asyncio.run(network_demo(Console(file=out, width=120)))
    assert {r["name"]: r["found"] for r in rows} == {r["name"]: r["kind"] == "spam" for r in rows}
    assert all(r["spam_votes"] == 2 for r in rows if r["kind"] == "spam")
    assert "checks from other peers" in out.getvalue()

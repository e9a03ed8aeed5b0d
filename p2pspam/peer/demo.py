"""The network part of ``p2pspam demo``: 16 real peers on loopback UDP.

A throw-away authority issues two users; they mark the built-in spam campaign's original
(``p2pspam.samples``) as spam through two different peers; other peers then check the
edited copies (mail merge, HTML with obfuscation) and the legitimate mail, and the demo
prints what each found, with overlaps, tallies and lookup rounds.
"""

from __future__ import annotations

import time

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from rich.console import Console
from rich.table import Table

from p2pspam.auth.credentials import new_user_key, public_bytes
from p2pspam.auth.votes import sign_vote
from p2pspam.fingerprint import canonical_body, get_scheme
from p2pspam.peer.localnet import api_call, local_network
from p2pspam.samples import DEMO_MESSAGES

PEERS = 16
THRES = 3
DAY_MS = 86_400_000


async def network_demo(console: Console | None = None, peers: int = PEERS) -> list[dict]:
    """Start ``peers`` peers, publish the campaign from two of them, check every demo
    message from the others through the agent API; print and return one row per check
    (``name``, ``kind``, ``peer``, ``found``, ``overlap``, ``spam_votes``, ``rounds``)."""
    console = console or Console()
    scheme = get_scheme("ata")
    vectors = scheme.vectors([canonical_body(raw) for _, _, raw in DEMO_MESSAGES])
    authority = Ed25519PrivateKey.generate()
    now = time.time_ns() // 1_000_000
    users = [new_user_key(authority, n, now - DAY_MS, now + DAY_MS) for n in ("alice", "bob")]
    console.rule(f"a network of {peers} peers on loopback UDP")
    start = time.perf_counter()
    rows: list[dict] = []
    async with local_network(peers, public_bytes(authority)) as net:
        console.print(
            f"{peers} peers joined in {time.perf_counter() - start:.1f} s "
            f"(each knows {min(len(p.node.contacts()) for p in net.peers)}+ others)"
        )
        original = vectors[0]
        for user, index in zip(users, (1, 2), strict=True):
            vote = sign_vote(user, original, "spam", now).encode()
            reply = await api_call(net.peers[index].api_address, "publish", {"vote": vote})
            if not reply["ok"]:
                raise RuntimeError(f"publish failed: {reply['error']}")
            console.print(
                f"{user.user_id} marks [bold]{DEMO_MESSAGES[0][0]}[/] as spam via peer {index}: "
                f"{reply['result']['stored']} stores acknowledged (features and object)"
            )
        table = Table(title=f"checks from other peers (a match needs THRES = {THRES} of 10)")
        for column in ("message", "peer", "found", "overlap", "spam votes", "rounds"):
            table.add_column(column, justify="left" if column == "message" else "right")
        for offset, ((name, kind, _), vector) in enumerate(
            zip(DEMO_MESSAGES, vectors, strict=True)
        ):
            peer = 5 + 2 * offset
            args = {
                "namespace": vector.namespace,
                "features": list(vector.features),
                "thres": THRES,
            }
            reply = await api_call(net.peers[peer % peers].api_address, "check", args)
            if not reply["ok"]:
                raise RuntimeError(f"check failed: {reply['error']}")
            result = reply["result"]
            best = result["matches"][0] if result["matches"] else None
            row = {
                "name": name,
                "kind": kind,
                "peer": peer % peers,
                "found": best is not None,
                "overlap": best["overlap"] if best else 0,
                "spam_votes": best["tally"]["spam"] if best else 0,
                "rounds": result["rounds"],
            }
            rows.append(row)
            table.add_row(
                name,
                str(row["peer"]),
                "[bold red]spam[/]" if row["found"] else "[green]no match[/]",
                f"{row['overlap']}/10" if best else "-",
                str(row["spam_votes"]),
                str(row["rounds"]),
            )
        console.print(table)
        sent = sum(p.node.counters.get("datagrams_out", 0) for p in net.peers)
        console.print(f"datagrams exchanged by the whole network: {sent}")
    return rows

"""The full ``p2pspam demo`` story on embedded defaults, end to end on loopback.

An authority issues credentials to three users; 16 peers form a network; user A marks
the first copy of the built-in campaign as spam (``p2pspam agent mark``); users B and C
then receive later, edited copies plus legitimate mail, each delivered through
``p2pspam agent filter`` exactly as a mail server would run it; a table shows what each
user's filter decided, the detection rate and the false positives.

``p2pspam demo`` is registered by this module (entry point ``demo`` in pyproject.toml,
since ``p2pspam`` never imports ``agent``): it first shows the fingerprints of the
built-in mail (``p2pspam.demo.fingerprint_demo``), then runs ``full_demo``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PEERS = 16


@dataclass(frozen=True, slots=True)
class Delivery:
    """One message delivered to one user and what the filter said."""

    user: str
    name: str
    truth: str  # spam | ham
    status: str  # the X-P2PSpam-Status value
    score: str

    @property
    def flagged(self) -> bool:
        """True when the filter said Yes."""
        return self.status == "Yes"


def _edited_copies() -> list[tuple[str, str, bytes]]:
    """Later copies of the campaign, edited the ways spammers edit, and ham."""
    from p2pspam.samples import (
        HAM_MEETING,
        HAM_RECEIPT,
        SPAM_HTML,
        SPAM_MERGED,
        SPAM_ORIGINAL,
    )

    head, body = SPAM_ORIGINAL.split("\n\n", 1)
    paragraphs = body.split("\n\n")
    reordered = "\n\n".join([paragraphs[0], paragraphs[2], paragraphs[1], *paragraphs[3:]])
    inserted = body.replace(
        "Our claims office", "Act now, as unclaimed prizes return to the pool. Our claims office"
    )
    to_b = head.replace("alice@example.org", "bob@example.org")
    to_c = head.replace("alice@example.org", "carol@example.org")
    return [
        ("B", "spam: mail-merge copy", "spam", SPAM_MERGED.encode()),
        ("B", "spam: paragraphs reordered", "spam", f"{to_b}\n\n{reordered}".encode()),
        ("B", "ham: meeting", "ham", HAM_MEETING.encode()),
        ("C", "spam: HTML copy, obfuscated", "spam", SPAM_HTML.encode()),
        ("C", "spam: sentence inserted", "spam", f"{to_c}\n\n{inserted}".encode()),
        ("C", "ham: receipt", "ham", HAM_RECEIPT.encode()),
    ]  # type: ignore[return-value]


def _agent(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "p2pspam.cli", "agent", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
    )


def _header(message: bytes, name: str) -> str:
    found = re.search(rb"^" + name.encode() + rb": (.*?)\r?$", message, re.MULTILINE)
    return found.group(1).decode("ascii", "replace") if found else "?"


def full_demo(console: Any = None, peers: int = PEERS) -> dict[str, Any]:
    """Run the whole story, print it with rich, and return its figures:
    ``{"spam": n, "detected": n, "ham": n, "false_positives": n, "seconds": s}``."""
    from rich.console import Console
    from rich.table import Table

    from agent.localpeers import local_world
    from p2pspam.samples import SPAM_ORIGINAL

    console = console or Console()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="p2pspam-demo-") as tmp:
        root = Path(tmp)
        console.rule(f"A p2pspam network: an authority, three users, {peers} peers on loopback")
        with local_world(root, peers=peers) as world:
            configs = {
                u: world.add_user(f"user-{u.lower()}", peers=[world.api_addresses[i]])
                for i, u in enumerate("ABC")
            }
            console.print(
                f"  {peers} peers joined (agent API on {world.api_addresses[0]} ...); "
                "users A, B and C each use a different peer"
            )
            selftest = _agent("selftest", "--config", str(configs["B"]))
            console.print(f"  user B's self-test: {selftest.stdout.decode().splitlines()[-1]}")

            console.rule("User A marks the first copy of the campaign as spam")
            first = root / "first-copy.eml"
            first.write_bytes(SPAM_ORIGINAL.encode())
            marked = _agent("mark", "--config", str(configs["A"]), str(first))
            console.print("  p2pspam agent mark first-copy.eml: " + marked.stdout.decode().strip())

            console.rule("Users B and C receive later copies and ham through `agent filter`")
            deliveries = []
            for user, name, truth, raw in _edited_copies():
                out = _agent("filter", "--config", str(configs[user]), stdin=raw).stdout
                if not out.endswith(raw):
                    raise RuntimeError("agent filter altered a message")  # never expected
                deliveries.append(
                    Delivery(
                        user,
                        name,
                        truth,
                        _header(out, "X-P2PSpam-Status"),
                        _header(out, "X-P2PSpam-Score"),
                    )
                )
    table = Table(title="What each user's filter decided")
    for column in ("user", "message", "truth", "X-P2PSpam-Status", "score", ""):
        table.add_column(column)
    for d in deliveries:
        right = d.flagged == (d.truth == "spam")
        table.add_row(
            d.user,
            d.name,
            d.truth,
            f"[{'bold red' if d.flagged else 'green'}]{d.status}[/]",
            d.score.split(" scheme=")[0],
            "[green]correct[/]" if right else "[bold red]WRONG[/]",
        )
    console.print(table)
    spam = [d for d in deliveries if d.truth == "spam"]
    ham = [d for d in deliveries if d.truth == "ham"]
    figures = {
        "spam": len(spam),
        "detected": sum(d.flagged for d in spam),
        "ham": len(ham),
        "false_positives": sum(d.flagged for d in ham),
        "seconds": time.perf_counter() - started,
    }
    console.print(
        f"  detected {figures['detected']}/{figures['spam']} edited spam copies from one vote; "
        f"false positives {figures['false_positives']}/{figures['ham']}; "
        f"{figures['seconds']:.1f} s"
    )
    return figures


def register(sub: argparse._SubParsersAction) -> None:
    """Add the top-level ``demo`` subcommand."""
    parser = sub.add_parser(
        "demo",
        help="the whole story on built-in mail: fingerprints, then a loopback network",
        description="Fingerprint built-in mail and show which copies match; then start an "
        "authority, three users and a network of peers on loopback, mark one spam and "
        "filter edited copies and ham for the other users.",
    )
    parser.add_argument("--peers", type=int, default=PEERS, help="peers to start (2..64)")
    parser.add_argument("--fingerprints-only", action="store_true", help="skip the network part")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo; exit 0 when every edited copy was caught and no ham flagged."""
    from rich.console import Console

    from p2pspam.demo import fingerprint_demo
    from p2pspam.errors import ParameterError

    if not 2 <= args.peers <= 64:
        raise ParameterError(f"--peers must be 2..64, got {args.peers}")
    console = Console()
    fingerprint_demo(console)
    if args.fingerprints_only:
        return 0
    figures = full_demo(console, peers=args.peers)
    return 0 if figures["detected"] == figures["spam"] and not figures["false_positives"] else 1


def main() -> int:
    """Run the demo (``python -m agent.demo``)."""
    return run(argparse.Namespace(peers=PEERS, fingerprints_only=False))


if __name__ == "__main__":
    sys.exit(main())

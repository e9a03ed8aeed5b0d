"""``p2pspam agent check INPUT...``: ask the peers about each message.

Exit code: 0 when every message is clean (or ham), 1 when any is spam, 2 on an error (an
unreadable input, or a message the peers could not be asked about).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from agent.config import add_config_argument

CHUNK = 2048  # messages read per round (fingerprinted in smaller batches)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``check`` subcommand."""
    parser = sub.add_parser(
        "check",
        help="check messages against the network's votes",
        description="Print a verdict per message. Exit code: 0 all clean, 1 any spam, 2 error.",
    )
    parser.add_argument("inputs", nargs="+", metavar="INPUT", help="file, dir, mbox, Maildir, -")
    parser.add_argument("--json", action="store_true", help="one JSON object per message")
    add_config_argument(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check every message of the inputs."""
    import trio

    from agent.config import load_config

    config = load_config(args.config)
    tally = trio.run(_check_stream, config, args.inputs, args.json)
    if not args.json:
        _print_table(tally.verdicts)
    if tally.unreadable or tally.failed:
        return 2
    return 1 if tally.spam else 0


@dataclass
class _Tally:
    """What the run found (verdicts kept only for the table)."""

    spam: int = 0
    failed: int = 0
    unreadable: int = 0
    checked: int = 0
    verdicts: list = field(default_factory=list)


async def _check_stream(config: object, inputs: list[str], as_json: bool) -> _Tally:
    """Read, fingerprint and check the inputs a chunk at a time (memory stays bounded
    for any mailbox size); JSON rows are printed as each chunk completes."""
    import itertools
    import json
    import sys

    from agent.checking import Checker
    from agent.runtime import make_client, progress
    from agent.wire import AgentError
    from p2pspam.mailio import RawMessage, iter_messages

    items = iter_messages(inputs)
    chunk = list(itertools.islice(items, CHUNK))
    tally = _Tally()
    total = len(chunk) if len(chunk) < CHUNK else None
    with progress(total if total is not None else CHUNK + 1, "checking") as bar:
        task = bar.add_task("checking", total=total)
        async with make_client(config) as client:
            checker = Checker.from_config(client, config)
            while chunk:
                messages = [m for m in chunk if isinstance(m, RawMessage)]
                for bad in chunk:
                    if not isinstance(bad, RawMessage):
                        tally.unreadable += 1
                        print(f"p2pspam agent check: {bad.source}: {bad.reason}", file=sys.stderr)
                verdicts = await checker.check_batch(
                    [m.source for m in messages],
                    [m.data for m in messages],
                    on_done=lambda: bar.advance(task),
                )
                failed = [v for v in verdicts if v.status == "unknown" and v.scheme is None]
                if verdicts and len(failed) == len(verdicts) and not tally.checked:
                    raise AgentError(
                        "unavailable", f"no message could be checked: {failed[0].reason}"
                    )
                for verdict in failed[: max(0, 5 - tally.failed)]:
                    print(
                        f"p2pspam agent check: {verdict.source}: {verdict.reason}",
                        file=sys.stderr,
                    )
                tally.failed += len(failed)
                tally.checked += len(verdicts)
                tally.spam += sum(v.status == "spam" for v in verdicts)
                if as_json:
                    sys.stdout.write("".join(json.dumps(v.to_json()) + "\n" for v in verdicts))
                    sys.stdout.flush()
                else:
                    tally.verdicts += verdicts
                chunk = list(itertools.islice(items, CHUNK))
    return tally


def _print_table(verdicts: list) -> None:
    from rich.console import Console
    from rich.table import Table

    styles = {"spam": "bold red", "ham": "green", "clean": "green", "unknown": "yellow"}
    table = Table("message", "verdict", "overlap", "votes spam/ham", "match", "note")
    for v in verdicts:
        m = v.match
        table.add_row(
            v.source,
            f"[{styles[v.status]}]{v.status}[/]",
            f"{m.overlap}/{v.features}" if m else "-",
            "self-test" if m and m.selftest else (f"{m.spam}/{m.ham}" if m else "-"),
            m.guid.hex()[:16] if m else "-",
            v.reason or "",
        )
    Console().print(table)

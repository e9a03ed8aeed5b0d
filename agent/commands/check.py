"""``p2pspam agent check INPUT...``: ask the peers about each message.

Exit code: 0 when every message is clean (or ham), 1 when any is spam, 2 on an error (an
unreadable input, or a message the peers could not be asked about).
"""

from __future__ import annotations

import argparse

from agent.config import add_config_argument

CHUNK = 4096  # messages read per round (fingerprinted in smaller batches)


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
    import json
    import sys

    import trio

    from agent.config import load_config
    from agent.runtime import read_inputs
    from agent.wire import AgentError

    config = load_config(args.config)
    messages, unreadable = read_inputs(args.inputs)
    for bad in unreadable:
        print(f"p2pspam agent check: {bad.source}: {bad.reason}", file=sys.stderr)
    verdicts = trio.run(_check_all, config, messages)
    failed = [v for v in verdicts if v.status == "unknown" and v.scheme is None]
    if verdicts and len(failed) == len(verdicts):
        raise AgentError("unavailable", f"no message could be checked: {failed[0].reason}")
    if args.json:
        for verdict in verdicts:
            print(json.dumps(verdict.to_json()))
    else:
        _print_table(verdicts)
    errors = failed
    for verdict in errors[:5]:
        print(f"p2pspam agent check: {verdict.source}: {verdict.reason}", file=sys.stderr)
    if unreadable or errors:
        return 2
    return 1 if any(v.status == "spam" for v in verdicts) else 0


async def _check_all(config: object, messages: list) -> list:
    from agent.checking import Checker
    from agent.runtime import make_client, progress

    verdicts = []
    with progress(len(messages), "checking") as bar:
        task = bar.add_task("checking", total=len(messages))
        async with make_client(config) as client:
            checker = Checker.from_config(client, config)
            for start in range(0, len(messages), CHUNK):
                chunk = messages[start : start + CHUNK]
                verdicts += await checker.check_batch(
                    [m.source for m in chunk],
                    [m.data for m in chunk],
                    on_done=lambda: bar.advance(task),
                )
    return verdicts


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

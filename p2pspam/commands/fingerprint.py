"""``p2pspam fingerprint``: print the feature vectors of messages."""

from __future__ import annotations

import argparse
import json
import sys

from p2pspam.errors import ParameterError
from p2pspam.fingerprint.normalize import canonical_body
from p2pspam.fingerprint.schemes import get_scheme, scheme_names
from p2pspam.fingerprint.vector import FeatureVector, feature_hex
from p2pspam.mailio import RawMessage, Unreadable, iter_messages

_BATCH = 512  # messages fingerprinted per batched numpy pass


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``fingerprint`` subcommand."""
    parser = sub.add_parser(
        "fingerprint",
        help="print the feature vectors of messages",
        description="Print the feature vector of every message of every INPUT: a file of "
        "one message, a directory, an mbox file, a Maildir, or - for stdin.",
    )
    parser.add_argument("--scheme", default="ata", help=f"one of: {', '.join(scheme_names())}")
    parser.add_argument("--length", "-L", type=int, default=None, help="window length L (ata)")
    parser.add_argument("--count", "-N", type=int, default=None, help="feature count N (ata)")
    parser.add_argument(
        "--param",
        "-P",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a scheme parameter, repeatable (e.g. imatch: K=10 p=33; winnow: w=3 N=16)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per message")
    parser.add_argument("inputs", nargs="+", metavar="INPUT")
    parser.set_defaults(func=run)


def _scheme_params(args: argparse.Namespace) -> dict[str, int | float | str]:
    params: dict[str, int | float | str] = {
        k: v for k, v in (("length", args.length), ("count", args.count)) if v is not None
    }
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ParameterError(f"--param wants KEY=VALUE, got {item!r}")
        params[key.strip()] = _number(value.strip())
    return params


def _number(value: str) -> int | float | str:
    """An integer or decimal literal becomes a number; anything else stays text."""
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def run(args: argparse.Namespace) -> int:
    """Fingerprint the inputs; exit 2 when any input was unreadable, else 0."""
    scheme = get_scheme(args.scheme, **_scheme_params(args))
    failures = 0
    pending: list[RawMessage] = []
    table = None if args.json else _Table()

    def flush() -> None:
        bodies = [canonical_body(m.data) for m in pending]
        for message, vector in zip(pending, scheme.vectors(bodies), strict=True):
            if table is None:
                print(json.dumps(vector.to_json(message.source)), flush=False)
            else:
                table.add(message.source, vector)
        pending.clear()

    for item in iter_messages(args.inputs):
        if isinstance(item, Unreadable):
            failures += 1
            print(f"p2pspam: {item.source}: {item.reason}", file=sys.stderr)
            continue
        pending.append(item)
        if len(pending) >= _BATCH:
            flush()
    flush()
    if table is not None:
        table.show()
    sys.stdout.flush()
    return 2 if failures else 0


class _Table:
    """The readable (non-JSON) output."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, FeatureVector]] = []

    def add(self, source: str, vector: FeatureVector) -> None:
        self.rows.append((source, vector))

    def show(self) -> None:
        from rich.console import Console
        from rich.table import Table

        table = Table(show_lines=False)
        for name in ("source", "scheme", "guid", "chars", "features / note"):
            table.add_column(name, overflow="fold")
        for source, vector in self.rows:
            params = ",".join(f"{k}={v}" for k, v in vector.params.items())
            detail = " ".join(feature_hex(f) for f in vector.features)
            if vector.note:
                detail = f"{detail} ({vector.note})" if detail else f"({vector.note})"
            table.add_row(
                source,
                f"{vector.scheme} {params}",
                vector.guid.hex()[:16],
                str(vector.chars),
                detail,
            )
        Console(width=max(120, Console().width)).print(table)

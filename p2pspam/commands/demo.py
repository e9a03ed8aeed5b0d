"""``p2pspam demo``: the project's story on embedded defaults."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``demo`` subcommand."""
    parser = sub.add_parser("demo", help="fingerprint built-in sample mail and show matches")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo."""
    from p2pspam.demo import fingerprint_demo

    fingerprint_demo()
    return 0

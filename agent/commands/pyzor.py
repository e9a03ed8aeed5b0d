"""``p2pspam agent pyzor ...``: the Pyzor-compatible client (same as ``p2pspam-pyzor``)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``pyzor`` subcommand (its arguments are Pyzor's, parsed by agent.pyzor)."""
    parser = sub.add_parser(
        "pyzor",
        help="Pyzor-compatible client (check/report/whitelist/ping/digest) for SpamAssassin",
        add_help=False,
        prefix_chars="\x00",  # every argument, options included, goes to the pyzor parser
    )
    parser.add_argument("pyzor_args", nargs=argparse.REMAINDER)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the Pyzor-compatible client with the remaining arguments."""
    from agent.pyzor import main

    return main(args.pyzor_args)

"""``p2pspam agent unmark INPUT...``: vote not-spam (ham) on messages, or with
``--withdraw`` take back your earlier vote."""

from __future__ import annotations

import argparse

from agent.commands.mark import add_arguments, run


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``unmark`` subcommand."""
    parser = sub.add_parser("unmark", help="vote not-spam on messages (or --withdraw)")
    add_arguments(parser)
    parser.add_argument(
        "--withdraw",
        dest="verdict",
        action="store_const",
        const="withdraw",
        default="ham",
        help="withdraw your vote instead of voting not-spam",
    )
    parser.set_defaults(func=run)

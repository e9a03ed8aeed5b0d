"""``p2pspam agent ...``: the user agent's subcommands, one module each in
``agent.commands`` (``foo_bar`` gives ``agent foo-bar``), each with ``register``."""

from __future__ import annotations

import argparse

from p2pspam.cliplugins import add_command_group


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``agent`` and its subcommands to the top-level parser."""
    add_command_group(
        sub, "agent", "the user agent: check, mark and filter mail", "agent.commands", "SUBCOMMAND"
    )

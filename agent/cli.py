"""``p2pspam agent ...``: the user agent's subcommands.

Each module of ``agent.commands`` (``foo_bar`` gives ``agent foo-bar``) has
``register(subparsers)``; only the module of the subcommand being run is imported.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import agent.commands


def _modules() -> dict[str, str]:
    names = (m.name for m in pkgutil.iter_modules(agent.commands.__path__))
    return {n.replace("_", "-"): f"agent.commands.{n}" for n in names if not n.startswith("_")}


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``agent`` and its subcommands to the top-level parser."""
    parser = sub.add_parser("agent", help="the user agent: check, mark and filter mail")
    inner = parser.add_subparsers(dest="agent_command", metavar="SUBCOMMAND")
    argv = sys.argv[1:]
    wanted = argv[1] if len(argv) > 1 and argv[0] == "agent" else None
    modules = _modules()
    for name, module in sorted(modules.items()):
        if wanted in modules and name != wanted:
            continue
        importlib.import_module(module).register(inner)
    parser.set_defaults(func=lambda args: _help(parser))


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2

"""Subcommands discovered from the modules of a package.

A command package (``p2pspam.commands``, ``agent.commands``, ``simulations.experiments``)
holds one module per subcommand, each with ``register(subparsers)``; module ``foo_bar``
is the subcommand ``foo-bar``. Only the module of the subcommand being run is imported,
which keeps start-up fast on hot paths such as ``agent filter``.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys


def command_modules(package: str) -> dict[str, str]:
    """Return ``{command name: module name}`` for the command modules of ``package``."""
    path = importlib.import_module(package).__path__
    names = (m.name for m in pkgutil.iter_modules(path))
    return {n.replace("_", "-"): f"{package}.{n}" for n in names if not n.startswith("_")}


def add_command_group(
    sub: argparse._SubParsersAction, name: str, help: str, package: str, metavar: str
) -> argparse.ArgumentParser:
    """Add the subcommand ``name`` whose own subcommands are the modules of ``package``;
    run without one, it prints its help and exits 2."""
    parser = sub.add_parser(name, help=help)
    inner = parser.add_subparsers(dest=f"{name}_command", metavar=metavar)
    argv = sys.argv[1:]
    wanted = argv[1] if len(argv) > 1 and argv[0] == name else None
    modules = command_modules(package)
    for command, module in sorted(modules.items()):
        if wanted in modules and command != wanted:
            continue
        importlib.import_module(module).register(inner)

    def show_help(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    parser.set_defaults(func=show_help)
    return parser

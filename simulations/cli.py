"""``p2pspam sim ...``: the simulator's experiments.

Each module of ``simulations.experiments`` (``foo_bar`` gives ``sim foo-bar``) has
``register(subparsers)``; only the module of the subcommand being run is imported.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import simulations.experiments


def _modules() -> dict[str, str]:
    names = (m.name for m in pkgutil.iter_modules(simulations.experiments.__path__))
    return {
        n.replace("_", "-"): f"simulations.experiments.{n}" for n in names if not n.startswith("_")
    }


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sim`` and its experiments to the top-level parser."""
    parser = sub.add_parser("sim", help="run simulations that reproduce and extend the paper")
    inner = parser.add_subparsers(dest="sim_command", metavar="EXPERIMENT")
    argv = sys.argv[1:]
    wanted = argv[1] if len(argv) > 1 and argv[0] == "sim" else None
    modules = _modules()
    for name, module in sorted(modules.items()):
        if wanted in modules and name != wanted:
            continue
        importlib.import_module(module).register(inner)
    parser.set_defaults(func=lambda args: _help(parser))


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2

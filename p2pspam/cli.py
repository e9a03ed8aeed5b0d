"""The ``p2pspam`` command line.

Built-in subcommands are the modules of ``p2pspam.commands`` (module ``foo_bar`` gives
``foo-bar``); each has ``register(subparsers)``. Subcommands of other top-level packages
(``agent``, ``sim``) are registered under the ``p2pspam.commands`` entry-point group, so
that this package never imports them. Only the module of the command being run is
imported, which keeps start-up fast on hot paths such as ``agent filter``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points

from p2pspam.cliplugins import command_modules
from p2pspam.errors import P2PSpamError

EXIT_OK = 0
EXIT_ERROR = 2

# A registrar adds one subcommand: it receives the subparsers object, creates its parser
# and sets ``func`` (a callable taking the parsed namespace and returning an exit code).
Registrar = Callable[[argparse._SubParsersAction], None]


def _registrars(only: str | None) -> list[Registrar]:
    found: list[Registrar] = []
    for command, module in sorted(command_modules("p2pspam.commands").items()):
        if only is None or command == only:
            found.append(importlib.import_module(module).register)
    if only is not None and found:
        return found
    for ep in entry_points(group="p2pspam.commands"):
        if only is None or ep.name == only:
            found.append(ep.load())
    return found


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Return the top-level parser; with ``only``, with just that subcommand loaded."""
    parser = argparse.ArgumentParser(
        prog="p2pspam",
        description="Peer-to-peer collaborative spam filtering by approximate fingerprints.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in _registrars(only):
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = args_list[0] if args_list and not args_list[0].startswith("-") else None
    parser = build_parser(only=first) if first else build_parser()
    if first is not None and not _registrars_known(parser, first):
        full = build_parser()
        print(f"p2pspam: unknown command {first!r}\n", file=sys.stderr)
        full.print_help(sys.stderr)
        return EXIT_ERROR
    args = parser.parse_args(args_list)
    func = getattr(args, "func", None)
    if func is None:
        if first is None and not args_list:
            parser.print_help()
            return EXIT_OK
        build_parser().print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return int(func(args) or 0)
    except P2PSpamError as exc:
        print(f"p2pspam: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("p2pspam: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


def _registrars_known(parser: argparse.ArgumentParser, command: str) -> bool:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return command in action.choices
    return False


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()

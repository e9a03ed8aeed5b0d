"""The ``p2pspam`` command line: built-in subcommands plus those registered by other
distributions' packages under the ``p2pspam.commands`` entry-point group (the agent and
the simulator), so that this package never imports them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points

from p2pspam.errors import P2PSpamError

EXIT_OK = 0
EXIT_ERROR = 2

# A registrar adds one subcommand: it receives the subparsers object, creates its parser
# and sets ``func`` (a callable taking the parsed namespace and returning an exit code).
Registrar = Callable[[argparse._SubParsersAction], None]

_BUILTIN = (
    "p2pspam.commands.fingerprint:register",
    "p2pspam.commands.demo:register",
)


def _load(target: str) -> Registrar:
    module_name, _, attr = target.partition(":")
    module = __import__(module_name, fromlist=[attr])
    return getattr(module, attr)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Return the top-level parser. With ``only``, load just the plug-in of that name
    (keeps start-up fast for hot paths such as ``agent filter``)."""
    parser = argparse.ArgumentParser(
        prog="p2pspam",
        description="Peer-to-peer collaborative spam filtering by approximate fingerprints.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for target in _BUILTIN:
        _load(target)(sub)
    for ep in entry_points(group="p2pspam.commands"):
        if only is not None and ep.name != only:
            continue
        ep.load()(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in args_list if not a.startswith("-")), None)
    parser = build_parser(only=first)
    if first is not None and first not in parser._subparsers._group_actions[0].choices:  # type: ignore[union-attr]
        parser = build_parser()
    args = parser.parse_args(args_list)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr if args_list else sys.stdout)
        return EXIT_ERROR if args_list else EXIT_OK
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


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()

"""``p2pspam agent config show``: print the effective settings."""

from __future__ import annotations

import argparse

from agent.config import add_config_argument


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``config`` subcommand."""
    parser = sub.add_parser("config", help="show the agent's effective settings")
    inner = parser.add_subparsers(dest="config_action", metavar="ACTION")
    show = inner.add_parser("show", help="print the effective settings as TOML (or --json)")
    add_config_argument(show)
    show.add_argument("--json", action="store_true", help="print JSON instead of TOML")
    show.set_defaults(func=run)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def run(args: argparse.Namespace) -> int:
    """Print the settings the other agent commands would use."""
    import json

    from agent.config import load_config, render_toml

    config = load_config(args.config)
    if args.json:
        print(json.dumps(config.to_dict(), indent=2))
    else:
        print(render_toml(config), end="")
    return 0

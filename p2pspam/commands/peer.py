"""``p2pspam peer``: run a peer daemon; ``p2pspam peer status``: ask a running one."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``peer`` subcommand."""
    parser = sub.add_parser(
        "peer",
        help="run a peer of the p2pspam network (or: peer status)",
        description=(
            "Run a p2pspam peer: the approximate DOLR on a Kademlia DHT (UDP) and the agent "
            "API (TCP). 'p2pspam peer status' asks a running peer for its state."
        ),
    )
    parser.add_argument(
        "action",
        nargs="?",
        choices=["run", "status"],
        default="run",
        help="run the daemon (default) or print a running peer's status",
    )
    parser.add_argument("--data-dir", help="data directory (default: per-user data dir)")
    parser.add_argument("--listen", help="UDP HOST:PORT for peers (default 0.0.0.0:8468)")
    parser.add_argument("--api", help="TCP HOST:PORT of the agent API (default 127.0.0.1:8469)")
    parser.add_argument(
        "--allow",
        action="append",
        metavar="CIDR",
        help="client network allowed on the API (repeatable; default loopback only)",
    )
    parser.add_argument(
        "--bootstrap",
        action="append",
        metavar="HOST:PORT",
        help="a peer to join through (repeatable; none: start a new network)",
    )
    parser.add_argument("--config", type=Path, help="peer.toml configuration file")
    parser.add_argument(
        "--authority-key",
        metavar="FILE",
        help="authority file from 'p2pspam authority export' (default DATA_DIR/authority.json)",
    )
    parser.add_argument(
        "--peer-key",
        metavar="FILE",
        help="peer credential from 'p2pspam authority issue-peer': join a closed federation",
    )
    parser.add_argument(
        "--max-guids",
        type=int,
        metavar="N",
        help="a feature held by more than N distinct messages is boilerplate (default 64)",
    )
    parser.add_argument(
        "--ham-guids",
        type=int,
        metavar="N",
        help="a feature held by N messages voted ham is boilerplate (default 1; 0: off)",
    )
    parser.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    parser.add_argument("--json", action="store_true", help="status: print raw JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the daemon or the status query."""
    from p2pspam.peer import config as cfg

    file = cfg.load_toml(args.config) if args.config else {}
    conf = cfg.resolve(
        file,
        data_dir=args.data_dir,
        listen=args.listen,
        api=args.api,
        allow=args.allow,
        bootstrap=args.bootstrap,
        authority_key=args.authority_key,
        log_level=args.log_level,
        peer_key=args.peer_key,
        max_guids=args.max_guids,
        ham_guids=args.ham_guids,
    )
    if args.action == "status":
        from p2pspam.peer.daemon import print_status

        return print_status(conf.api, as_json=args.json)
    from p2pspam.peer.daemon import run_daemon

    return run_daemon(conf)

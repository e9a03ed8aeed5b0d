"""``p2pspam agent imap``: watch a mailbox over IMAP, file spam, vote on the user's moves."""

from __future__ import annotations

import argparse

from agent.config import add_config_argument


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``imap`` subcommand."""
    parser = sub.add_parser(
        "imap",
        help="watch an IMAP inbox: file spam into Junk, vote on messages you move",
        description=(
            "Checks new INBOX mail and moves spam to Junk; a message you move into Junk "
            "gets your spam vote, one you move out of Junk back to INBOX your ham vote. "
            "State is kept in SQLite so a restart neither misses nor votes twice."
        ),
    )
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, default=None, help="default 143, or 993 with --tls")
    parser.add_argument("--user", required=True)
    parser.add_argument("--password-file", required=True, metavar="FILE")
    parser.add_argument("--inbox", default="INBOX")
    parser.add_argument("--junk", default="Junk")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--tls", action="store_true", help="implicit TLS (IMAPS)")
    mode.add_argument("--starttls", action="store_true", help="upgrade with STARTTLS")
    parser.add_argument(
        "--cafile", metavar="FILE", default=None, help="CA certificates to trust for TLS"
    )
    parser.add_argument(
        "--poll",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="rescan at least this often (IDLE wakes it earlier)",
    )
    parser.add_argument(
        "--state",
        metavar="FILE",
        default=None,
        help="state database (default: in the config's state_dir)",
    )
    parser.add_argument(
        "--from-start",
        action="store_true",
        help="also process mail already in the folders on first run",
    )
    parser.add_argument("--once", action="store_true", help="scan once and exit")
    add_config_argument(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the watcher until interrupted (or once)."""
    import logging
    import re
    from pathlib import Path

    from agent.config import load_config
    from agent.imap.network import PeerNetwork
    from agent.imap.state import WatcherState
    from agent.imap.watcher import ImapSettings, Watcher
    from agent.runtime import load_user
    from p2pspam.errors import InputError, ParameterError

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    config = load_config(args.config)
    try:
        password = Path(args.password_file).read_text(encoding="utf-8").rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read password file {args.password_file}: {exc}") from None
    if args.poll <= 0:
        raise ParameterError("--poll must be positive")
    port = args.port or (993 if args.tls else 143)
    settings = ImapSettings(
        host=args.host,
        port=port,
        user=args.user,
        password=password,
        inbox=args.inbox,
        junk=args.junk,
        tls=args.tls,
        starttls=args.starttls,
        cafile=args.cafile,
        poll=args.poll,
        from_start=args.from_start,
    )
    safe = re.sub(r"[^A-Za-z0-9._@-]", "_", f"imap-{args.user}@{args.host}-{port}")
    state_path = Path(args.state) if args.state else config.state_dir / f"{safe}.sqlite3"
    state = WatcherState(state_path)
    network = PeerNetwork(config, load_user(config))
    try:
        Watcher(settings, state, network).run(once=args.once)
    finally:
        network.close()
        state.close()
    return 0

"""``p2pspam agent filter``: one message on stdin, the same message on stdout with
``X-P2PSpam-Status``, ``X-P2PSpam-Score`` and ``X-P2PSpam-Match`` headers added.

Safe mode: whatever fails (no peer, a timeout, unparsable mail, a bad config), the
message passes through unchanged but for ``X-P2PSpam-Status: Unknown (reason)``, and the
exit code is 0, so procmail, maildrop, Sieve and Postfix pipes never lose mail.

This runs once per delivered message: it imports only what it needs (no trio, no rich).
"""

from __future__ import annotations

import argparse

MAX_FILTER_BYTES = 64 * 1024 * 1024


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``filter`` subcommand."""
    parser = sub.add_parser(
        "filter",
        help="add X-P2PSpam-* headers to the message on stdin (for procmail, Sieve, ...)",
    )
    parser.add_argument("--config", metavar="FILE", default=None, help="agent TOML config")
    parser.add_argument(
        "--bulk-state",
        metavar="FILE",
        default=None,
        help="also score the message with the line-block bulk detector kept in FILE "
        "(see agent bulk) and add its header",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Filter stdin to stdout; always exit 0 once the message is written."""
    import sys

    raw = sys.stdin.buffer.read()
    out = filter_bytes(raw, args.config, args.bulk_state)
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()
    return 0


def filter_bytes(raw: bytes, config_path: str | None, bulk_state: str | None = None) -> bytes:
    """Return ``raw`` with the verdict headers (and with ``bulk_state`` the bulk
    detector's header) added; never raises."""
    from agent.headers import add_headers, verdict_headers

    try:
        verdict, failure = _verdict(raw, config_path)
        headers = verdict_headers(verdict, failure)
    except Exception as exc:  # safe mode: any failure passes the message through
        headers = verdict_headers(None, f"internal error: {type(exc).__name__}: {exc}")
    if bulk_state is not None:
        headers.append(_bulk_header(raw, bulk_state))
    return add_headers(raw, headers)


def _bulk_header(raw: bytes, state: str) -> tuple[str, str]:
    """The bulk detector's header, or ``Unknown (reason)`` when it cannot run."""
    from pathlib import Path

    from agent.headers import safe_value
    from agent.runtime import now_ms

    try:
        from agent.commands.bulk import bulk_state
        from p2pspam.fingerprint.lineblock import bulk_header

        with bulk_state(Path(state)) as detector:
            return bulk_header(detector.observe_message(raw, now_ms()))
    except Exception as exc:  # safe mode, as for the verdict
        from p2pspam.fingerprint.lineblock import HEADER

        return HEADER, f"Unknown ({safe_value(f'{type(exc).__name__}: {exc}')})"


def _verdict(raw: bytes, config_path: str | None) -> tuple[object, str | None]:
    from agent.config import load_config
    from agent.wire import AgentError
    from p2pspam.errors import P2PSpamError

    if len(raw) > MAX_FILTER_BYTES:
        return None, f"message larger than {MAX_FILTER_BYTES} bytes"
    try:
        config = load_config(config_path)
    except P2PSpamError as exc:
        return None, f"config: {exc}"
    from agent.checking import check_blocking
    from agent.runtime import make_blocking_client

    try:
        with make_blocking_client(config) as client:
            return check_blocking(client, config, "-", raw), None
    except AgentError as exc:
        return None, f"{exc.code}: {exc.message}"
    except P2PSpamError as exc:  # e.g. an unreadable window sketch
        return None, str(exc)

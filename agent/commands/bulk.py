"""``p2pspam agent bulk``: score messages with the online line-block bulk detector (Verma &
Dhar 2014) as a mail server sees them: for each, the percentage of its line blocks already
seen in the recent time slots; at the alert level or above it is bulk. The detector's
counters can be kept in a state file between runs (it holds counts, never content).

For ``agent filter``: ``with bulk_state(path) as detector:`` loads the state under a file
lock and saves it back; ``detector.observe_message(raw, now_ms)`` scores one message and
``p2pspam.fingerprint.lineblock.bulk_header(result)`` is the header to add."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``bulk`` subcommand."""
    parser = sub.add_parser(
        "bulk",
        help="flag bulk mail: share of each message's line blocks seen recently",
        description="Read every message of every INPUT in order and print its match "
        "percentage against the messages before it (and the state file's).",
    )
    parser.add_argument("--state", metavar="FILE", help="load and save the detector here")
    parser.add_argument("--size", type=int, help="counters per slot (default 2^20)")
    parser.add_argument("--slots", type=int, help="time slots kept (default 6)")
    parser.add_argument("--slot-seconds", type=int, help="length of a slot (default 600)")
    parser.add_argument("--hashes", type=int, help="hash functions k (default 10)")
    parser.add_argument("--max-words", type=int, help="words per line block (default 100)")
    parser.add_argument("--alert", type=int, help="alert percentage (default 66)")
    parser.add_argument(
        "--clock",
        choices=("now", "date"),
        default="now",
        help="time of each message: now (default) or its Date header",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per message")
    parser.add_argument("inputs", nargs="+", metavar="INPUT")
    parser.set_defaults(func=run)


def _config_overrides(args: argparse.Namespace) -> dict[str, int]:
    pairs = {
        "size": args.size,
        "slots": args.slots,
        "slot_ms": None if args.slot_seconds is None else args.slot_seconds * 1000,
        "hashes": args.hashes,
        "max_words": args.max_words,
        "alert_pct": args.alert,
    }
    return {k: v for k, v in pairs.items() if v is not None}


def load_detector(path: Path | None, overrides: dict[str, int] | None = None):
    """Return the detector saved at ``path`` (a new one when there is none), refusing
    ``overrides`` of its configuration that differ from the saved one."""
    import dataclasses
    import zipfile

    import numpy as np

    from p2pspam.errors import InputError, ParameterError
    from p2pspam.fingerprint.lineblock import BulkConfig, BulkDetector

    overrides = overrides or {}
    if path is None or not path.exists():
        return BulkDetector(BulkConfig(**overrides))
    try:
        with np.load(path, allow_pickle=False) as data:
            detector = BulkDetector.from_state({k: data[k] for k in data.files})
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError(f"{path}: not a bulk detector state file ({exc})") from None
    current = dataclasses.asdict(detector.config)
    changed = {k: v for k, v in overrides.items() if current[k] != v}
    if changed:
        raise ParameterError(
            f"{path} was made with {', '.join(f'{k}={current[k]}' for k in changed)}; "
            "remove the state file to change the configuration"
        )
    return detector


def save_detector(path: Path, detector) -> None:
    """Write the detector's counters to ``path`` atomically (a temporary file, renamed)."""
    import os

    import numpy as np

    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as handle:
        np.savez_compressed(handle, **detector.state())
    os.replace(tmp, path)


@contextlib.contextmanager
def bulk_state(path: Path | None, overrides: dict[str, int] | None = None):
    """Load the detector at ``path`` under an exclusive lock (``path.lock``), yield it,
    and save it back: for ``agent filter``, which runs once per delivered message."""
    import fcntl

    if path is None:
        yield load_detector(None, overrides)
        return
    with path.with_name(path.name + ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        detector = load_detector(path, overrides)
        yield detector
        save_detector(path, detector)


def _message_time_ms(raw: bytes, fallback_ms: int) -> int:
    import email
    import email.utils
    from email import policy

    try:
        value = email.message_from_bytes(raw, policy=policy.compat32).get("Date")
        when = email.utils.parsedate_to_datetime(str(value)) if value else None
    except (TypeError, ValueError, IndexError):
        when = None
    if when is None or when.tzinfo is None:
        return fallback_ms
    return max(0, int(when.timestamp() * 1000))


def _score_all(detector, args: argparse.Namespace) -> tuple[int, int, int]:
    """Score every message of the inputs; return (unreadable, bulk, scored)."""
    import json
    import sys
    import time

    from p2pspam.mailio import Unreadable, iter_messages

    failures = alerts = seen = 0
    for item in iter_messages(args.inputs):
        if isinstance(item, Unreadable):
            failures += 1
            print(f"p2pspam: {item.source}: {item.reason}", file=sys.stderr)
            continue
        now_ms = int(time.time() * 1000)
        if args.clock == "date":
            now_ms = _message_time_ms(item.data, now_ms)
        result = detector.observe_message(item.data, now_ms)
        seen += 1
        alerts += result.alert
        if args.json:
            record = {
                "source": item.source,
                "percent": result.percent,
                "blocks": result.blocks,
                "matched": result.matched,
                "bulk": result.alert,
            }
            print(json.dumps(record))
        else:
            mark = "BULK" if result.alert else "-"
            print(f"{result.percent:3d}%\t{result.matched}/{result.blocks}\t{mark}\t{item.source}")
    return failures, alerts, seen


def run(args: argparse.Namespace) -> int:
    """Score the inputs in order; exit 2 when an input was unreadable, else 0."""
    import sys

    state = Path(args.state) if args.state else None
    with bulk_state(state, _config_overrides(args)) as detector:
        failures, alerts, seen = _score_all(detector, args)
    if not args.json:
        print(f"{alerts} of {seen} messages are bulk", file=sys.stderr)
    return 2 if failures else 0

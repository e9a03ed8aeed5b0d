"""``p2pspam agent dedup``: list the messages made redundant by others (winnowed word
pairs, Nguyen 2007): a message whose fingerprints are contained in another's at or above
the threshold is redundant, and the one that contains it is named."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``dedup`` subcommand."""
    parser = sub.add_parser(
        "dedup",
        help="list messages made redundant by others (copies, quotes, rearrangements)",
        description="Read every message of every INPUT (file, directory, mbox, Maildir, -) "
        "and list each one whose content is contained in another message, with that "
        "message and the containment.",
    )
    parser.add_argument(
        "--threshold",
        "-t",
        type=float,
        default=0.95,
        help="containment at which a message is redundant (default 0.95)",
    )
    parser.add_argument("--window", "-w", type=int, default=3, help="winnowing window (3)")
    parser.add_argument("--json", action="store_true", help="one JSON object per redundancy")
    parser.add_argument("inputs", nargs="+", metavar="INPUT")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """List the redundant messages; exit 2 when an input was unreadable, else 0."""
    import json
    import sys

    from p2pspam.errors import ParameterError
    from p2pspam.fingerprint.normalize import canonical_body
    from p2pspam.fingerprint.winnow import MAX_WINDOW, fingerprints, redundant_pairs
    from p2pspam.mailio import Unreadable, iter_messages

    if not 0.0 < args.threshold <= 1.0:
        raise ParameterError(f"--threshold must be in (0, 1], got {args.threshold}")
    if not 1 <= args.window <= MAX_WINDOW:
        raise ParameterError(f"--window must be 1..{MAX_WINDOW}, got {args.window}")
    sources: list[str] = []
    prints = []
    failures = 0
    for item in iter_messages(args.inputs):
        if isinstance(item, Unreadable):
            failures += 1
            print(f"p2pspam: {item.source}: {item.reason}", file=sys.stderr)
            continue
        sources.append(item.source)
        prints.append(fingerprints(canonical_body(item.data).text, args.window))
    found = redundant_pairs(prints, args.threshold)
    for entry in found:
        if args.json:
            record = {
                "redundant": sources[entry.index],
                "by": sources[entry.by],
                "containment": round(entry.containment, 4),
            }
            print(json.dumps(record))
        else:
            print(
                f"{sources[entry.index]}\tredundant by\t{sources[entry.by]}"
                f"\t(containment {entry.containment:.2f})"
            )
    if not args.json:
        print(f"{len(found)} of {len(sources)} messages are redundant", file=sys.stderr)
    return 2 if failures else 0

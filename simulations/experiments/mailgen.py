"""``p2pspam sim mailgen``: write a seeded, labelled corpus of realistic mail.

The corpus for ``p2pspam sim replay`` (``spam/spam.mbox``, ``ham/ham.mbox``,
``labels.csv``): ham with quoted replies, signatures, list footers, newsletter and
transactional templates, corporate disclaimers; spam campaigns with mutations and spam
sent through mailing lists (see ``simulations/mailgen.py``). It stands in for the real
corpus of the SpamWatch paper's section 4.3 (9,589 ham and 14,925 spam), which is not
public.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sim mailgen``."""
    from simulations.mailgen import DEFAULT_DAYS, DEFAULT_SPAM_FRACTION

    parser = sub.add_parser(
        "mailgen",
        help="write a seeded labelled corpus of realistic ham and spam",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", required=True, help="directory to write spam/ and ham/ into")
    parser.add_argument("--seed", type=int, default=1, help="random seed (same seed, same mail)")
    parser.add_argument("--messages", type=int, default=10_000, help="deliveries to write")
    parser.add_argument(
        "--spam-fraction",
        type=float,
        default=DEFAULT_SPAM_FRACTION,
        help=f"share of spam (default {DEFAULT_SPAM_FRACTION})",
    )
    parser.add_argument("--days", type=int, default=DEFAULT_DAYS, help="time span of the mail")
    parser.add_argument("--users", type=int, default=120, help="number of recipients")
    parser.add_argument("--no-labels", action="store_true", help="do not write labels.csv")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Generate and write the corpus."""
    from p2pspam.errors import ParameterError
    from simulations.mailgen import generate, write_corpus

    if not 1 <= args.messages <= 10_000_000:
        raise ParameterError(f"--messages must be 1..10000000, got {args.messages}")
    if not 0.0 <= args.spam_fraction <= 1.0:
        raise ParameterError(f"--spam-fraction must be between 0 and 1, got {args.spam_fraction}")
    if not 1 <= args.days <= 3650:
        raise ParameterError(f"--days must be 1..3650, got {args.days}")
    if not 5 <= args.users <= 100_000:
        raise ParameterError(f"--users must be 5..100000, got {args.users}")
    out = Path(args.out)
    if out.exists() and any((out / d).exists() for d in ("spam", "ham")):
        raise ParameterError(f"{out} already holds a corpus (spam/ or ham/); choose another --out")
    messages = generate(args.seed, args.messages, args.spam_fraction, args.days, args.users)
    counts = write_corpus(messages, out, labels=not args.no_labels)
    print(
        f"wrote {counts['spam']} spam and {counts['ham']} ham to {out}"
        + ("" if args.no_labels else f" (labels in {out / 'labels.csv'})"),
        file=sys.stderr,
    )
    return 0

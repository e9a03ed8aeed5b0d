"""``p2pspam agent learn INPUT...``: teach your window sketch the mail you keep.

Windows (50-character blocks) that keep coming back in your legitimate mail — your
lists' footers, newsletter templates, disclaimers — are then never selected as features
of your checks (seen in ``sketch_threshold`` kept messages) or of your spam votes (seen
once), so a spam that carries a list footer cannot flag the list's other posts for you.
Only counters of window checksums are stored, never text. Exit code 0, 2 on an error
(an unreadable input, the sketch disabled in the config).
"""

from __future__ import annotations

import argparse

from agent.config import add_config_argument

CHUNK = 512  # messages learned per round: memory stays bounded for any mailbox size


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``learn`` subcommand."""
    parser = sub.add_parser(
        "learn",
        help="learn the windows of mail you keep (list footers, templates) into your sketch",
        description="Count the windows of every message of the inputs in your window "
        "sketch (checksums only). Exit code: 0 done, 2 error.",
    )
    parser.add_argument("inputs", nargs="+", metavar="INPUT", help="file, dir, mbox, Maildir, -")
    add_config_argument(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Learn every message of the inputs into the user's saved sketch."""
    import itertools
    import sys

    from agent.config import load_config
    from agent.defences import bodies, learn_texts, sketch_path, sketch_state
    from p2pspam.errors import ParameterError
    from p2pspam.mailio import RawMessage, iter_messages

    config = load_config(args.config)
    if not config.defences.sketch:
        raise ParameterError("the window sketch is disabled ([agent.defences] sketch = false)")
    items = iter_messages(args.inputs)
    learned = seen = unreadable = 0
    with sketch_state(config) as sketch:
        while chunk := list(itertools.islice(items, CHUNK)):
            raws = []
            for item in chunk:
                if isinstance(item, RawMessage):
                    raws.append(item.data)
                else:
                    unreadable += 1
                    print(f"p2pspam agent learn: {item.source}: {item.reason}", file=sys.stderr)
            seen += len(raws)
            learned += learn_texts(sketch, [b.text for b in bodies(raws, config.defences)])
    print(
        f"{learned} of {seen} message(s) learned into {sketch_path(config)} "
        f"({seen - learned} without text)"
    )
    return 2 if unreadable else 0

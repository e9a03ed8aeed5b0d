"""``p2pspam agent mark INPUT...``: vote spam on messages (signed, published to the peers).

The shared implementation of ``mark`` and ``unmark`` lives here; ``unmark`` changes the
verdict, votes on the boilerplate the message shares with the spam it matched
(``agent.voting``) and learns the message into the user's window sketch. Exit code: 0
when every vote was published (messages too short to fingerprint are skipped, not
errors), 1 when a peer refused a vote, 2 on other errors.
"""

from __future__ import annotations

import argparse

from agent.config import add_config_argument


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``mark`` subcommand."""
    parser = sub.add_parser("mark", help="vote spam on messages")
    add_arguments(parser)
    parser.set_defaults(func=run, verdict="spam")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``mark`` and ``unmark``."""
    parser.add_argument("inputs", nargs="+", metavar="INPUT", help="file, dir, mbox, Maildir, -")
    add_config_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Sign and publish a vote with ``args.verdict`` on every message of the inputs."""
    import sys

    import trio

    from agent.config import load_config
    from agent.runtime import load_user, read_inputs

    config = load_config(args.config)
    user = load_user(config)
    messages, unreadable = read_inputs(args.inputs)
    for bad in unreadable:
        print(f"p2pspam agent: {bad.source}: {bad.reason}", file=sys.stderr)
    summary = trio.run(_publish, config, user, messages, args.verdict)
    what = {"spam": "spam", "ham": "not-spam", "withdraw": "withdrawal"}[args.verdict]
    print(
        f"{summary.published} {what} vote(s) published, {len(summary.refused)} refused, "
        f"{len(summary.skipped)} skipped (too short or no text)"
    )
    if args.verdict == "ham":
        from agent.defences import learn_messages

        learned = learn_messages(config, [m.data for m in messages])
        print(
            f"  {summary.rescued} vote(s) cover boilerplate shared with matched spam; "
            f"{learned} message(s) learned as your legitimate mail"
        )
    for reason, count in sorted(summary.refused_reasons().items()):
        print(f"  refused ({reason}): {count}")
    for source, reason, message in summary.refused[:10]:
        print(f"  {source}: {reason}: {message}", file=sys.stderr)
    for source, why in summary.skipped[:10]:
        print(f"  skipped {source}: {why}", file=sys.stderr)
    if unreadable:
        return 2
    return 1 if summary.refused else 0


async def _publish(config: object, user: object, messages: list, verdict: str) -> object:
    from agent.checking import build_schemes
    from agent.defences import load_exclusions
    from agent.runtime import make_client, now_ms, progress
    from agent.verdicts import make_policy
    from agent.voting import publish_votes

    schemes = build_schemes(config)
    exclusions = load_exclusions(config, pure=False)
    with progress(len(messages), f"voting {verdict}") as bar:
        task = bar.add_task(f"voting {verdict}", total=len(messages))
        async with make_client(config) as client:
            return await publish_votes(
                client,
                user,
                schemes,
                [m.source for m in messages],
                [m.data for m in messages],
                verdict,
                now_ms(),
                on_done=lambda: bar.advance(task),
                defences=config.defences,
                exclusions=exclusions,
                policy=make_policy(config.min_votes, config.ratio),
            )

"""``p2pspam agent selftest``: check the built-in self-test message through every
configured peer and say plainly what works and what does not.

Exit code 0 when every peer answered the self-test message as spam, 1 otherwise.
"""

from __future__ import annotations

import argparse

from agent.config import add_config_argument


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``selftest`` subcommand."""
    parser = sub.add_parser("selftest", help="test the whole path with the self-test message")
    add_config_argument(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the self-test and print one line per step."""
    from agent.config import load_config

    config = load_config(args.config)
    lines, ok = selftest_report(config)
    for line in lines:
        print(line)
    return 0 if ok else 1


def selftest_report(config: object) -> tuple[list[str], bool]:
    """The report lines of a self-test through each configured peer, and whether all
    passed."""
    from agent.checking import check_blocking
    from agent.runtime import make_blocking_client
    from agent.wire import AgentError
    from p2pspam.selftest import SELFTEST_MESSAGE

    lines = [f"config: {config.source}"]
    credential = config.credential
    lines.append(
        f"credential: {credential} "
        + ("present" if credential.exists() else "MISSING (needed to vote, not to check)")
    )
    all_ok = True
    for peer in config.peers:
        single = config._replace(peers=(peer,))
        try:
            with make_blocking_client(single) as client:
                status = client.call("status", {})
                node = status.get("node_id", "?") if isinstance(status, dict) else "?"
                contacts = status.get("contacts", "?") if isinstance(status, dict) else "?"
                verdict = check_blocking(client, single, "selftest", SELFTEST_MESSAGE)
        except AgentError as exc:
            lines.append(f"peer {peer}: FAIL ({exc.code}: {exc.message})")
            all_ok = False
            continue
        if verdict.status == "spam" and verdict.match is not None and verdict.match.selftest:
            lines.append(
                f"peer {peer}: OK (node {str(node)[:16]}, {contacts} contacts; "
                f"self-test message answered as spam, overlap "
                f"{verdict.match.overlap}/{verdict.features})"
            )
        else:
            lines.append(
                f"peer {peer}: FAIL (answers, but the self-test message came back "
                f"{verdict.status}: {verdict.reason or 'no self-test match'})"
            )
            all_ok = False
    lines.append("self-test: PASSED" if all_ok else "self-test: FAILED")
    return lines, all_ok

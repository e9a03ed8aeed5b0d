"""``p2pspam authority``: the central authority that issues and revokes identities.

Subcommands: ``init``, ``issue USER``, ``revoke USER``, ``export``, ``list``,
``issue-peer NODE_NAME``, ``revoke-peer NODE_NAME``, ``push HOST:PORT...``; each takes
``--dir D`` (default: the ``authority`` directory in the user's data directory).
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``authority`` subcommand and its subcommands."""
    parser = sub.add_parser(
        "authority",
        help="run the central authority: issue and revoke user and peer credentials",
        description="The central authority signs user credentials (who may vote) and "
        "revocation lists; peers are configured with its exported public key.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    def add(name: str, help_text: str, func: object) -> argparse.ArgumentParser:
        p = actions.add_parser(name, help=help_text, description=help_text)
        p.add_argument(
            "--dir",
            type=Path,
            default=None,
            help="authority directory (default: the p2pspam data directory's 'authority')",
        )
        p.set_defaults(func=func)
        return p

    add("init", "create a new authority key (refuses to overwrite one)", _init)
    p = add("issue", "create a user key pair and credential file (mode 0600)", _issue)
    p.add_argument("user", metavar="USER", help="user id: letters, digits and ._@+-")
    p.add_argument("--days", type=int, default=365, help="validity in days (default 365)")
    p.add_argument("--out", type=Path, default=None, help="credential file (default USER.cred)")
    p = add("revoke", "revoke a user and sign a new revocation list", _revoke)
    p.add_argument("user", metavar="USER")
    p = add("export", "write the public key and revocation list peers need", _export)
    p.add_argument("--out", type=Path, default=None, help="output file (default: stdout)")
    add("list", "list issued users and peers", _list)
    p = add("issue-peer", "create a peer key pair and credential (closed federation)", _peer)
    p.add_argument("node_name", metavar="NODE_NAME", help="node name: letters, digits and ._-")
    p.add_argument("--days", type=int, default=365, help="validity in days (default 365)")
    p.add_argument("--out", type=Path, default=None, help="credential file (default NODE.peer)")
    p = add("revoke-peer", "revoke a peer and sign a new revocation list", _revoke_peer)
    p.add_argument("node_name", metavar="NODE_NAME")
    p = add("push", "send the current revocation list to peers (they gossip it on)", _push)
    p.add_argument(
        "peers", nargs="+", metavar="HOST:PORT", help="a peer's agent API (default port 8469)"
    )
    p.add_argument(
        "--export",
        type=Path,
        default=None,
        help="take the list from this file (written by 'authority export') instead of --dir",
    )
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per peer (default 10)")


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _directory(args: argparse.Namespace) -> Path:
    from p2pspam.auth.authority import default_authority_dir

    return args.dir if args.dir is not None else default_authority_dir()


def _date(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def _refuse_existing(path: Path) -> None:
    from p2pspam.errors import InputError

    if path.exists():
        raise InputError(f"{path} exists already; refusing to overwrite it")


def _init(args: argparse.Namespace) -> int:
    from p2pspam.auth.authority import Authority

    directory = _directory(args)
    authority = Authority.init(directory, _now_ms())
    print(f"created authority {authority.key_id.hex()} in {directory}")
    print(f"give peers its public key: p2pspam authority export --dir {directory} --out FILE")
    return 0


def _issue(args: argparse.Namespace) -> int:
    from p2pspam.auth.authority import Authority
    from p2pspam.auth.credentials import check_user_id, write_user_key

    check_user_id(args.user)
    out = args.out if args.out is not None else Path(f"{args.user}.cred")
    _refuse_existing(out)
    authority = Authority.open(_directory(args))
    user = authority.issue(args.user, args.days, _now_ms())
    write_user_key(out, user)
    print(f"issued {args.user} until {_date(user.credential.not_after_ms)}: {out} (mode 0600)")
    return 0


def _revoke(args: argparse.Namespace) -> int:
    from p2pspam.auth.authority import Authority

    directory = _directory(args)
    signed = Authority.open(directory).revoke(args.user, _now_ms())
    print(f"revoked {args.user}: revocation list {signed.sequence}, {len(signed.users)} users")
    print(f"publish it: p2pspam authority export --dir {directory} --out FILE")
    return 0


def _export(args: argparse.Namespace) -> int:
    from p2pspam.auth.authority import Authority
    from p2pspam.auth.files import replace_file

    data = Authority.open(_directory(args)).export().to_bytes()
    if args.out is None:
        sys.stdout.write(data.decode("utf-8"))
    else:
        replace_file(args.out, data, 0o644)
        print(f"wrote {args.out}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from p2pspam.auth.authority import Authority
    from p2pspam.auth.revocation import decode_revocations

    authority = Authority.open(_directory(args))
    revocations = decode_revocations(authority.revocations())
    print(f"authority {authority.key_id.hex()}, revocation list {revocations.sequence}")
    users = authority.users()
    print(f"{len(users)} users")
    for row in users:
        status = "revoked " + _date(row["revoked_ms"]) if row["revoked_ms"] else "active"
        until = _date(row["not_after_ms"])
        print(f"  {row['user_id']:<32} {status:<28} until {until}  ({row['credentials']} cred)")
    peers = authority.peers()
    if peers:
        print(f"{len(peers)} peers")
        for row in peers:
            status = "revoked " + _date(row["revoked_ms"]) if row["revoked_ms"] else "active"
            ids = ",".join(i[:16] for i in row["node_ids"])
            print(f"  {row['node_name']:<32} {status:<28} node {ids}")
    return 0


def _peer(args: argparse.Namespace) -> int:
    from p2pspam.auth.authority import DAY_MS, Authority, check_days
    from p2pspam.auth.peers import check_node_name, issue_peer_key, write_peer_key

    check_node_name(args.node_name)
    check_days(args.days)
    out = args.out if args.out is not None else Path(f"{args.node_name}.peer")
    _refuse_existing(out)
    authority = Authority.open(_directory(args))
    now = _now_ms()
    peer = issue_peer_key(authority.private_key, args.node_name, now, now + args.days * DAY_MS)
    authority.record_peer(
        args.node_name, peer.node_id, peer.credential.public_key, peer.credential.not_after_ms
    )
    write_peer_key(out, peer)
    print(f"issued peer {args.node_name} node id {peer.node_id.hex()}: {out} (mode 0600)")
    return 0


def _push(args: argparse.Namespace) -> int:
    import asyncio

    from p2pspam.auth.authority import Authority, load_authority_export
    from p2pspam.auth.revocation import decode_revocations
    from p2pspam.errors import InputError
    from p2pspam.peer.config import DEFAULT_API_PORT, parse_hostport
    from p2pspam.peer.localnet import api_call

    if args.export is not None:
        signed = load_authority_export(args.export).revocations
        if signed is None:
            raise InputError(f"{args.export} holds no revocation list")
    else:
        signed = Authority.open(_directory(args)).revocations()
    sequence = decode_revocations(signed).sequence
    addresses = [parse_hostport(p, DEFAULT_API_PORT, "peer", resolve=True) for p in args.peers]
    failures = 0
    for text, address in zip(args.peers, addresses, strict=True):
        try:
            reply = asyncio.run(
                api_call(address, "revocations", {"list": signed}, timeout=args.timeout)
            )
        except (OSError, TimeoutError, ConnectionError) as exc:
            failures += 1
            print(f"p2pspam: {text}: cannot reach the peer ({exc})", file=sys.stderr)
            continue
        if not reply.get("ok"):
            failures += 1
            error = reply.get("error") or {}
            print(f"p2pspam: {text}: refused: {error.get('message', error)}", file=sys.stderr)
        elif reply["result"].get("accepted"):
            print(f"{text}: adopted revocation list {sequence}")
        else:
            print(f"{text}: already has revocation list {sequence} or a newer one")
    return 2 if failures else 0


def _revoke_peer(args: argparse.Namespace) -> int:
    from p2pspam.auth.authority import Authority

    signed = Authority.open(_directory(args)).revoke_peer(args.node_name, _now_ms())
    print(f"revoked peer {args.node_name}: revocation list {signed.sequence}")
    return 0

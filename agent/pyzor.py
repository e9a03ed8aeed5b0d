"""A Pyzor-compatible client that asks the p2pspam network instead of a Pyzor server.

``p2pspam-pyzor`` (and ``p2pspam agent pyzor``) take the command line of the ``pyzor``
client (``pyzor [options] check|report|whitelist|ping|digest``, message on stdin) and
print the same lines, so that SpamAssassin's Pyzor plugin pointed at it with
``pyzor_path`` uses the p2pspam network::

    check:      <peer>\t(200, 'OK')\t<spam votes>\t<ham votes>
    report:     <peer>\t(200, 'OK')          (a spam vote was published)
    whitelist:  <peer>\t(200, 'OK')          (a ham vote was published)
    ping:       <peer>\t(200, 'OK')
    digest:     the message's GUID (40 hex digits, like a Pyzor digest)

``check`` exits 0 when the message matched voted spam (count above ``-r``, default 0)
and was not whitelisted (ham count above ``-w``, default 0), 1 otherwise, as ``pyzor``
does. The counts are those of the best match under the agent's policy; the self-test
message counts one spam vote. A failure prints ``<peer>\t(<code>, '<message>')`` and
makes the command fail (exit 1), which SpamAssassin ignores. ``--config FILE`` selects
the agent config (Pyzor's ``--homedir``, ``--servers-file`` and the like are accepted and
ignored: the peers come from the agent config).
"""

from __future__ import annotations

import optparse
import sys
from collections.abc import Sequence
from typing import Any

VERSION = "1.1.2-p2pspam"  # the pyzor client version whose interface this follows

# Pyzor-like numeric codes for failures
CODE_OK = 200
CODE_BAD_REQUEST = 400
CODE_REFUSED = 403
CODE_INTERNAL = 500
CODE_UNAVAILABLE = 503
CODE_TIMEOUT = 504
_AGENT_CODES = {"timeout": CODE_TIMEOUT, "unavailable": CODE_UNAVAILABLE}
_AGENT_CODES |= {"vote_rejected": CODE_REFUSED, "bad_request": CODE_BAD_REQUEST}


def _parser() -> optparse.OptionParser:
    description = (
        "Read data from stdin and execute the requested command (one of 'check', "
        "'report', 'ping', 'digest', 'whitelist') against the p2pspam network."
    )
    opt = optparse.OptionParser(description=description)
    opt.add_option("-n", "--nice", dest="nice", type="int", help="'nice' level", default=0)
    opt.add_option("-d", "--debug", action="store_true", default=False, dest="debug")
    opt.add_option("--homedir", action="store", default=None, dest="homedir", help="ignored")
    opt.add_option(
        "-s", "--style", action="store", dest="Style", default="msg", help="'msg' or 'mbox'"
    )
    for flag, dest in (
        ("--log-file", "LogFile"),
        ("--servers-file", "ServersFile"),
        ("--accounts-file", "AccountsFile"),
        ("--local-whitelist", "LocalWhitelist"),
    ):
        opt.add_option(flag, action="store", default=None, dest=dest, help="ignored")
    opt.add_option("-t", "--timeout", dest="Timeout", type="int", default=None)
    opt.add_option("-r", "--report-threshold", dest="ReportThreshold", type="int", default=0)
    opt.add_option("-w", "--whitelist-threshold", dest="WhitelistThreshold", type="int", default=0)
    opt.add_option("-V", "--version", action="store_true", default=False, dest="version")
    opt.add_option("--config", dest="config", default=None, help="p2pspam agent config file")
    return opt


def _status(code: int, message: str) -> str:
    return repr((code, message))


def _failure_line(label: str, exc: Exception) -> str:
    from agent.headers import safe_value

    code = _AGENT_CODES.get(getattr(exc, "code", ""), CODE_INTERNAL)
    return f"{label}\t{_status(code, safe_value(str(exc)))}\n"


def _messages(style: str) -> list[bytes]:
    data = sys.stdin.buffer.read()
    if style == "msg":
        return [data]
    if style == "mbox":
        import mailbox
        import tempfile

        with tempfile.NamedTemporaryFile() as tmp:
            tmp.write(data)
            tmp.flush()
            box = mailbox.mbox(tmp.name, create=False)
            return [box.get_bytes(key) for key in box.iterkeys()]
    raise ValueError(f"input style {style!r} is not supported (use msg or mbox)")


class _Session:
    """One run: the config, a lazily opened client, the peer label for output lines."""

    def __init__(self, options: Any) -> None:
        from agent.config import load_config

        self.options = options
        self.config = load_config(options.config)
        if options.Timeout:
            self.config = self.config._replace(request_timeout=float(options.Timeout))
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            from agent.runtime import make_blocking_client

            self._client = make_blocking_client(self.config)
        return self._client

    @property
    def label(self) -> str:
        connected = None if self._client is None else self._client.connected_to
        return connected or self.config.peers[0]

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def _check(session: _Session, raws: list[bytes]) -> bool:
    from agent.checking import check_blocking

    found_hit = whitelisted = False
    all_ok = True
    for raw in raws:
        try:
            verdict = check_blocking(session.client, session.config, "-", raw)
        except Exception as exc:
            sys.stdout.write(_failure_line(session.label, exc))
            all_ok = False
            continue
        if verdict.status == "unknown" and verdict.match is None:
            continue  # no fingerprint: pyzor sends nothing for an empty digest
        m = verdict.match
        count = 0 if m is None else (1 if m.selftest else m.spam)
        wl_count = 0 if m is None else m.ham
        if wl_count > session.options.WhitelistThreshold:
            whitelisted = True
        elif count > session.options.ReportThreshold:
            found_hit = True
        sys.stdout.write(f"{session.label}\t{_status(CODE_OK, 'OK')}\t{count}\t{wl_count}\n")
    return all_ok and found_hit and not whitelisted


def _vote(session: _Session, raws: list[bytes], verdict: str) -> bool:
    from agent.checking import build_schemes, fingerprint
    from agent.defences import load_exclusions
    from agent.runtime import load_user, now_ms
    from p2pspam.auth.votes import sign_vote

    all_ok = True
    config = session.config
    user = load_user(config)
    schemes = build_schemes(config)
    exclusions = load_exclusions(config)
    spam = verdict == "spam"
    for vectors in fingerprint(raws, schemes, config.defences, exclusions, vote=spam):
        usable = [v for v in vectors if v.features]
        if not usable:
            continue
        try:
            for vector in usable:
                vote = sign_vote(user, vector, verdict, now_ms()).encode()
                session.client.call("publish", {"vote": vote})
        except Exception as exc:
            sys.stdout.write(_failure_line(session.label, exc))
            all_ok = False
            continue
        sys.stdout.write(f"{session.label}\t{_status(CODE_OK, 'OK')}\n")
    return all_ok


def _ping(session: _Session) -> bool:
    try:
        session.client.call("status", {})
    except Exception as exc:
        sys.stdout.write(_failure_line(session.label, exc))
        return False
    sys.stdout.write(f"{session.label}\t{_status(CODE_OK, 'OK')}\n")
    return True


def _digest(session: _Session, raws: list[bytes]) -> bool:
    from agent.checking import build_schemes, fingerprint

    config = session.config
    for vectors in fingerprint(raws, build_schemes(config)[:1], config.defences):
        if vectors and vectors[0].features:
            print(vectors[0].guid.hex())
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """Run the Pyzor-compatible client; return its exit code."""
    opt = _parser()
    options, args = opt.parse_args(list(sys.argv[1:] if argv is None else argv))
    if options.version:
        print(f"{sys.argv[0]} {VERSION}")
        return 0
    if not args:
        opt.print_help()
        return 0
    from p2pspam.errors import P2PSpamError

    try:
        session = _Session(options)
    except P2PSpamError as exc:
        print(f"ERROR {exc}.", file=sys.stderr)
        return 1
    raws: list[bytes] | None = None
    try:
        for command in args:
            if command not in ("check", "report", "whitelist", "ping", "digest"):
                print(f"Unknown command: {command}", file=sys.stderr)
                continue
            if command == "ping":
                ok = _ping(session)
            else:
                if raws is None:
                    try:
                        raws = _messages(options.Style)
                    except ValueError as exc:
                        print(f"ERROR {exc}.", file=sys.stderr)
                        return 1
                if command == "check":
                    ok = _check(session, raws)
                elif command == "report":
                    ok = _vote(session, raws, "spam")
                elif command == "whitelist":
                    ok = _vote(session, raws, "ham")
                else:
                    ok = _digest(session, raws)
            if not ok:
                return 1
    except P2PSpamError as exc:
        print(f"ERROR {exc}.", file=sys.stderr)
        return 1
    finally:
        sys.stdout.flush()
        session.close()
    return 0


def run() -> None:
    """Console-script entry point of ``p2pspam-pyzor``."""
    sys.exit(main())

"""The IMAP watcher against a real Dovecot and real peers: a user's moves become votes,
spam is filed into Junk, and a restart neither misses nor votes twice."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from agentdovecot import Dovecot, running_dovecot
from agenthelpers import require_binary, run_agent
from agentmail import campaign, ham
from imapclient import IMAPClient

from agent.config import load_config
from agent.imap.network import PeerNetwork
from agent.imap.state import WatcherState
from agent.imap.watcher import ImapSettings, Watcher
from agent.localpeers import LocalWorld
from agent.runtime import load_user

_accounts = itertools.count(1)


@pytest.fixture(scope="module")
def dovecot() -> Iterator[Dovecot]:
    with running_dovecot(require_binary("dovecot")) as server:
        yield server


class Mailbox:
    """One Dovecot user: the person (an IMAP session) and their watcher's parts."""

    def __init__(
        self, server: Dovecot, world: LocalWorld, tmp: Path, user: str | None = None
    ) -> None:
        self.user = user or server.users[next(_accounts) - 1]
        self.server = server
        self.config_path = world.add_user(f"imap-{self.user}-{tmp.name}")
        self.config = load_config(self.config_path)
        self.state_path = tmp / f"{self.user}.sqlite3"
        self.person = IMAPClient(server.host, port=server.port, ssl=False)
        self.person.login(self.user, server.password)

    def settings(self, **extra: object) -> ImapSettings:
        return ImapSettings(
            host=self.server.host,
            port=self.server.port,
            user=self.user,
            password=self.server.password,
            **extra,  # type: ignore[arg-type]
        )

    def watcher(self, **extra: object) -> Watcher:
        network = PeerNetwork(self.config, load_user(self.config))
        return Watcher(self.settings(**extra), WatcherState(self.state_path), network)

    def scan(self) -> None:
        """Start a watcher, scan once, stop it (as a restart would)."""
        watcher = self.watcher()
        try:
            watcher.run(once=True)
        finally:
            watcher.network.close()
            watcher.state.close()

    def deliver(self, raw: bytes, folder: str = "INBOX") -> None:
        self.person.append(folder, raw)

    def uids(self, folder: str) -> list[int]:
        self.person.select_folder(folder)
        return list(self.person.search(["ALL"]))

    def move_all(self, source: str, target: str) -> None:
        self.person.select_folder(source)
        self.person.move(self.person.search(["ALL"]), target)

    def votes(self) -> dict[bytes, str]:
        state = WatcherState(self.state_path)
        try:
            return state.votes(f"{self.user}@{self.server.host}:{self.server.port}")
        finally:
            state.close()


@pytest.fixture
def mailbox(dovecot: Dovecot, world: LocalWorld, tmp_path: Path) -> Iterator[Mailbox]:
    box = Mailbox(dovecot, world, tmp_path)
    yield box
    box.person.logout()


@pytest.fixture
def other(dovecot: Dovecot, world: LocalWorld, tmp_path: Path) -> Iterator[Mailbox]:
    (tmp_path / "other").mkdir()
    box = Mailbox(dovecot, world, tmp_path / "other")
    yield box
    box.person.logout()


def votes_on(config_path: Path, raw: bytes, of: bytes | None = None) -> tuple[int, int]:
    """(spam, ham) votes the network holds on the message ``of`` (default: ``raw``
    itself), found by checking ``raw`` through the last peer (the watchers use the first,
    whose vector -> GUID cache may predate the votes)."""
    from agent.checking import build_schemes, fingerprint
    from agent.runtime import make_blocking_client
    from agent.verdicts import check_args, parse_matches

    config = load_config(config_path)
    config = config._replace(peers=config.peers[-1:])
    runtime = build_schemes(config)[0]
    vector = fingerprint([raw], [runtime])[0][0]
    target = fingerprint([of or raw], [runtime])[0][0].guid
    with make_blocking_client(config) as client:
        result = client.call("check", check_args(vector, runtime.thres, runtime.ttl))
    for match in parse_matches(result):
        if match.guid == target:
            return match.spam, match.ham
    return 0, 0


def test_moving_a_spam_into_junk_publishes_a_spam_vote(mailbox: Mailbox, tmp_path: Path) -> None:
    original, edited = campaign(f"imap-1-{tmp_path.name}")
    mailbox.scan()  # the watcher knows the mailboxes before the mail arrives
    mailbox.deliver(original)
    mailbox.scan()
    mailbox.move_all("INBOX", "Junk")
    mailbox.scan()
    assert list(mailbox.votes().values()) == ["spam"]
    assert votes_on(mailbox.config_path, edited, of=original) == (1, 0)


def test_an_edited_copy_delivered_to_another_user_is_moved_to_their_junk(
    mailbox: Mailbox, other: Mailbox, tmp_path: Path
) -> None:
    original, edited = campaign(f"imap-2-{tmp_path.name}")
    mailbox.scan()
    other.scan()
    mailbox.deliver(original, "Junk")  # the first user files the original as spam
    mailbox.scan()
    other.deliver(edited)
    other.deliver(ham(f"imap-2-{tmp_path.name}"))
    other.scan()
    assert len(other.uids("Junk")) == 1
    assert len(other.uids("INBOX")) == 1
    assert other.votes() == {}  # filing by the watcher is not the user's vote


def test_a_message_moved_out_of_junk_gets_a_ham_vote(
    mailbox: Mailbox, other: Mailbox, tmp_path: Path
) -> None:
    original, edited = campaign(f"imap-3-{tmp_path.name}")
    mailbox.scan()
    other.scan()
    mailbox.deliver(original, "Junk")
    mailbox.scan()
    other.deliver(edited)
    other.scan()
    assert len(other.uids("Junk")) == 1
    other.move_all("Junk", "INBOX")  # "this is not spam"
    other.scan()
    assert list(other.votes().values()) == ["ham"]
    assert len(other.uids("INBOX")) == 1  # not filed again
    assert votes_on(other.config_path, edited) == (0, 1)  # the user's copy
    # one user's ham vote against one user's spam mark is a tie, which the policy calls
    # spam: the peers' ham-vote discount (issue 8) does not switch the shared features
    # off, so one credential cannot silence a campaign that another user marked
    assert votes_on(other.config_path, edited, of=original) == (1, 0)


def test_a_restarted_watcher_does_not_vote_again(mailbox: Mailbox, tmp_path: Path) -> None:
    original, edited = campaign(f"imap-4-{tmp_path.name}")
    mailbox.scan()
    mailbox.deliver(original, "Junk")
    mailbox.scan()
    first = mailbox.votes()
    for _ in range(2):
        mailbox.scan()  # each scan is a fresh watcher process' worth of state
    assert mailbox.votes() == first
    assert votes_on(mailbox.config_path, edited, of=original) == (1, 0)


def test_mail_arriving_while_the_watcher_is_stopped_is_processed_on_restart(
    mailbox: Mailbox, other: Mailbox, tmp_path: Path
) -> None:
    original, edited = campaign(f"imap-5-{tmp_path.name}")
    mailbox.scan()
    other.scan()
    mailbox.deliver(original, "Junk")
    mailbox.scan()
    other.deliver(edited)  # while the other watcher is not running
    other.scan()
    assert len(other.uids("Junk")) == 1


def test_the_running_watcher_files_new_spam_using_idle(
    mailbox: Mailbox, other: Mailbox, tmp_path: Path
) -> None:
    original, edited = campaign(f"imap-6-{tmp_path.name}")
    mailbox.scan()
    mailbox.deliver(original, "Junk")
    mailbox.scan()
    watcher = other.watcher(poll=30.0)  # a long poll: only IDLE can wake it in time
    stop = threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
    thread.start()
    try:
        time.sleep(1.0)  # let it connect and enter IDLE
        other.deliver(edited)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not other.uids("Junk"):
            time.sleep(0.2)
        assert len(other.uids("Junk")) == 1
        assert watcher.used_idle
    finally:
        stop.set()
        thread.join(10)
        watcher.network.close()
        watcher.state.close()
    assert not thread.is_alive()


def test_the_imap_command_runs_once_against_dovecot(
    mailbox: Mailbox, dovecot: Dovecot, tmp_path: Path
) -> None:
    password = dovecot.password_file(tmp_path)
    args = ["imap", "--host", dovecot.host, "--port", str(dovecot.port), "--user", mailbox.user]
    args += ["--password-file", str(password), "--config", str(mailbox.config_path)]
    args += ["--state", str(mailbox.state_path), "--once"]
    assert run_agent(*args).returncode == 0
    mailbox.deliver(campaign(f"imap-7-{tmp_path.name}")[0], "Junk")
    result = run_agent(*args)
    assert result.returncode == 0, result.stderr
    assert list(mailbox.votes().values()) == ["spam"]


def test_a_wrong_password_is_a_clear_error(
    mailbox: Mailbox, dovecot: Dovecot, tmp_path: Path
) -> None:
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-password\n")
    args = ["imap", "--host", dovecot.host, "--port", str(dovecot.port), "--user", mailbox.user]
    args += ["--password-file", str(wrong), "--config", str(mailbox.config_path), "--once"]
    args += ["--state", str(mailbox.state_path)]
    result = run_agent(*args)
    assert result.returncode == 2
    assert b"authentication" in result.stderr.lower() or b"login" in result.stderr.lower()


def test_mail_that_arrives_while_the_peers_are_down_is_checked_once_they_are_back(
    mailbox: Mailbox, other: Mailbox, tmp_path: Path
) -> None:
    from p2pspam.errors import P2PSpamError

    original, edited = campaign(f"imap-8-{tmp_path.name}")
    mailbox.scan()
    other.scan()
    mailbox.deliver(original, "Junk")
    mailbox.scan()
    other.deliver(edited)
    working = other.config
    other.config = working._replace(peers=("127.0.0.1:1",), connect_timeout=0.5)
    with pytest.raises(P2PSpamError):
        other.scan()
    assert len(other.uids("INBOX")) == 1  # untouched, and not marked as processed
    other.config = working
    other.scan()
    assert len(other.uids("Junk")) == 1


def test_the_watcher_reconnects_with_back_off_after_connection_failures(
    mailbox: Mailbox,
) -> None:
    import socket

    attempts: list[float] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]

    def hang_up() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            attempts.append(time.monotonic())
            conn.close()  # no IMAP greeting: a broken server

    threading.Thread(target=hang_up, daemon=True).start()
    watcher = Watcher(
        replace(mailbox.settings(), port=port),
        WatcherState(mailbox.state_path),
        PeerNetwork(mailbox.config, load_user(mailbox.config)),
    )
    stop = threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while len(attempts) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    stop.set()
    thread.join(10)
    listener.close()
    assert not thread.is_alive()
    assert len(attempts) >= 3
    assert watcher.retry_delays[:2] == [1.0, 2.0]


def imap_args(dovecot: Dovecot, mailbox: Mailbox, tmp_path: Path, *extra: str) -> list[str]:
    password = dovecot.password_file(tmp_path)
    args = ["imap", "--host", dovecot.host, "--user", mailbox.user, "--once"]
    args += ["--password-file", str(password), "--config", str(mailbox.config_path)]
    return [*args, "--state", str(mailbox.state_path), *extra]


def test_the_watcher_works_over_starttls(
    mailbox: Mailbox, dovecot: Dovecot, tmp_path: Path
) -> None:
    args = imap_args(dovecot, mailbox, tmp_path, "--port", str(dovecot.port), "--starttls")
    args += ["--cafile", str(dovecot.cafile)]
    assert run_agent(*args).returncode == 0
    mailbox.deliver(campaign(f"imap-9-{tmp_path.name}")[0], "Junk")
    result = run_agent(*args)
    assert result.returncode == 0, result.stderr
    assert list(mailbox.votes().values()) == ["spam"]


def test_the_watcher_works_over_implicit_tls(
    mailbox: Mailbox, dovecot: Dovecot, tmp_path: Path
) -> None:
    args = imap_args(dovecot, mailbox, tmp_path, "--port", str(dovecot.tls_port), "--tls")
    result = run_agent(*args, "--cafile", str(dovecot.cafile))
    assert result.returncode == 0, result.stderr


def test_an_untrusted_certificate_is_refused_with_a_clear_error(
    mailbox: Mailbox, dovecot: Dovecot, tmp_path: Path
) -> None:
    args = imap_args(dovecot, mailbox, tmp_path, "--port", str(dovecot.tls_port), "--tls")
    result = run_agent(*args)
    assert result.returncode == 2
    assert b"certificate" in result.stderr.lower()
    assert result.stderr.count(b"\n") == 1


def test_without_idle_the_watcher_polls(world: LocalWorld, tmp_path: Path) -> None:
    no_idle = "imap_capability = IMAP4rev1 LITERAL+ SASL-IR ID ENABLE UIDPLUS MOVE SPECIAL-USE\n"
    with running_dovecot(require_binary("dovecot"), users=2, extra=no_idle) as server:
        marker = Mailbox(server, world, tmp_path, server.users[0])
        receiver = Mailbox(server, world, tmp_path, server.users[1])
        original, edited = campaign(f"imap-10-{tmp_path.name}")
        marker.scan()
        marker.deliver(original, "Junk")
        marker.scan()
        watcher = receiver.watcher(poll=0.3)
        stop = threading.Event()
        thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
        thread.start()
        try:
            deadline = time.monotonic() + 20
            while watcher.scans == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            receiver.deliver(edited)
            while time.monotonic() < deadline and not receiver.uids("Junk"):
                time.sleep(0.2)
            assert len(receiver.uids("Junk")) == 1
            assert not watcher.used_idle
        finally:
            stop.set()
            thread.join(10)
            watcher.network.close()
            watcher.state.close()
            marker.person.logout()
            receiver.person.logout()


def test_mail_left_in_the_inbox_is_learned_and_unlearned_when_moved_to_junk(
    mailbox: Mailbox, tmp_path: Path
) -> None:
    from agent.defences import load_sketch, sketch_path

    mailbox.scan()
    mailbox.deliver(ham(f"imap-learn-1-{tmp_path.name}"))
    mailbox.deliver(ham(f"imap-learn-2-{tmp_path.name}"))
    mailbox.scan()
    assert sketch_path(mailbox.config).exists()
    learned = load_sketch(mailbox.config).counts.copy()
    mailbox.move_all("INBOX", "Junk")  # "these were spam after all"
    mailbox.scan()
    assert list(mailbox.votes().values()) == ["spam", "spam"]
    assert learned.any()  # the kept mail was learned, then taken back out
    assert not load_sketch(mailbox.config).counts.any()

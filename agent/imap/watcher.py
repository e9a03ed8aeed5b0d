"""The IMAP watcher: checks new inbox mail and files spam into Junk; a message the user
moves into Junk gets a spam vote, one moved from Junk back to the inbox a ham vote (on
the boilerplate it shares with the spam it matched, as ``agent unmark`` votes). Mail
left in the inbox and mail moved out of Junk is learned into the user's window sketch
(``agent.defences``); a learned message the user later moves into Junk is unlearned
before its spam vote, so the vote keeps the spam's own windows.

Only changes after the watcher first saw a mailbox count (mail already there is left
alone unless ``from_start``). It waits with IDLE when the server has it (polling
otherwise) and rescans both mailboxes on every wake-up, at least every ``poll``
seconds. Connection and peer failures end the session; ``run`` reconnects with
exponential back-off. Every step is recorded in ``WatcherState`` before the next, so a
restart neither misses a message nor votes twice.
"""

from __future__ import annotations

import contextlib
import imaplib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from imapclient import IMAPClient
from imapclient.exceptions import IMAPClientError, LoginError

from agent.imap.state import WatcherState
from agent.verdicts import SPAM
from p2pspam.errors import InputError, P2PSpamError

log = logging.getLogger("p2pspam.agent.imap")

FETCH_BATCH = 50
MAX_BACKOFF = 300.0


@dataclass(frozen=True, slots=True)
class ImapSettings:
    """Where and how to connect."""

    host: str
    port: int
    user: str
    password: str
    inbox: str = "INBOX"
    junk: str = "Junk"
    tls: bool = False
    starttls: bool = False
    cafile: str | None = None  # trust these certificates (default: the system's)
    poll: float = 30.0
    timeout: float = 60.0
    from_start: bool = False


@dataclass
class ScanReport:
    """What one scan did."""

    checked: int = 0
    filed: int = 0
    spam_votes: int = 0
    ham_votes: int = 0
    learned: int = 0
    events: list[str] = field(default_factory=list)


class Watcher:
    """Watches one account's inbox and Junk folder."""

    def __init__(
        self,
        settings: ImapSettings,
        state: WatcherState,
        network: Any,
        clock: Callable[[], int] | None = None,
    ) -> None:
        self.settings = settings
        self.state = state
        self.network = network
        self.clock = clock or (lambda: int(time.time() * 1000))
        self.account = f"{settings.user}@{settings.host}:{settings.port}"
        self.retry_delays: list[float] = []  # the back-off waits so far, in seconds
        self.scans = 0  # completed scans (for status and tests)
        self.used_idle = False  # whether the server's IDLE was used to wait

    def connect(self) -> IMAPClient:
        """Open an authenticated IMAP session (creating the Junk folder if missing)."""
        s = self.settings
        import ssl

        context = ssl.create_default_context(cafile=s.cafile) if (s.tls or s.starttls) else None
        imap = IMAPClient(s.host, port=s.port, ssl=s.tls, ssl_context=context, timeout=s.timeout)
        try:
            if s.starttls:
                imap.starttls(context)
            imap.login(s.user, s.password)
            if not imap.folder_exists(s.junk):
                imap.create_folder(s.junk)
        except BaseException:
            _close(imap)
            raise
        return imap

    def _new_uids(self, imap: IMAPClient, mailbox: str) -> tuple[list[int], bool]:
        info = imap.select_folder(mailbox)
        uidvalidity = int(info[b"UIDVALIDITY"])
        known = self.state.known(self.account, mailbox, uidvalidity)
        last = self.state.position(self.account, mailbox, uidvalidity)
        if not known and not self.settings.from_start:
            uidnext = int(info.get(b"UIDNEXT", 1))
            self.state.advance(self.account, mailbox, uidnext - 1)
            last = uidnext - 1
        uids = sorted(u for u in imap.search(["UID", f"{last + 1}:*"]) if u > last)
        return uids, known

    def _fetch(self, imap: IMAPClient, uids: list[int]) -> Any:
        for start in range(0, len(uids), FETCH_BATCH):
            batch = uids[start : start + FETCH_BATCH]
            data = imap.fetch(batch, ["BODY.PEEK[]"])
            for uid in batch:
                raw = data.get(uid, {}).get(b"BODY[]")
                yield uid, raw if isinstance(raw, bytes) else None

    def scan(self, imap: IMAPClient) -> ScanReport:
        """Process what changed in Junk, then in the inbox, since the last scan."""
        report = ScanReport()
        self._scan_junk(imap, report)
        self._scan_inbox(imap, report)
        self.scans += 1
        return report

    def _scan_junk(self, imap: IMAPClient, report: ScanReport) -> None:
        junk = self.settings.junk
        uids, _ = self._new_uids(imap, junk)
        for uid, raw in self._fetch(imap, uids):
            guid = self.network.guid(raw) if raw is not None else None
            if guid is not None:
                self.state.set_in_junk(self.account, guid)
                if self.state.auto_filed(self.account, guid):
                    pass  # filed by us: not the user's judgement
                elif self.state.vote_of(self.account, guid) != "spam":
                    if self.state.learned(self.account, guid):
                        self.network.unlearn(raw)
                        self.state.set_learned(self.account, guid, False)
                    self.network.vote(raw, "spam", self.clock())
                    self.state.record_vote(self.account, guid, "spam", self.clock())
                    report.spam_votes += 1
                    report.events.append(f"spam vote on {guid.hex()} (moved into {junk})")
            self.state.advance(self.account, junk, uid)

    def _scan_inbox(self, imap: IMAPClient, report: ScanReport) -> None:
        inbox = self.settings.inbox
        uids, _ = self._new_uids(imap, inbox)
        for uid, raw in self._fetch(imap, uids):
            guid = self.network.guid(raw) if raw is not None else None
            if guid is None:
                self.state.advance(self.account, inbox, uid)
                continue
            if self.state.in_junk(self.account, guid):
                # the user took it out of Junk: not spam
                self.state.set_in_junk(self.account, guid, False)
                self.state.set_auto_filed(self.account, guid, False)
                if self.state.vote_of(self.account, guid) != "ham":
                    self.network.vote(raw, "ham", self.clock(), rescue=True)
                    self.state.record_vote(self.account, guid, "ham", self.clock())
                    report.ham_votes += 1
                    report.events.append(f"ham vote on {guid.hex()} (moved out of Junk)")
                self._learn(raw, guid, report)
            elif self.state.vote_of(self.account, guid) != "ham":
                verdict = self.network.check(raw)
                report.checked += 1
                if verdict.status == SPAM:
                    self.state.set_auto_filed(self.account, guid)
                    self.state.set_in_junk(self.account, guid)
                    _move(imap, uid, self.settings.junk)
                    report.filed += 1
                    report.events.append(f"filed {guid.hex()} into {self.settings.junk}")
                else:
                    self._learn(raw, guid, report)
            self.state.advance(self.account, inbox, uid)

    def _learn(self, raw: bytes, guid: bytes, report: ScanReport) -> None:
        """Learn a message the user keeps into their window sketch (once)."""
        if not self.state.learned(self.account, guid) and self.network.learn(raw):
            self.state.set_learned(self.account, guid)
            report.learned += 1

    def wait(self, imap: IMAPClient, stop: threading.Event) -> None:
        """Wait for inbox activity (IDLE) or ``poll`` seconds, whichever comes first."""
        deadline = time.monotonic() + self.settings.poll
        if b"IDLE" not in imap.capabilities():
            stop.wait(self.settings.poll)
            return
        self.used_idle = True
        imap.select_folder(self.settings.inbox)
        imap.idle()
        try:
            while not stop.is_set() and time.monotonic() < deadline:
                slice_s = max(0.05, min(1.0, deadline - time.monotonic()))
                if imap.idle_check(timeout=slice_s):
                    break
        finally:
            imap.idle_done()

    def run(self, stop: threading.Event | None = None, once: bool = False) -> None:
        """Watch until ``stop`` is set (or one scan with ``once``), reconnecting with
        exponential back-off after connection or peer failures."""
        stop = stop or threading.Event()
        backoff = 1.0
        while not stop.is_set():
            imap = None
            try:
                imap = self.connect()
                backoff = 1.0
                while not stop.is_set():
                    report = self.scan(imap)
                    for event in report.events:
                        log.info("%s: %s", self.account, event)
                    if once:
                        return
                    self.wait(imap, stop)
            except LoginError as exc:  # retrying a refused login cannot help
                raise InputError(f"{self.account}: IMAP login refused: {_text(exc)}") from None
            except (IMAPClientError, imaplib.IMAP4.error, OSError) as exc:
                if once:
                    raise InputError(f"{self.account}: IMAP failure: {_text(exc)}") from None
                log.warning("%s: IMAP failure (%s); retrying in %.0fs", self.account, exc, backoff)
            except P2PSpamError as exc:
                if once:
                    raise
                log.warning("%s: peer failure (%s); retrying in %.0fs", self.account, exc, backoff)
            finally:
                if imap is not None:
                    _close(imap)
            self.retry_delays.append(backoff)
            stop.wait(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)


def _text(exc: BaseException) -> str:
    text = str(exc)
    if text.startswith(("b'", 'b"')):
        text = text[2:-1]
    return text or type(exc).__name__


def _move(imap: IMAPClient, uid: int, folder: str) -> None:
    if imap.has_capability("MOVE"):
        imap.move([uid], folder)
        return
    imap.copy([uid], folder)
    imap.add_flags([uid], [b"\\Deleted"])
    if imap.has_capability("UIDPLUS"):
        imap.uid_expunge([uid])
    else:
        imap.expunge()


def _close(imap: IMAPClient) -> None:
    try:
        imap.logout()
    except Exception:  # already broken: nothing more to release
        with contextlib.suppress(Exception):
            imap.shutdown()

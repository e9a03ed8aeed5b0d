"""The IMAP watcher's SQLite state survives restarts and resets on a new UIDVALIDITY."""

from __future__ import annotations

from pathlib import Path

from agent.imap.state import WatcherState

GUID = bytes(range(20))


def test_positions_and_votes_survive_a_restart(tmp_path: Path) -> None:
    state = WatcherState(tmp_path / "s.sqlite3")
    state.position("a", "INBOX", 7)
    state.advance("a", "INBOX", 41)
    state.record_vote("a", GUID, "spam", 1000)
    state.set_in_junk("a", GUID)
    state.close()
    again = WatcherState(tmp_path / "s.sqlite3")
    assert again.known("a", "INBOX", 7)
    assert again.position("a", "INBOX", 7) == 41
    assert again.vote_of("a", GUID) == "spam"
    assert again.in_junk("a", GUID)
    assert again.votes("a") == {GUID: "spam"}


def test_a_new_uidvalidity_starts_the_mailbox_over(tmp_path: Path) -> None:
    state = WatcherState(tmp_path / "s.sqlite3")
    state.position("a", "INBOX", 7)
    state.advance("a", "INBOX", 41)
    assert not state.known("a", "INBOX", 8)
    assert state.position("a", "INBOX", 8) == 0


def test_positions_never_move_backwards(tmp_path: Path) -> None:
    state = WatcherState(tmp_path / "s.sqlite3")
    state.position("a", "Junk", 1)
    state.advance("a", "Junk", 10)
    state.advance("a", "Junk", 3)
    assert state.position("a", "Junk", 1) == 10


def test_accounts_are_separate(tmp_path: Path) -> None:
    state = WatcherState(tmp_path / "s.sqlite3")
    state.record_vote("a", GUID, "ham", 1)
    assert state.vote_of("b", GUID) is None
    assert not state.auto_filed("b", GUID)

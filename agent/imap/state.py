"""The IMAP watcher's memory on disk (SQLite): what it has seen and what it voted.

Per account and mailbox: the UIDVALIDITY and the highest UID processed, so a restart
resumes where it stopped (a changed UIDVALIDITY starts the mailbox over). Per account and
message GUID: the vote cast (so a restart, or the same message seen twice, never votes
twice), whether the watcher itself filed it into Junk (such a message is not a user's
spam vote), and whether it was seen in Junk (so its reappearance in the inbox is the user
saying "not spam"); and whether its windows were learned into the user's window sketch
as kept mail (so a message the user later moves into Junk is taken back out of it).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS mailbox (
    account TEXT NOT NULL, name TEXT NOT NULL,
    uidvalidity INTEGER NOT NULL, last_uid INTEGER NOT NULL,
    PRIMARY KEY (account, name)
);
CREATE TABLE IF NOT EXISTS message (
    account TEXT NOT NULL, guid BLOB NOT NULL,
    vote TEXT, voted_ms INTEGER,
    auto_filed INTEGER NOT NULL DEFAULT 0,
    in_junk INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account, guid)
);
CREATE TABLE IF NOT EXISTS learned (
    account TEXT NOT NULL, guid BLOB NOT NULL,
    PRIMARY KEY (account, guid)
);
"""


class WatcherState:
    """The SQLite file of one watcher (every write is committed at once)."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        # one watcher uses it at a time, possibly from a thread other than its creator
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(_SCHEMA)

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    def known(self, account: str, mailbox: str, uidvalidity: int) -> bool:
        """True when ``mailbox`` was seen before with this UIDVALIDITY."""
        row = self.db.execute(
            "SELECT uidvalidity FROM mailbox WHERE account=? AND name=?", (account, mailbox)
        ).fetchone()
        return row is not None and row[0] == uidvalidity

    def position(self, account: str, mailbox: str, uidvalidity: int) -> int:
        """The last UID processed in ``mailbox`` (0 when new or UIDVALIDITY changed)."""
        row = self.db.execute(
            "SELECT uidvalidity, last_uid FROM mailbox WHERE account=? AND name=?",
            (account, mailbox),
        ).fetchone()
        if row is None or row[0] != uidvalidity:
            self.db.execute(
                "INSERT OR REPLACE INTO mailbox VALUES (?, ?, ?, 0)",
                (account, mailbox, uidvalidity),
            )
            return 0
        return int(row[1])

    def advance(self, account: str, mailbox: str, uid: int) -> None:
        """Record that every UID up to ``uid`` of ``mailbox`` was processed."""
        self.db.execute(
            "UPDATE mailbox SET last_uid=max(last_uid, ?) WHERE account=? AND name=?",
            (uid, account, mailbox),
        )

    def _ensure(self, account: str, guid: bytes) -> None:
        self.db.execute(
            "INSERT OR IGNORE INTO message (account, guid) VALUES (?, ?)", (account, guid)
        )

    def vote_of(self, account: str, guid: bytes) -> str | None:
        """The verdict this watcher voted on ``guid``, if any."""
        row = self.db.execute(
            "SELECT vote FROM message WHERE account=? AND guid=?", (account, guid)
        ).fetchone()
        return None if row is None else row[0]

    def record_vote(self, account: str, guid: bytes, verdict: str, now_ms: int) -> None:
        """Remember a published vote."""
        self._ensure(account, guid)
        self.db.execute(
            "UPDATE message SET vote=?, voted_ms=? WHERE account=? AND guid=?",
            (verdict, now_ms, account, guid),
        )

    def _flag(self, column: str, account: str, guid: bytes) -> bool:
        row = self.db.execute(
            f"SELECT {column} FROM message WHERE account=? AND guid=?", (account, guid)
        ).fetchone()
        return bool(row and row[0])

    def _set(self, column: str, account: str, guid: bytes, value: bool) -> None:
        self._ensure(account, guid)
        self.db.execute(
            f"UPDATE message SET {column}=? WHERE account=? AND guid=?",
            (int(value), account, guid),
        )

    def auto_filed(self, account: str, guid: bytes) -> bool:
        """True when the watcher itself moved ``guid`` into Junk."""
        return self._flag("auto_filed", account, guid)

    def set_auto_filed(self, account: str, guid: bytes, value: bool = True) -> None:
        """Remember (or forget) that the watcher filed ``guid`` into Junk."""
        self._set("auto_filed", account, guid, value)

    def in_junk(self, account: str, guid: bytes) -> bool:
        """True when ``guid`` was last seen in Junk."""
        return self._flag("in_junk", account, guid)

    def set_in_junk(self, account: str, guid: bytes, value: bool = True) -> None:
        """Remember whether ``guid`` is in Junk."""
        self._set("in_junk", account, guid, value)

    def learned(self, account: str, guid: bytes) -> bool:
        """True when ``guid``'s windows are counted in the user's window sketch."""
        row = self.db.execute(
            "SELECT 1 FROM learned WHERE account=? AND guid=?", (account, guid)
        ).fetchone()
        return row is not None

    def set_learned(self, account: str, guid: bytes, value: bool = True) -> None:
        """Remember (or forget) that ``guid`` was learned into the sketch."""
        if value:
            self.db.execute("INSERT OR IGNORE INTO learned VALUES (?, ?)", (account, guid))
        else:
            self.db.execute("DELETE FROM learned WHERE account=? AND guid=?", (account, guid))

    def votes(self, account: str) -> dict[bytes, str]:
        """Every vote this watcher cast for ``account``."""
        rows = self.db.execute(
            "SELECT guid, vote FROM message WHERE account=? AND vote IS NOT NULL", (account,)
        )
        return {bytes(g): v for g, v in rows}

"""``Store``: a peer's approximate-DOLR records on disk (SQLite, WAL).

The same operations as ``p2pspam.adolr.index.ApproxIndex``, persistently, with merges
done by SQL upserts that give exactly the result of the pure merge functions of
``p2pspam.adolr.records`` (tested against them). Plus expiry, paged listings for
republication and hand-off to new nodes, path pointers, and a small meta table (node id,
routing state).

Durability: every public write is one transaction, committed before the method returns.
The database runs in WAL mode with ``synchronous=NORMAL`` by default: a committed
transaction is in the WAL file (the OS page cache) when ``commit`` returns, so it survives
the *process* being killed (SIGKILL, crash); only an OS crash or power loss can lose the
last transactions. Pass ``synchronous="FULL"`` to fsync the WAL on every commit and
survive power loss too, at a cost in write throughput.

Memory stays bounded: records live on disk; listings are paged (keyset pagination).
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from p2pspam.adolr.index import LocalRouting
from p2pspam.adolr.keys import KEY_BYTES, feature_key
from p2pspam.adolr.query import DEFAULT_MAX_GUIDS
from p2pspam.adolr.records import (
    DEFAULT_CAP,
    MAX_VOTES_PER_RECORD,
    FeatureEntry,
    FeatureObject,
    ObjectRecord,
    Pointer,
    VectorLike,
    Votes,
    check_cap,
    new_record,
    pack_features,
    published_entry,
    tombstone_entry,
    unpack_features,
)
from p2pspam.errors import ParameterError

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS feature_entries (
    key BLOB NOT NULL,
    guid BLOB NOT NULL,
    namespace TEXT NOT NULL,
    features BLOB NOT NULL,
    first_seen INTEGER NOT NULL,
    last_seen INTEGER NOT NULL,
    expires INTEGER NOT NULL,
    removed INTEGER,
    PRIMARY KEY (key, guid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS feature_entries_expires ON feature_entries (expires);
CREATE TABLE IF NOT EXISTS boilerplate (
    key BLOB PRIMARY KEY,
    sketch BLOB NOT NULL,
    expires INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS boilerplate_expires ON boilerplate (expires);
CREATE TABLE IF NOT EXISTS object_records (
    guid BLOB PRIMARY KEY,
    namespace TEXT NOT NULL,
    features BLOB NOT NULL,
    expires INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS object_records_expires ON object_records (expires);
CREATE TABLE IF NOT EXISTS votes (
    guid BLOB NOT NULL,
    user_id TEXT NOT NULL,
    ts INTEGER NOT NULL,
    vote BLOB NOT NULL,
    PRIMARY KEY (guid, user_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pointers (
    key BLOB NOT NULL,
    node_id BLOB NOT NULL,
    host TEXT NOT NULL,
    port INTEGER NOT NULL,
    expires INTEGER NOT NULL,
    PRIMARY KEY (key, node_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pointers_expires ON pointers (expires);
CREATE TABLE IF NOT EXISTS meta (
    name TEXT PRIMARY KEY,
    value BLOB NOT NULL
) WITHOUT ROWID;
"""

# The join of two entries (see records.merge_entries). In an upsert every column on the
# right-hand side is the row's value before the update.
_UPSERT_ENTRY = """
INSERT INTO feature_entries
    (key, guid, namespace, features, first_seen, last_seen, expires, removed)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (key, guid) DO UPDATE SET
    namespace = CASE WHEN (excluded.namespace, excluded.features) > (namespace, features)
                     THEN excluded.namespace ELSE namespace END,
    features = CASE WHEN (excluded.namespace, excluded.features) > (namespace, features)
                    THEN excluded.features ELSE features END,
    first_seen = min(first_seen, excluded.first_seen),
    last_seen = max(last_seen, excluded.last_seen),
    expires = max(expires, excluded.expires),
    removed = coalesce(max(removed, excluded.removed), removed, excluded.removed)
"""

_UPSERT_RECORD = """
INSERT INTO object_records (guid, namespace, features, expires) VALUES (?, ?, ?, ?)
ON CONFLICT (guid) DO UPDATE SET
    namespace = CASE WHEN (excluded.namespace, excluded.features) > (namespace, features)
                     THEN excluded.namespace ELSE namespace END,
    features = CASE WHEN (excluded.namespace, excluded.features) > (namespace, features)
                    THEN excluded.features ELSE features END,
    expires = max(expires, excluded.expires)
"""

_UPSERT_VOTE = """
INSERT INTO votes (guid, user_id, ts, vote) VALUES (?, ?, ?, ?)
ON CONFLICT (guid, user_id) DO UPDATE SET ts = excluded.ts, vote = excluded.vote
WHERE (excluded.ts, excluded.vote) > (ts, vote)
"""

_UPSERT_POINTER = """
INSERT INTO pointers (key, node_id, host, port, expires) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (key, node_id) DO UPDATE SET
    host = excluded.host, port = excluded.port, expires = excluded.expires
WHERE (excluded.expires, excluded.host, excluded.port) > (expires, host, port)
"""

_ENTRY_COLUMNS = "guid, namespace, features, first_seen, last_seen, expires, removed"


def _entry(row: tuple) -> FeatureEntry:
    guid, namespace, features, first, last, expires, removed = row
    return FeatureEntry(guid, namespace, unpack_features(features), first, last, expires, removed)


def _split_sketch(blob: bytes) -> tuple[bytes, ...]:
    return tuple(blob[i : i + KEY_BYTES] for i in range(0, len(blob), KEY_BYTES))


@dataclass(frozen=True, slots=True)
class RepublishBatch:
    """One page of records to republish: feature objects by key, and object records."""

    objects: list[tuple[bytes, FeatureObject]]
    records: list[ObjectRecord]


class Store(LocalRouting):
    """A peer's feature objects, object records, path pointers and meta data in SQLite.

    ``cap`` must equal the network's boilerplate cap (and the one used for the data
    already stored); ``max_guids`` is the query-time boilerplate discount; ``max_votes``
    the users kept per object record (the most recent, as ``records.bound_votes``)."""

    def __init__(
        self,
        path: str | Path,
        *,
        cap: int = DEFAULT_CAP,
        max_guids: int = DEFAULT_MAX_GUIDS,
        max_votes: int = MAX_VOTES_PER_RECORD,
        synchronous: str = "NORMAL",
        check_same_thread: bool = True,
    ) -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ParameterError(f"synchronous must be NORMAL or FULL, got {synchronous!r}")
        self.cap = check_cap(cap)
        self.max_guids = max_guids
        self.max_votes = max_votes
        self.path = str(path)
        try:
            self._db = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=check_same_thread
            )
        except sqlite3.Error as exc:
            raise ParameterError(f"cannot open the store {self.path}: {exc}") from exc
        self._depth = 0
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.executescript(_SCHEMA)
            with self.transaction():
                version = self.get_meta("schema_version")
                if version is None:
                    self.set_meta("schema_version", str(SCHEMA_VERSION).encode())
                stored_cap = self.get_meta("cap")
                if stored_cap is None:
                    self.set_meta("cap", str(cap).encode())
        except sqlite3.Error as exc:
            self._db.close()
            raise ParameterError(f"cannot open the store {self.path}: {exc}") from exc
        problem = None
        if version is not None and version != str(SCHEMA_VERSION).encode():
            problem = f"has schema version {version!r}, this program reads {SCHEMA_VERSION}"
        elif stored_cap is not None and stored_cap != str(cap).encode():
            problem = (
                f"was created with cap={stored_cap.decode()}, not {cap}: open it with the "
                "same cap (the network's boilerplate cap)"
            )
        if problem:
            self._db.close()
            raise ParameterError(f"the store {self.path} {problem}")

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the database (every acknowledged write is already committed)."""
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group writes into one transaction (nestable: the outermost one commits)."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._db.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            self._db.execute("ROLLBACK")
            raise
        self._depth = 0
        self._db.execute("COMMIT")

    # ------------------------------------------------------------------ feature objects

    def add_entry(self, key: bytes, entry: FeatureEntry) -> None:
        """Merge one entry (publication or tombstone) into the feature object at ``key``."""
        with self.transaction():
            self._add_entry(key, entry)

    def _add_entry(self, key: bytes, entry: FeatureEntry) -> None:
        db = self._db
        row = db.execute("SELECT sketch, expires FROM boilerplate WHERE key = ?", (key,)).fetchone()
        if row is not None:
            self._merge_boilerplate(
                key, _split_sketch(row[0]), row[1], [entry.guid], entry.expires_ms
            )
            return
        db.execute(
            _UPSERT_ENTRY,
            (
                key,
                entry.guid,
                entry.namespace,
                pack_features(entry.features),
                entry.first_seen_ms,
                entry.last_seen_ms,
                entry.expires_ms,
                entry.removed_ms,
            ),
        )
        (count,) = db.execute(
            "SELECT count(*) FROM feature_entries WHERE key = ?", (key,)
        ).fetchone()
        if count > self.cap:
            guids = [
                g
                for (g,) in db.execute(
                    "SELECT guid FROM feature_entries WHERE key = ? ORDER BY guid LIMIT ?",
                    (key, self.cap),
                )
            ]
            (expires,) = db.execute(
                "SELECT max(expires) FROM feature_entries WHERE key = ?", (key,)
            ).fetchone()
            db.execute("DELETE FROM feature_entries WHERE key = ?", (key,))
            db.execute(
                "INSERT INTO boilerplate (key, sketch, expires) VALUES (?, ?, ?)",
                (key, b"".join(guids), expires),
            )

    def _merge_boilerplate(
        self,
        key: bytes,
        sketch: Iterable[bytes],
        expires: int,
        guids: Iterable[bytes],
        other_expires: int,
    ) -> None:
        merged = heapq.nsmallest(self.cap, set(sketch).union(guids))
        self._db.execute(
            "INSERT INTO boilerplate (key, sketch, expires) VALUES (?, ?, ?) "
            "ON CONFLICT (key) DO UPDATE SET sketch = excluded.sketch, expires = excluded.expires",
            (key, b"".join(merged), max(expires, other_expires)),
        )

    def merge_feature_object(self, key: bytes, obj: FeatureObject) -> None:
        """Merge a whole feature object (e.g. received by replication) into ``key``."""
        with self.transaction():
            if not obj.boilerplate_sketch:
                for entry in obj.entries.values():
                    self._add_entry(key, entry)
                return
            db = self._db
            row = db.execute(
                "SELECT sketch, expires FROM boilerplate WHERE key = ?", (key,)
            ).fetchone()
            if row is not None:
                sketch, expires = _split_sketch(row[0]), row[1]
            else:
                sketch, expires = (), obj.boilerplate_expires_ms
            mine = db.execute(
                "SELECT guid, expires FROM feature_entries WHERE key = ?", (key,)
            ).fetchall()
            db.execute("DELETE FROM feature_entries WHERE key = ?", (key,))
            self._merge_boilerplate(
                key,
                (*sketch, *obj.boilerplate_sketch),
                max(expires, obj.boilerplate_expires_ms),
                [g for g, _ in mine],
                max((e for _, e in mine), default=0),
            )

    def get_feature_object(self, key: bytes) -> FeatureObject | None:
        """Return the feature object held at ``key``, or None."""
        row = self._db.execute(
            "SELECT sketch, expires FROM boilerplate WHERE key = ?", (key,)
        ).fetchone()
        if row is not None:
            return FeatureObject({}, _split_sketch(row[0]), row[1])
        rows = self._db.execute(
            f"SELECT {_ENTRY_COLUMNS} FROM feature_entries WHERE key = ?", (key,)
        ).fetchall()
        if not rows:
            return None
        return FeatureObject({r[0]: _entry(r) for r in rows})

    def feature_objects_for(
        self, namespace: str, features: Iterable[int]
    ) -> dict[int, FeatureObject]:
        """Return feature -> feature object for those of ``features`` held here (two
        queries whatever the number of features)."""
        by_key = {feature_key(namespace, f): f for f in features}
        if not by_key:
            return {}
        marks = ",".join("?" * len(by_key))
        keys = list(by_key)
        out: dict[int, FeatureObject] = {}
        for key, sketch, expires in self._db.execute(
            f"SELECT key, sketch, expires FROM boilerplate WHERE key IN ({marks})", keys
        ):
            out[by_key[key]] = FeatureObject({}, _split_sketch(sketch), expires)
        entries: dict[bytes, dict[bytes, FeatureEntry]] = {}
        for row in self._db.execute(
            f"SELECT key, {_ENTRY_COLUMNS} FROM feature_entries WHERE key IN ({marks})", keys
        ):
            entries.setdefault(row[0], {})[row[1]] = _entry(row[1:])
        for key, held in entries.items():
            out[by_key[key]] = FeatureObject(held)
        return out

    def iter_feature_keys(
        self, after: bytes = b"", limit: int = 256, before: bytes | None = None
    ) -> list[bytes]:
        """Return up to ``limit`` feature keys in (``after``, ``before``), ascending."""
        hi = before if before is not None else b"\xff" * (KEY_BYTES + 1)
        rows = self._db.execute(
            "SELECT key FROM (SELECT DISTINCT key FROM feature_entries WHERE key > ?1 AND key < ?2"
            " UNION SELECT key FROM boilerplate WHERE key > ?1 AND key < ?2)"
            " ORDER BY key LIMIT ?3",
            (after, hi, limit),
        )
        return [k for (k,) in rows]

    def iter_feature_objects(self, batch: int = 256) -> Iterator[tuple[bytes, FeatureObject]]:
        """Yield every (key, feature object), reading ``batch`` keys at a time."""
        after = b""
        while keys := self.iter_feature_keys(after, batch):
            for key in keys:
                obj = self.get_feature_object(key)
                if obj is not None:
                    yield key, obj
            after = keys[-1]

    # ------------------------------------------------------------------ the DOLR API

    def publish_approx(
        self,
        vector: VectorLike,
        guid: bytes,
        now_ms: int,
        ttl_ms: int,
        votes: Votes | None = None,
    ) -> int:
        """Publish ``guid`` with ``vector``: add its entry to each feature object and merge
        its object record (with ``votes``), in one transaction. Return how many feature
        objects were updated."""
        entry = published_entry(guid, vector.namespace, vector.features, now_ms, ttl_ms)
        record = new_record(guid, entry.namespace, entry.features, now_ms, ttl_ms, votes)
        with self.transaction():
            for f in entry.features:
                self._add_entry(feature_key(entry.namespace, f), entry)
            self._put_record(record)
        return len(entry.features)

    def unpublish_approx(self, vector: VectorLike, guid: bytes, now_ms: int, ttl_ms: int) -> int:
        """Unpublish ``guid``: merge a tombstone dated ``now_ms`` (kept ``ttl_ms``) into
        each feature object of ``vector``. Return how many feature objects were updated."""
        entry = tombstone_entry(guid, vector.namespace, vector.features, now_ms, ttl_ms)
        with self.transaction():
            for f in entry.features:
                self._add_entry(feature_key(entry.namespace, f), entry)
        return len(entry.features)

    # ------------------------------------------------------------------ object records

    def put_record(self, record: ObjectRecord) -> None:
        """Merge an object record into the one held for its GUID."""
        with self.transaction():
            self._put_record(record)

    def _put_record(self, record: ObjectRecord) -> None:
        self._db.execute(
            _UPSERT_RECORD,
            (record.guid, record.namespace, pack_features(record.features), record.expires_ms),
        )
        self._put_votes(record.guid, record.votes)

    def _put_votes(self, guid: bytes, votes: Votes) -> None:
        if not votes:
            return
        db = self._db
        db.executemany(_UPSERT_VOTE, [(guid, user, ts, vote) for user, (ts, vote) in votes.items()])
        (count,) = db.execute("SELECT count(*) FROM votes WHERE guid = ?", (guid,)).fetchone()
        if count > self.max_votes:
            # Keep the max_votes greatest (ts, user_id): the M-th greatest is the threshold.
            ts, user = db.execute(
                "SELECT ts, user_id FROM votes WHERE guid = ?"
                " ORDER BY ts DESC, user_id DESC LIMIT 1 OFFSET ?",
                (guid, self.max_votes - 1),
            ).fetchone()
            db.execute(
                "DELETE FROM votes WHERE guid = ? AND (ts, user_id) < (?, ?)", (guid, ts, user)
            )

    def put_votes(self, guid: bytes, votes: Votes) -> bool:
        """Merge ``votes`` (user_id -> (timestamp_ms, encoded_vote)) into the record of
        ``guid``; return False (and store nothing) when no record is held for it."""
        with self.transaction():
            if (
                self._db.execute("SELECT 1 FROM object_records WHERE guid = ?", (guid,)).fetchone()
                is None
            ):
                return False
            self._put_votes(guid, votes)
        return True

    def get_object(self, guid: bytes) -> ObjectRecord | None:
        """Return the object record of ``guid``, or None."""
        row = self._db.execute(
            "SELECT namespace, features, expires FROM object_records WHERE guid = ?", (guid,)
        ).fetchone()
        if row is None:
            return None
        votes = {
            user: (ts, vote)
            for user, ts, vote in self._db.execute(
                "SELECT user_id, ts, vote FROM votes WHERE guid = ?", (guid,)
            )
        }
        return ObjectRecord(guid, row[0], unpack_features(row[1]), votes, row[2])

    def iter_record_guids(
        self, after: bytes = b"", limit: int = 256, before: bytes | None = None
    ) -> list[bytes]:
        """Return up to ``limit`` GUIDs of held records in (``after``, ``before``), ascending."""
        hi = before if before is not None else b"\xff" * (KEY_BYTES + 1)
        rows = self._db.execute(
            "SELECT guid FROM object_records WHERE guid > ? AND guid < ? ORDER BY guid LIMIT ?",
            (after, hi, limit),
        )
        return [g for (g,) in rows]

    def iter_records(self, batch: int = 256) -> Iterator[ObjectRecord]:
        """Yield every object record, reading ``batch`` GUIDs at a time."""
        after = b""
        while guids := self.iter_record_guids(after, batch):
            for guid in guids:
                record = self.get_object(guid)
                if record is not None:
                    yield record
            after = guids[-1]

    def iter_for_republish(self, batch: int = 256) -> Iterator[RepublishBatch]:
        """Yield everything held, in pages of at most ``batch`` feature objects and
        ``batch`` records, for periodic republication."""
        if type(batch) is not int or batch < 1:
            raise ParameterError(f"batch must be a positive integer, got {batch!r}")
        objects: list[tuple[bytes, FeatureObject]] = []
        for item in self.iter_feature_objects(batch):
            objects.append(item)
            if len(objects) == batch:
                yield RepublishBatch(objects, [])
                objects = []
        records: list[ObjectRecord] = []
        for record in self.iter_records(batch):
            records.append(record)
            if len(records) == batch:
                yield RepublishBatch(objects, records)
                objects, records = [], []
        if objects or records:
            yield RepublishBatch(objects, records)

    # ------------------------------------------------------------------ pointers

    def put_pointer(self, pointer: Pointer) -> None:
        """Merge a path pointer (the freshest address of a node wins)."""
        with self.transaction():
            self._db.execute(
                _UPSERT_POINTER,
                (pointer.key, pointer.node_id, pointer.host, pointer.port, pointer.expires_ms),
            )

    def get_pointers(self, key: bytes, now_ms: int | None = None) -> list[Pointer]:
        """Return the unexpired pointers for ``key``, freshest first."""
        rows = self._db.execute(
            "SELECT node_id, host, port, expires FROM pointers WHERE key = ? AND expires >= ?"
            " ORDER BY expires DESC, node_id",
            (key, -1 if now_ms is None else now_ms),
        )
        return [Pointer(key, n, h, p, e) for n, h, p, e in rows]

    # ------------------------------------------------------------------ meta

    def get_meta(self, name: str) -> bytes | None:
        """Return the meta value ``name`` (e.g. "node_id", "routing_state"), or None."""
        row = self._db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return None if row is None else bytes(row[0])

    def set_meta(self, name: str, value: bytes) -> None:
        """Store the meta value ``name``."""
        with self.transaction():
            self._db.execute(
                "INSERT INTO meta (name, value) VALUES (?, ?)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (name, bytes(value)),
            )

    # ------------------------------------------------------------------ housekeeping

    def expire(self, now_ms: int) -> int:
        """Delete every entry, boilerplate marker, record (with its votes) and pointer that
        expired before ``now_ms``; return how many rows were deleted."""
        db = self._db
        with self.transaction():
            dropped = db.execute(
                "DELETE FROM feature_entries WHERE expires < ?", (now_ms,)
            ).rowcount
            dropped += db.execute("DELETE FROM boilerplate WHERE expires < ?", (now_ms,)).rowcount
            db.execute(
                "DELETE FROM votes WHERE guid IN"
                " (SELECT guid FROM object_records WHERE expires < ?)",
                (now_ms,),
            )
            dropped += db.execute(
                "DELETE FROM object_records WHERE expires < ?", (now_ms,)
            ).rowcount
            dropped += db.execute("DELETE FROM pointers WHERE expires < ?", (now_ms,)).rowcount
        return dropped

    def counts(self) -> dict[str, int]:
        """Return how many records of each kind are held (for ``status``)."""
        q = self._db.execute

        def one(sql: str) -> int:
            return int(q(sql).fetchone()[0])

        boilerplate = one("SELECT count(*) FROM boilerplate")
        return {
            "feature_objects": one("SELECT count(DISTINCT key) FROM feature_entries") + boilerplate,
            "feature_entries": one("SELECT count(*) FROM feature_entries"),
            "boilerplate": boilerplate,
            "object_records": one("SELECT count(*) FROM object_records"),
            "votes": one("SELECT count(*) FROM votes"),
            "pointers": one("SELECT count(*) FROM pointers"),
        }

    def snapshot(self) -> tuple[dict[bytes, FeatureObject], dict[bytes, ObjectRecord]]:
        """Return (feature key -> object, GUID -> record), for comparing replicas."""
        objects = dict(self.iter_feature_objects())
        records = {r.guid: r for r in self.iter_records()}
        return objects, records

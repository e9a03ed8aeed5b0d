"""``ApproxIndex``: the approximate DOLR of one node, in memory.

The reference behaviour of the SQLite store (``p2pspam.peer.store.Store``) and the index
the replay simulator runs in-process. Dict-based, no encoding per call. Every operation
is a join with the pure merge rules of ``p2pspam.adolr.records``, so the state after any
sequence of operations equals the merge of them in any order (expiry aside).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator

from p2pspam.adolr.keys import feature_key
from p2pspam.adolr.query import DEFAULT_MAX_GUIDS, Match, check_query, evaluate
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
    merge_entries,
    merge_objects,
    merge_pointers,
    merge_records,
    merge_votes,
    new_record,
    published_entry,
    tombstone_entry,
)


class LocalRouting:
    """``route_approx`` over whatever ``feature_objects_for`` a holder of feature objects
    provides (shared by ApproxIndex and the SQLite Store)."""

    max_guids: int

    def feature_objects_for(
        self, namespace: str, features: Iterable[int]
    ) -> dict[int, FeatureObject]:
        """Return feature -> feature object for those of ``features`` held here."""
        raise NotImplementedError

    def route_approx(
        self,
        features: Iterable[int],
        namespace: str,
        thres: int,
        now_ms: int | None = None,
    ) -> list[Match]:
        """Return every GUID held here whose vector shares at least ``thres`` counted
        features with ``features`` (see ``p2pspam.adolr.query.evaluate``)."""
        features = tuple(check_query(features, thres))
        objects = self.feature_objects_for(namespace, features)
        return evaluate(
            features, thres, objects, namespace=namespace, now_ms=now_ms, max_guids=self.max_guids
        )


class ApproxIndex(LocalRouting):
    """Feature objects, object records and path pointers held by one node, in memory.

    ``cap``: distinct GUIDs per feature object before it becomes a boilerplate marker
    (a network-wide constant). ``max_guids``: the query-time boilerplate discount.
    ``max_votes``: users kept per object record (the most recent)."""

    def __init__(
        self,
        cap: int = DEFAULT_CAP,
        max_guids: int = DEFAULT_MAX_GUIDS,
        max_votes: int = MAX_VOTES_PER_RECORD,
    ) -> None:
        self.cap = check_cap(cap)
        self.max_guids = max_guids
        self.max_votes = max_votes
        self._entries: dict[bytes, dict[bytes, FeatureEntry]] = {}
        self._boiler: dict[bytes, tuple[tuple[bytes, ...], int]] = {}
        self._records: dict[bytes, ObjectRecord] = {}
        self._pointers: dict[bytes, dict[bytes, Pointer]] = {}

    # ------------------------------------------------------------------ feature objects

    def add_entry(self, key: bytes, entry: FeatureEntry) -> None:
        """Merge one entry (publication or tombstone) into the feature object at ``key``."""
        boiler = self._boiler.get(key)
        if boiler is not None:
            sketch, expires = boiler
            if entry.guid not in sketch and (len(sketch) < self.cap or entry.guid < sketch[-1]):
                sketch = tuple(heapq.nsmallest(self.cap, (*sketch, entry.guid)))
            self._boiler[key] = (sketch, max(expires, entry.expires_ms))
            return
        entries = self._entries.get(key)
        if entries is None:
            self._entries[key] = {entry.guid: entry}
            return
        old = entries.get(entry.guid)
        entries[entry.guid] = entry if old is None else merge_entries(old, entry)
        if len(entries) > self.cap:
            del self._entries[key]
            expires = max(e.expires_ms for e in entries.values())
            self._boiler[key] = (tuple(heapq.nsmallest(self.cap, entries)), expires)

    def merge_feature_object(self, key: bytes, obj: FeatureObject) -> None:
        """Merge a whole feature object (e.g. received by replication) into ``key``."""
        if obj.boilerplate_sketch or key in self._boiler:
            merged = merge_objects(self.get_feature_object(key) or FeatureObject({}), obj, self.cap)
            self._set_object(key, merged)
            return
        for entry in obj.entries.values():
            self.add_entry(key, entry)

    def _set_object(self, key: bytes, obj: FeatureObject) -> None:
        self._entries.pop(key, None)
        self._boiler.pop(key, None)
        if obj.boilerplate_sketch:
            self._boiler[key] = (obj.boilerplate_sketch, obj.boilerplate_expires_ms)
        elif obj.entries:
            self._entries[key] = dict(obj.entries)

    def get_feature_object(self, key: bytes) -> FeatureObject | None:
        """Return the feature object held at ``key`` (a read-only view), or None."""
        boiler = self._boiler.get(key)
        if boiler is not None:
            return FeatureObject({}, boiler[0], boiler[1])
        entries = self._entries.get(key)
        return None if entries is None else FeatureObject(entries)

    def feature_objects_for(
        self, namespace: str, features: Iterable[int]
    ) -> dict[int, FeatureObject]:
        """Return feature -> feature object for those of ``features`` held here."""
        out = {}
        for f in features:
            obj = self.get_feature_object(feature_key(namespace, f))
            if obj is not None:
                out[f] = obj
        return out

    def iter_feature_keys(self, after: bytes = b"", limit: int = 256) -> list[bytes]:
        """Return up to ``limit`` feature keys greater than ``after``, ascending."""
        keys = (k for k in (*self._entries, *self._boiler) if k > after)
        return heapq.nsmallest(limit, keys)

    # ------------------------------------------------------------------ the DOLR API

    def publish_approx(
        self,
        vector: VectorLike,
        guid: bytes,
        now_ms: int,
        ttl_ms: int,
        votes: Votes | None = None,
    ) -> int:
        """Publish ``guid`` with ``vector`` (anything with ``.namespace`` and ``.features``):
        add its entry to each feature object and merge its object record (with ``votes``).
        Return how many feature objects were updated."""
        entry = published_entry(guid, vector.namespace, vector.features, now_ms, ttl_ms)
        for f in entry.features:
            self.add_entry(feature_key(entry.namespace, f), entry)
        self.put_record(new_record(guid, entry.namespace, entry.features, now_ms, ttl_ms, votes))
        return len(entry.features)

    def unpublish_approx(self, vector: VectorLike, guid: bytes, now_ms: int, ttl_ms: int) -> int:
        """Unpublish ``guid``: merge a tombstone dated ``now_ms`` (kept ``ttl_ms``) into
        each feature object of ``vector``. Return how many feature objects were updated."""
        entry = tombstone_entry(guid, vector.namespace, vector.features, now_ms, ttl_ms)
        for f in entry.features:
            self.add_entry(feature_key(entry.namespace, f), entry)
        return len(entry.features)

    # ------------------------------------------------------------------ object records

    def put_record(self, record: ObjectRecord) -> None:
        """Merge an object record into the one held for its GUID."""
        old = self._records.get(record.guid)
        self._records[record.guid] = merge_records(
            record if old is None else old, record, self.max_votes
        )

    def put_votes(self, guid: bytes, votes: Votes) -> bool:
        """Merge ``votes`` (user_id -> (timestamp_ms, encoded_vote)) into the record of
        ``guid``; return False (and store nothing) when no record is held for it."""
        old = self._records.get(guid)
        if old is None:
            return False
        merged = merge_votes(old.votes, votes, self.max_votes)
        if merged != old.votes:
            self._records[guid] = ObjectRecord(
                old.guid, old.namespace, old.features, merged, old.expires_ms
            )
        return True

    def get_object(self, guid: bytes) -> ObjectRecord | None:
        """Return the object record of ``guid``, or None."""
        return self._records.get(guid)

    def iter_records(self) -> Iterator[ObjectRecord]:
        """Yield every object record held (for republication)."""
        yield from list(self._records.values())

    # ------------------------------------------------------------------ pointers

    def put_pointer(self, pointer: Pointer) -> None:
        """Merge a path pointer."""
        nodes = self._pointers.setdefault(pointer.key, {})
        old = nodes.get(pointer.node_id)
        nodes[pointer.node_id] = pointer if old is None else merge_pointers(old, pointer)

    def get_pointers(self, key: bytes, now_ms: int | None = None) -> list[Pointer]:
        """Return the unexpired pointers for ``key``, freshest first."""
        nodes = self._pointers.get(key, {})
        out = [p for p in nodes.values() if now_ms is None or p.expires_ms >= now_ms]
        out.sort(key=lambda p: (-p.expires_ms, p.node_id))
        return out

    # ------------------------------------------------------------------ housekeeping

    def expire(self, now_ms: int) -> int:
        """Drop every entry, boilerplate marker, record and pointer that expired before
        ``now_ms``; return how many were dropped."""
        dropped = 0
        for key in list(self._entries):
            entries = self._entries[key]
            stale = [g for g, e in entries.items() if e.expires_ms < now_ms]
            for g in stale:
                del entries[g]
            dropped += len(stale)
            if not entries:
                del self._entries[key]
        for key in [k for k, (_, exp) in self._boiler.items() if exp < now_ms]:
            del self._boiler[key]
            dropped += 1
        for guid in [g for g, r in self._records.items() if r.expires_ms < now_ms]:
            del self._records[guid]
            dropped += 1
        for key in list(self._pointers):
            nodes = self._pointers[key]
            stale = [n for n, p in nodes.items() if p.expires_ms < now_ms]
            for n in stale:
                del nodes[n]
            dropped += len(stale)
            if not nodes:
                del self._pointers[key]
        return dropped

    def counts(self) -> dict[str, int]:
        """Return how many records of each kind are held."""
        return {
            "feature_objects": len(self._entries) + len(self._boiler),
            "feature_entries": sum(len(e) for e in self._entries.values()),
            "boilerplate": len(self._boiler),
            "object_records": len(self._records),
            "votes": sum(len(r.votes) for r in self._records.values()),
            "pointers": sum(len(p) for p in self._pointers.values()),
        }

    def snapshot(self) -> tuple[dict[bytes, FeatureObject], dict[bytes, ObjectRecord]]:
        """Return (feature key -> object, GUID -> record) copies, for comparing replicas."""
        objects = {k: FeatureObject(dict(e)) for k, e in self._entries.items()}
        for k, (sketch, exp) in self._boiler.items():
            objects[k] = FeatureObject({}, sketch, exp)
        return objects, dict(self._records)

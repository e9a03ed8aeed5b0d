"""Approximate-DOLR records, their merge rules and their strict msgpack encoding.

Four record kinds live in the DHT:

- ``FeatureEntry``: one ``(GUID, full feature vector)`` publication inside a feature object,
  with first/last seen, expiry and an optional tombstone (``removed_ms``).
- ``FeatureObject``: the entries of one feature key. Past ``cap`` distinct GUIDs it turns
  into a *boilerplate* marker that keeps only a bounded sketch (the ``cap`` smallest GUIDs
  seen, a bottom-k sketch that also estimates how many GUIDs were seen).
- ``ObjectRecord``: per GUID, the vector and the votes, a last-writer-wins register per
  user (the greatest ``(timestamp_ms, encoded_vote)`` wins), at most MAX_VOTES_PER_RECORD
  users (the most recent). Votes stay opaque bytes here.
- ``Pointer``: a hint left on a lookup-path node: "key K is held by node N at host:port".

Every ``merge_*`` function is commutative, associative and idempotent (each record is a
join-semilattice), so replicas that receive the same records in any order, with
duplicates, converge. Expiry (``expire_*``) is local garbage collection driven by
``now_ms``; it is not part of the merge. Everything here is pure: time is passed in.

Refinements of the agreed interface: ``FeatureObject.boilerplate`` is a property (true
when ``boilerplate_sketch`` is non-empty); ``ObjectRecord`` also has ``expires_ms`` (records
expire unless republished); votes are bounded per record (``bound_votes``); ``Pointer``
is the path-pointer record.

Wire format (msgpack arrays, ``*_to_wire`` / ``*_from_wire`` for embedding in RPCs,
``encode_*`` / ``decode_*`` for bytes) is documented in ``docs/adolr.md``. Decoders accept
only the canonical shape and raise ``RecordError`` for anything else.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, NamedTuple, Protocol

import msgpack

from p2pspam.adolr.errors import RecordError
from p2pspam.adolr.keys import (
    FEATURE_MAX,
    KEY_BYTES,
    MAX_NAMESPACE_BYTES,
    check_namespace,
    feature_key,
)
from p2pspam.errors import ParameterError

DEFAULT_CAP = 64  # distinct GUIDs per feature object before it is marked boilerplate
MAX_CAP = 4096  # the largest cap a decoder accepts
MAX_FEATURES = 64  # features per vector
MAX_USER_ID_CHARS = 128
MAX_VOTE_BYTES = 2048
MAX_VOTES_PER_RECORD = 1024
MAX_HOST_CHARS = 255
MAX_TIMESTAMP_MS = (1 << 63) - 1  # fits SQLite's signed 64-bit INTEGER
MAX_RECORD_BYTES = 4 << 20

Votes = Mapping[str, tuple[int, bytes]]


class VectorLike(Protocol):
    """Anything with a namespace and features (a FeatureVector, a Vector, a record)."""

    @property
    def namespace(self) -> str: ...

    @property
    def features(self) -> Sequence[int]: ...


class Vector(NamedTuple):
    """A bare (namespace, features) pair, for callers that hold no FeatureVector."""

    namespace: str
    features: tuple[int, ...]


# --------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class FeatureEntry:
    """One publication of ``guid`` (with its whole vector) inside a feature object.

    ``features`` is sorted ascending and distinct. The entry is *removed* when a tombstone
    is at least as recent as the last publication (``removed_ms >= last_seen_ms``): a
    re-publication strictly later than the tombstone revives it."""

    guid: bytes
    namespace: str
    features: tuple[int, ...]
    first_seen_ms: int
    last_seen_ms: int
    expires_ms: int
    removed_ms: int | None = None

    @property
    def removed(self) -> bool:
        """True when a tombstone hides this entry."""
        return self.removed_ms is not None and self.removed_ms >= self.last_seen_ms

    def live(self, now_ms: int | None = None) -> bool:
        """True when the entry is not removed and, if ``now_ms`` is given, not expired."""
        if self.removed_ms is not None and self.removed_ms >= self.last_seen_ms:
            return False
        return now_ms is None or self.expires_ms >= now_ms


@dataclass(frozen=True, slots=True)
class FeatureObject:
    """The entries of one feature key, or a boilerplate marker once more than the cap of
    distinct GUIDs were seen.

    ``entries`` maps GUID -> entry (treat as read-only; empty when boilerplate).
    ``boilerplate_sketch`` holds the ``cap`` smallest GUIDs ever seen, sorted; it is
    non-empty exactly when the object is boilerplate. ``boilerplate_expires_ms`` is the
    latest expiry of any entry folded into the marker (0 when not boilerplate)."""

    entries: Mapping[bytes, FeatureEntry]
    boilerplate_sketch: tuple[bytes, ...] = ()
    boilerplate_expires_ms: int = 0

    @property
    def boilerplate(self) -> bool:
        """True when the feature was shared by more than the cap of distinct GUIDs."""
        return bool(self.boilerplate_sketch)

    def estimated_guids(self) -> int:
        """Return how many distinct GUIDs were seen: exact below the cap, a bottom-k
        estimate once boilerplate."""
        if not self.boilerplate_sketch:
            return len(self.entries)
        k = len(self.boilerplate_sketch)
        kth = int.from_bytes(self.boilerplate_sketch[-1], "big") + 1
        return max(k + 1, (k - 1) * (1 << (8 * KEY_BYTES)) // kth)

    def live_entries(self, now_ms: int | None = None) -> list[FeatureEntry]:
        """Return the entries that are neither removed nor (given ``now_ms``) expired."""
        return [e for e in self.entries.values() if e.live(now_ms)]

    def is_empty(self) -> bool:
        """True when the object holds neither entries nor a boilerplate marker."""
        return not self.entries and not self.boilerplate_sketch


EMPTY_OBJECT = FeatureObject({})


@dataclass(frozen=True, slots=True)
class ObjectRecord:
    """The record stored at a GUID: its vector and one LWW vote register per user.

    ``votes`` maps user_id -> (timestamp_ms, encoded_vote) (treat as read-only)."""

    guid: bytes
    namespace: str
    features: tuple[int, ...]
    votes: Votes
    expires_ms: int


@dataclass(frozen=True, slots=True)
class Pointer:
    """A path pointer: node ``node_id`` at ``host:port`` holds records for ``key``."""

    key: bytes
    node_id: bytes
    host: str
    port: int
    expires_ms: int


# --------------------------------------------------------------------------- builders


def _param_ts(name: str, value: int) -> int:
    if type(value) is not int or not 0 <= value <= MAX_TIMESTAMP_MS:
        raise ParameterError(f"{name} must be an integer in [0, 2**63), got {value!r}")
    return value


def _param_ttl(ttl_ms: int) -> int:
    if type(ttl_ms) is not int or ttl_ms <= 0:
        raise ParameterError(f"ttl_ms must be a positive integer, got {ttl_ms!r}")
    return ttl_ms


def _param_guid(guid: bytes) -> bytes:
    if type(guid) is not bytes or len(guid) != KEY_BYTES:
        raise ParameterError(f"a GUID must be {KEY_BYTES} bytes, got {guid!r}")
    return guid


def canonical_features(features: Iterable[int]) -> tuple[int, ...]:
    """Return ``features`` sorted and de-duplicated after checking each is a uint64 and
    that there are between 1 and MAX_FEATURES of them; raise ParameterError otherwise."""
    out = set()
    for f in features:
        if type(f) is not int or not 0 <= f <= FEATURE_MAX:
            raise ParameterError(f"a feature must be an integer in [0, 2**64), got {f!r}")
        out.add(f)
    if not 1 <= len(out) <= MAX_FEATURES:
        raise ParameterError(f"a vector needs 1 to {MAX_FEATURES} features, got {len(out)}")
    return tuple(sorted(out))


def _param_namespace(namespace: str) -> str:
    check_namespace(namespace)
    return namespace


def _expiry(now_ms: int, ttl_ms: int) -> int:
    return min(_param_ts("now_ms", now_ms) + _param_ttl(ttl_ms), MAX_TIMESTAMP_MS)


def published_entry(
    guid: bytes, namespace: str, features: Iterable[int], now_ms: int, ttl_ms: int
) -> FeatureEntry:
    """Return the entry a publication of ``guid`` at ``now_ms`` adds to each feature object."""
    return FeatureEntry(
        guid=_param_guid(guid),
        namespace=_param_namespace(namespace),
        features=canonical_features(features),
        first_seen_ms=now_ms,
        last_seen_ms=now_ms,
        expires_ms=_expiry(now_ms, ttl_ms),
    )


def tombstone_entry(
    guid: bytes, namespace: str, features: Iterable[int], now_ms: int, ttl_ms: int
) -> FeatureEntry:
    """Return the tombstone an unpublication of ``guid`` at ``now_ms`` merges into each
    feature object; it lives ``ttl_ms`` so that it outlasts the copies it removes."""
    return FeatureEntry(
        guid=_param_guid(guid),
        namespace=_param_namespace(namespace),
        features=canonical_features(features),
        first_seen_ms=now_ms,
        last_seen_ms=now_ms,
        expires_ms=_expiry(now_ms, ttl_ms),
        removed_ms=now_ms,
    )


def new_record(
    guid: bytes,
    namespace: str,
    features: Iterable[int],
    now_ms: int,
    ttl_ms: int,
    votes: Votes | None = None,
) -> ObjectRecord:
    """Return the object record a publication of ``guid`` at ``now_ms`` stores."""
    return ObjectRecord(
        guid=_param_guid(guid),
        namespace=_param_namespace(namespace),
        features=canonical_features(features),
        votes=bound_votes(votes) if votes else {},
        expires_ms=_expiry(now_ms, ttl_ms),
    )


# --------------------------------------------------------------------------- merges


def _max_opt(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return a if a >= b else b


def merge_entries(a: FeatureEntry, b: FeatureEntry) -> FeatureEntry:
    """Return the join of two entries of the same GUID: earliest first seen, latest last
    seen, expiry and tombstone; a conflicting (namespace, features) resolves to the
    greater pair, so the result never depends on order."""
    if a.guid != b.guid:
        raise ParameterError("cannot merge feature entries of different GUIDs")
    if a == b:
        return a
    ident_a = (a.namespace, a.features)
    ident_b = (b.namespace, b.features)
    namespace, features = ident_a if ident_a >= ident_b else ident_b
    return FeatureEntry(
        guid=a.guid,
        namespace=namespace,
        features=features,
        first_seen_ms=min(a.first_seen_ms, b.first_seen_ms),
        last_seen_ms=max(a.last_seen_ms, b.last_seen_ms),
        expires_ms=max(a.expires_ms, b.expires_ms),
        removed_ms=_max_opt(a.removed_ms, b.removed_ms),
    )


def _boilerplate(guids: Iterable[bytes], expires_ms: int, cap: int) -> FeatureObject:
    return FeatureObject({}, tuple(heapq.nsmallest(cap, set(guids))), expires_ms)


def check_cap(cap: int) -> int:
    """Return ``cap`` after checking it is in [1, MAX_CAP]; raise ParameterError."""
    if type(cap) is not int or not 1 <= cap <= MAX_CAP:
        raise ParameterError(f"cap must be an integer in [1, {MAX_CAP}], got {cap!r}")
    return cap


def merge_objects(a: FeatureObject, b: FeatureObject, cap: int = DEFAULT_CAP) -> FeatureObject:
    """Return the join of two feature objects of the same key: entries merged per GUID;
    past ``cap`` distinct GUIDs the result is a boilerplate marker (bottom-``cap`` sketch
    of every GUID seen, latest expiry). ``cap`` must be the same on every replica."""
    check_cap(cap)
    if not a.boilerplate_sketch and not b.boilerplate_sketch:
        if not b.entries:
            return a
        if not a.entries:
            return b
        entries = dict(a.entries)
        for guid, entry in b.entries.items():
            old = entries.get(guid)
            entries[guid] = entry if old is None else merge_entries(old, entry)
        if len(entries) <= cap:
            return FeatureObject(entries)
        return _boilerplate(entries, max(e.expires_ms for e in entries.values()), cap)
    guids: set[bytes] = set(a.boilerplate_sketch)
    guids.update(b.boilerplate_sketch, a.entries, b.entries)
    expires = max(
        a.boilerplate_expires_ms,
        b.boilerplate_expires_ms,
        *(e.expires_ms for e in a.entries.values()),
        *(e.expires_ms for e in b.entries.values()),
    )
    return _boilerplate(guids, expires, cap)


def add_entry(obj: FeatureObject, entry: FeatureEntry, cap: int = DEFAULT_CAP) -> FeatureObject:
    """Return ``obj`` with ``entry`` merged in (publication or tombstone)."""
    return merge_objects(obj, FeatureObject({entry.guid: entry}), cap)


def expire_object(obj: FeatureObject, now_ms: int) -> FeatureObject:
    """Return ``obj`` without the entries (and boilerplate marker) whose expiry is before
    ``now_ms``; the result may be empty (``is_empty()``)."""
    if obj.boilerplate_sketch:
        return obj if obj.boilerplate_expires_ms >= now_ms else EMPTY_OBJECT
    if all(e.expires_ms >= now_ms for e in obj.entries.values()):
        return obj
    return FeatureObject({g: e for g, e in obj.entries.items() if e.expires_ms >= now_ms})


def bound_votes(
    votes: Votes, max_votes: int = MAX_VOTES_PER_RECORD
) -> dict[str, tuple[int, bytes]]:
    """Return ``votes`` limited to the ``max_votes`` users whose latest votes are the most
    recent (by (timestamp_ms, user_id)). Bounding this way commutes with merging, so the
    bounded merge is still a semilattice."""
    if len(votes) <= max_votes:
        return dict(votes)
    return dict(heapq.nlargest(max_votes, votes.items(), key=lambda kv: (kv[1][0], kv[0])))


def merge_votes(
    a: Votes, b: Votes, max_votes: int = MAX_VOTES_PER_RECORD
) -> dict[str, tuple[int, bytes]]:
    """Return the per-user last-writer-wins join of two vote maps: for each user the
    greatest (timestamp_ms, encoded_vote); past ``max_votes`` users, the most recent."""
    out = dict(a)
    for user, vote in b.items():
        old = out.get(user)
        if old is None or vote > old:
            out[user] = vote
    return bound_votes(out, max_votes)


def merge_records(
    a: ObjectRecord, b: ObjectRecord, max_votes: int = MAX_VOTES_PER_RECORD
) -> ObjectRecord:
    """Return the join of two object records of the same GUID: votes merged per user
    (at most ``max_votes``, the most recent), latest expiry; a conflicting (namespace,
    features) resolves to the greater pair."""
    if a.guid != b.guid:
        raise ParameterError("cannot merge object records of different GUIDs")
    if a == b and len(a.votes) <= max_votes:
        return a
    ident_a = (a.namespace, a.features)
    ident_b = (b.namespace, b.features)
    namespace, features = ident_a if ident_a >= ident_b else ident_b
    return ObjectRecord(
        guid=a.guid,
        namespace=namespace,
        features=features,
        votes=merge_votes(a.votes, b.votes, max_votes),
        expires_ms=max(a.expires_ms, b.expires_ms),
    )


def merge_pointers(a: Pointer, b: Pointer) -> Pointer:
    """Return the join of two pointers for the same (key, node): the greatest
    (expires_ms, host, port), i.e. the freshest address."""
    if (a.key, a.node_id) != (b.key, b.node_id):
        raise ParameterError("cannot merge pointers of different (key, node) pairs")
    return a if (a.expires_ms, a.host, a.port) >= (b.expires_ms, b.host, b.port) else b


def entry_matches_key(entry: FeatureEntry, key: bytes) -> bool:
    """True when one of the entry's features hashes to ``key`` in its namespace, i.e. the
    entry belongs in the feature object stored under ``key``."""
    return any(feature_key(entry.namespace, f) == key for f in entry.features)


# --------------------------------------------------------------------------- validation


def _fail(what: str, message: str) -> RecordError:
    return RecordError(f"malformed {what}: {message}")


def _list(what: str, field: str, value: Any, max_len: int, exact: int | None = None) -> list:
    if not isinstance(value, list | tuple):
        raise _fail(what, f"{field} must be an array, got {type(value).__name__}")
    if exact is not None and len(value) != exact:
        raise _fail(what, f"{field} must have {exact} items, got {len(value)}")
    if len(value) > max_len:
        raise _fail(what, f"{field} has {len(value)} items, at most {max_len} allowed")
    return list(value)


def _bytes(what: str, field: str, value: Any, size: int) -> bytes:
    if type(value) is not bytes or len(value) != size:
        raise _fail(what, f"{field} must be {size} bytes of binary")
    return value


def _int(what: str, field: str, value: Any, lo: int, hi: int) -> int:
    if type(value) is not int or not lo <= value <= hi:
        raise _fail(what, f"{field} must be an integer in [{lo}, {hi}], got {value!r}")
    return value


def _ts(what: str, field: str, value: Any) -> int:
    return _int(what, field, value, 0, MAX_TIMESTAMP_MS)


def _namespace(what: str, value: Any) -> str:
    if type(value) is not str or not value or not value.isprintable():
        raise _fail(what, "namespace must be a non-empty printable string")
    if len(value.encode("utf-8", "surrogatepass")) > MAX_NAMESPACE_BYTES:
        raise _fail(what, f"namespace is longer than {MAX_NAMESPACE_BYTES} bytes")
    return value


def _features(what: str, value: Any) -> tuple[int, ...]:
    items = _list(what, "features", value, MAX_FEATURES)
    if not items:
        raise _fail(what, "features must not be empty")
    prev = -1
    for f in items:
        _int(what, "a feature", f, 0, FEATURE_MAX)
        if f <= prev:
            raise _fail(what, "features must be strictly increasing")
        prev = f
    return tuple(items)


def _guid(what: str, value: Any) -> bytes:
    return _bytes(what, "guid", value, KEY_BYTES)


# --------------------------------------------------------------------------- wire forms


def entry_to_wire(e: FeatureEntry) -> list:
    """Return the msgpack-ready form of an entry:
    [guid, namespace, features, first_seen_ms, last_seen_ms, expires_ms, removed_ms|nil]."""
    return [
        e.guid,
        e.namespace,
        list(e.features),
        e.first_seen_ms,
        e.last_seen_ms,
        e.expires_ms,
        e.removed_ms,
    ]


def entry_from_wire(obj: Any) -> FeatureEntry:
    """Return the entry in an unpacked msgpack value; raise RecordError if malformed."""
    what = "feature entry"
    items = _list(what, "entry", obj, 7, exact=7)
    guid = _guid(what, items[0])
    namespace = _namespace(what, items[1])
    features = _features(what, items[2])
    first = _ts(what, "first_seen_ms", items[3])
    last = _ts(what, "last_seen_ms", items[4])
    expires = _ts(what, "expires_ms", items[5])
    removed = None if items[6] is None else _ts(what, "removed_ms", items[6])
    if not first <= last <= expires:
        raise _fail(what, "timestamps must satisfy first_seen <= last_seen <= expires")
    return FeatureEntry(guid, namespace, features, first, last, expires, removed)


def object_to_wire(o: FeatureObject) -> list:
    """Return the msgpack-ready form of a feature object:
    [[entry, ...] sorted by GUID, [sketch GUID, ...], boilerplate_expires_ms]."""
    return [
        [entry_to_wire(o.entries[g]) for g in sorted(o.entries)],
        list(o.boilerplate_sketch),
        o.boilerplate_expires_ms,
    ]


def object_from_wire(obj: Any, cap: int = DEFAULT_CAP) -> FeatureObject:
    """Return the feature object in an unpacked msgpack value (at most ``cap`` entries or
    sketch GUIDs); raise RecordError if malformed."""
    what = "feature object"
    items = _list(what, "object", obj, 3, exact=3)
    raw_entries = _list(what, "entries", items[0], cap)
    sketch = tuple(_guid(what, g) for g in _list(what, "sketch", items[1], cap))
    expires = _ts(what, "boilerplate_expires_ms", items[2])
    entries: dict[bytes, FeatureEntry] = {}
    for raw in raw_entries:
        entry = entry_from_wire(raw)
        if entry.guid in entries:
            raise _fail(what, "duplicate GUID among entries")
        entries[entry.guid] = entry
    if sketch:
        if entries:
            raise _fail(what, "a boilerplate object must not hold entries")
        if any(x >= y for x, y in pairwise(sketch)):
            raise _fail(what, "sketch GUIDs must be strictly increasing")
    elif expires != 0:
        raise _fail(what, "boilerplate_expires_ms must be 0 when not boilerplate")
    return FeatureObject(entries, sketch, expires)


def record_to_wire(r: ObjectRecord) -> list:
    """Return the msgpack-ready form of an object record:
    [guid, namespace, features, {user_id: [timestamp_ms, vote]}, expires_ms]."""
    return [
        r.guid,
        r.namespace,
        list(r.features),
        {u: [ts, v] for u, (ts, v) in sorted(r.votes.items())},
        r.expires_ms,
    ]


def record_from_wire(obj: Any) -> ObjectRecord:
    """Return the object record in an unpacked msgpack value; raise RecordError if
    malformed."""
    what = "object record"
    items = _list(what, "record", obj, 5, exact=5)
    guid = _guid(what, items[0])
    namespace = _namespace(what, items[1])
    features = _features(what, items[2])
    raw_votes = items[3]
    if not isinstance(raw_votes, dict):
        raise _fail(what, "votes must be a map")
    if len(raw_votes) > MAX_VOTES_PER_RECORD:
        raise _fail(what, f"more than {MAX_VOTES_PER_RECORD} votes")
    votes: dict[str, tuple[int, bytes]] = {}
    for user, value in raw_votes.items():
        if type(user) is not str or not 1 <= len(user) <= MAX_USER_ID_CHARS:
            raise _fail(what, f"a user_id must be a string of 1 to {MAX_USER_ID_CHARS} chars")
        pair = _list(what, "a vote", value, 2, exact=2)
        ts = _ts(what, "a vote timestamp", pair[0])
        vote = pair[1]
        if type(vote) is not bytes or not 1 <= len(vote) <= MAX_VOTE_BYTES:
            raise _fail(what, f"an encoded vote must be 1 to {MAX_VOTE_BYTES} bytes")
        votes[user] = (ts, vote)
    expires = _ts(what, "expires_ms", items[4])
    return ObjectRecord(guid, namespace, features, votes, expires)


def pointer_to_wire(p: Pointer) -> list:
    """Return the msgpack-ready form of a pointer: [key, node_id, host, port, expires_ms]."""
    return [p.key, p.node_id, p.host, p.port, p.expires_ms]


def pointer_from_wire(obj: Any) -> Pointer:
    """Return the pointer in an unpacked msgpack value; raise RecordError if malformed."""
    what = "pointer"
    items = _list(what, "pointer", obj, 5, exact=5)
    key = _bytes(what, "key", items[0], KEY_BYTES)
    node_id = _bytes(what, "node_id", items[1], KEY_BYTES)
    host = items[2]
    if (
        type(host) is not str
        or not 1 <= len(host) <= MAX_HOST_CHARS
        or not host.isascii()
        or not host.isprintable()
        or " " in host
    ):
        raise _fail(what, f"host must be 1 to {MAX_HOST_CHARS} printable ASCII chars")
    port = _int(what, "port", items[3], 1, 65535)
    expires = _ts(what, "expires_ms", items[4])
    return Pointer(key, node_id, host, port, expires)


# --------------------------------------------------------------------------- bytes


def _unpack(what: str, data: Any) -> Any:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise _fail(what, f"expected bytes, got {type(data).__name__}")
    if len(data) > MAX_RECORD_BYTES:
        raise _fail(what, f"{len(data)} bytes, at most {MAX_RECORD_BYTES} allowed")
    try:
        return msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=True,
            use_list=True,
            max_str_len=max(MAX_HOST_CHARS, MAX_NAMESPACE_BYTES, MAX_USER_ID_CHARS) * 4,
            max_bin_len=MAX_VOTE_BYTES,
            max_array_len=max(MAX_CAP, MAX_FEATURES),
            max_map_len=MAX_VOTES_PER_RECORD,
            max_ext_len=0,
        )
    except Exception as exc:  # msgpack raises many types for bad input
        raise _fail(what, f"not valid msgpack ({type(exc).__name__}: {exc})") from None


def _pack(obj: Any) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)


def encode_entry(e: FeatureEntry) -> bytes:
    """Return the msgpack bytes of a feature entry."""
    return _pack(entry_to_wire(e))


def decode_entry(data: bytes) -> FeatureEntry:
    """Return the feature entry encoded in ``data``; raise RecordError if malformed."""
    return entry_from_wire(_unpack("feature entry", data))


def encode_object(o: FeatureObject) -> bytes:
    """Return the msgpack bytes of a feature object."""
    return _pack(object_to_wire(o))


def decode_object(data: bytes, cap: int = DEFAULT_CAP) -> FeatureObject:
    """Return the feature object encoded in ``data``; raise RecordError if malformed."""
    return object_from_wire(_unpack("feature object", data), check_cap(cap))


def encode_record(r: ObjectRecord) -> bytes:
    """Return the msgpack bytes of an object record."""
    return _pack(record_to_wire(r))


def decode_record(data: bytes) -> ObjectRecord:
    """Return the object record encoded in ``data``; raise RecordError if malformed."""
    return record_from_wire(_unpack("object record", data))


def encode_pointer(p: Pointer) -> bytes:
    """Return the msgpack bytes of a pointer."""
    return _pack(pointer_to_wire(p))


def decode_pointer(data: bytes) -> Pointer:
    """Return the pointer encoded in ``data``; raise RecordError if malformed."""
    return pointer_from_wire(_unpack("pointer", data))


def pack_features(features: Sequence[int]) -> bytes:
    """Return features as concatenated 8-byte big-endian values (the store's column form,
    whose byte order equals the tuple order)."""
    return b"".join(f.to_bytes(8, "big") for f in features)


def unpack_features(data: bytes) -> tuple[int, ...]:
    """Return the features packed by ``pack_features``."""
    return tuple(int.from_bytes(data[i : i + 8], "big") for i in range(0, len(data), 8))

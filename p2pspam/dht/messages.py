"""Argument validators and reply parsers of the approximate-DOLR RPCs (pure).

Every RPC's first argument is the caller's 20-byte node id. The ADOLR RPCs are:

- ``store_batch(nodeid, objects, records)``: ``objects`` is a list of ``[key, feature
  object]`` (``p2pspam.adolr.records.object_to_wire``), each entry of which must contain a
  feature whose key is ``key``; ``records`` a list of object records. At most 16 of each.
  Reply: the number of objects and records merged.
- ``store_pointer(nodeid, keys)``: the caller holds the feature objects at ``keys`` (at
  most 64); the receiver keeps a path pointer to the caller. Reply: ``True``.
- ``find_approx(nodeid, qid, key, namespace, features, thres, forward, records)``:
  in-network evaluation; ``forward``: the receiver may follow a path pointer or fetch a
  record one hop away; ``records``: include the matches' records (a querier asks one
  node per lookup round for them, so that they do not travel once per holder). Reply
  ``{"closer": [contacts], "holds_key": bool, "matches": [match],
  "dup": bool}`` where a match is ``[guid, overlap, matched, discounted, features,
  record|nil]``; ``"discounted"`` (optional): the query features this node discounted as
  boilerplate (the querier discounts the feature it looked up at this node in every
  match, whichever node reported the match).
- ``find_object(nodeid, guid)``: reply ``{"record": record}`` or ``{"closer": [contacts]}``.
- ``get_feature(nodeid, key)``: the naive baseline's fetch; reply ``{"object": feature
  object}`` or ``{"closer": [contacts]}``.
- ``revocations(nodeid, signed_list)``: gossip of a signed revocation list; reply
  ``True`` when adopted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgpack

from p2pspam.adolr.errors import RecordError
from p2pspam.adolr.keys import feature_key
from p2pspam.adolr.records import (
    FeatureObject,
    ObjectRecord,
    object_from_wire,
    record_from_wire,
    record_to_wire,
)
from p2pspam.dht import wire

MAX_BATCH = 16
MAX_POINTER_KEYS = 64
MAX_MATCHES = 32
MAX_QID = 16
MAX_REVOCATIONS = 32_768
RECORD_WIRE_BUDGET = 24_000  # bytes of one record inside a datagram


def _arity(args: list[Any], n: int, rpc: str) -> None:
    if len(args) != n:
        raise wire.bad(f"{rpc} takes {n} arguments")


def _object(key: bytes, raw: Any) -> FeatureObject:
    try:
        obj = object_from_wire(raw)
    except RecordError as exc:
        raise wire.bad(str(exc)) from None
    for entry in obj.entries.values():
        if not any(feature_key(entry.namespace, f) == key for f in entry.features):
            raise wire.bad("a feature entry does not belong to the key it was sent for")
    return obj


def record(raw: Any) -> ObjectRecord:
    """Validate an object record in wire form."""
    try:
        return record_from_wire(raw)
    except RecordError as exc:
        raise wire.bad(str(exc)) from None


def store_batch_args(
    args: list[Any],
) -> tuple[bytes, list[tuple[bytes, FeatureObject]], list[ObjectRecord]]:
    """Validate ``store_batch`` arguments."""
    _arity(args, 3, "store_batch")
    nodeid = wire.node_id(args[0])
    raw_objects, raw_records = args[1], args[2]
    if not isinstance(raw_objects, list) or len(raw_objects) > MAX_BATCH:
        raise wire.bad(f"objects must be a list of at most {MAX_BATCH}")
    if not isinstance(raw_records, list) or len(raw_records) > MAX_BATCH:
        raise wire.bad(f"records must be a list of at most {MAX_BATCH}")
    objects = []
    for item in raw_objects:
        if not isinstance(item, list) or len(item) != 2:
            raise wire.bad("an object must be [key, feature object]")
        key = wire.node_id(item[0])
        objects.append((key, _object(key, item[1])))
    return nodeid, objects, [record(r) for r in raw_records]


def store_pointer_args(args: list[Any]) -> tuple[bytes, list[bytes]]:
    """Validate ``store_pointer`` arguments."""
    _arity(args, 2, "store_pointer")
    keys = args[1]
    if not isinstance(keys, list) or not 0 < len(keys) <= MAX_POINTER_KEYS:
        raise wire.bad(f"keys must be a list of 1..{MAX_POINTER_KEYS} keys")
    return wire.node_id(args[0]), [wire.node_id(k) for k in keys]


@dataclass(frozen=True, slots=True)
class ApproxQuery:
    """A validated ``find_approx`` request."""

    qid: bytes
    key: bytes
    namespace: str
    features: tuple[int, ...]
    thres: int
    forward: bool
    records: bool = True


def find_approx_args(args: list[Any]) -> tuple[bytes, ApproxQuery]:
    """Validate ``find_approx`` arguments."""
    _arity(args, 8, "find_approx")
    nodeid = wire.node_id(args[0])
    qid = wire.blob(args[1], MAX_QID, "qid")
    key = wire.node_id(args[2])
    namespace = wire.namespace(args[3])
    features = wire.features(args[4])
    thres = wire.thres(args[5], len(features))
    if not isinstance(args[6], bool) or not isinstance(args[7], bool):
        raise wire.bad("forward and records must be booleans")
    return nodeid, ApproxQuery(qid, key, namespace, features, thres, args[6], args[7])


def two_ids(args: list[Any]) -> tuple[bytes, bytes]:
    """Validate ``[nodeid, key]`` (find_object, get_feature)."""
    _arity(args, 2, "this rpc")
    return wire.node_id(args[0]), wire.node_id(args[1])


def revocations_args(args: list[Any]) -> tuple[bytes, bytes]:
    """Validate ``revocations`` arguments."""
    _arity(args, 2, "revocations")
    return wire.node_id(args[0]), wire.blob(args[1], MAX_REVOCATIONS, "revocation list")


# -- replies ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RoutedMatch:
    """One GUID matching a query, with its object record when known (a match of a
    ``find_approx`` reply, and what ``AdolrNode.route_approx`` returns)."""

    guid: bytes
    overlap: int
    matched: tuple[int, ...]
    discounted: tuple[int, ...]
    features: tuple[int, ...]
    record: ObjectRecord | None


@dataclass(frozen=True, slots=True)
class ApproxReply:
    """A parsed ``find_approx`` reply."""

    closer: list[tuple[bytes, str, int]]
    holds_key: bool
    matches: list[RoutedMatch]
    dup: bool
    discounted: tuple[int, ...] = ()


def _int_list(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, list) or len(value) > wire.MAX_FEATURES:
        raise wire.bad(f"{what} must be a list of features")
    return tuple(wire.integer(f, 0, (1 << 64) - 1, what) for f in value)


def approx_reply(value: Any) -> ApproxReply:
    """Parse and validate a ``find_approx`` reply (raise WireError "bad_args")."""
    reply = wire.mapping(value, "find_approx reply")
    closer = wire.contacts(reply.get("closer", []))
    holds = reply.get("holds_key", False)
    dup = reply.get("dup", False)
    if not isinstance(holds, bool) or not isinstance(dup, bool):
        raise wire.bad("holds_key and dup must be booleans")
    raw_matches = reply.get("matches", [])
    if not isinstance(raw_matches, list) or len(raw_matches) > MAX_MATCHES:
        raise wire.bad(f"matches must be a list of at most {MAX_MATCHES}")
    matches = []
    for raw in raw_matches:
        if not isinstance(raw, list) or len(raw) != 6:
            raise wire.bad("a match must have 6 fields")
        guid = wire.node_id(raw[0])
        overlap = wire.integer(raw[1], 0, wire.MAX_FEATURES, "overlap")
        rec = None if raw[5] is None else record(raw[5])
        if rec is not None and rec.guid != guid:
            raise wire.bad("a match's record is for another GUID")
        matches.append(
            RoutedMatch(
                guid,
                overlap,
                _int_list(raw[2], "matched"),
                _int_list(raw[3], "discounted"),
                _int_list(raw[4], "features"),
                rec,
            )
        )
    discounted = _int_list(reply.get("discounted", []), "discounted")
    return ApproxReply(closer, holds, matches, dup, discounted)


def object_reply(value: Any) -> tuple[list[tuple[bytes, str, int]], ObjectRecord | None]:
    """Parse a ``find_object`` reply: ``(closer, record or None)``."""
    reply = wire.mapping(value, "find_object reply")
    if "record" in reply:
        return [], record(reply["record"])
    return wire.contacts(reply.get("closer", [])), None


def feature_reply(
    key: bytes, value: Any
) -> tuple[list[tuple[bytes, str, int]], FeatureObject | None]:
    """Parse a ``get_feature`` reply: ``(closer, feature object or None)``."""
    reply = wire.mapping(value, "get_feature reply")
    if "object" in reply:
        return [], _object(key, reply["object"])
    return wire.contacts(reply.get("closer", [])), None


def fit_record(record: ObjectRecord, budget: int = RECORD_WIRE_BUDGET) -> list[Any]:
    """Return the wire form of ``record``, keeping its most recent votes only when the
    whole record would not fit in ``budget`` bytes of a datagram."""
    raw = record_to_wire(record)
    if len(msgpack.packb(raw, use_bin_type=True)) <= budget:
        return raw
    votes = sorted(record.votes.items(), key=lambda kv: kv[1], reverse=True)
    kept: dict[str, tuple[int, bytes]] = {}
    size = 200 + 30 * len(record.features)
    for user, (ts, vote) in votes:
        size += len(vote) + len(user) + 16
        if size > budget:
            break
        kept[user] = (ts, vote)
    return record_to_wire(
        ObjectRecord(record.guid, record.namespace, record.features, kept, record.expires_ms)
    )

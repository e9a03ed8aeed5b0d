"""The approximate DOLR, pure: DHT keys, records and merge rules, query evaluation, and an
in-memory single-node index. No sockets, clocks or event loops: time is passed in."""

from p2pspam.adolr.errors import RecordError
from p2pspam.adolr.keys import feature_key, object_key
from p2pspam.adolr.query import Match, evaluate
from p2pspam.adolr.records import (
    DEFAULT_CAP,
    FeatureEntry,
    FeatureObject,
    ObjectRecord,
    Pointer,
    merge_entries,
    merge_objects,
    merge_pointers,
    merge_records,
)

__all__ = [
    "DEFAULT_CAP",
    "FeatureEntry",
    "FeatureObject",
    "Match",
    "ObjectRecord",
    "Pointer",
    "RecordError",
    "evaluate",
    "feature_key",
    "merge_entries",
    "merge_objects",
    "merge_pointers",
    "merge_records",
    "object_key",
]

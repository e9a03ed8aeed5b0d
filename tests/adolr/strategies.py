"""Hypothesis strategies for approximate-DOLR records: small pools of GUIDs, features and
namespaces so that generated records collide, overlap and conflict often."""

from __future__ import annotations

from hypothesis import strategies as st

from p2pspam.adolr.records import (
    FeatureEntry,
    FeatureObject,
    ObjectRecord,
    Pointer,
    Vector,
)

GUIDS = [bytes([i]) * 20 for i in range(1, 8)]
NAMESPACES = ["ata/1/L=50", "ata/1/L=40"]
FEATURES = [*range(12), 2**64 - 1, 2**63]
HOSTS = ["127.0.0.1", "10.0.0.2", "peer.example"]

guids = st.sampled_from(GUIDS)
namespaces = st.sampled_from(NAMESPACES)
times = st.integers(min_value=0, max_value=60)
ttls = st.integers(min_value=1, max_value=60)
feature_tuples = st.lists(st.sampled_from(FEATURES), min_size=1, max_size=5, unique=True).map(
    lambda fs: tuple(sorted(fs))
)
vectors = st.builds(Vector, namespaces, feature_tuples)
vote_values = st.tuples(times, st.binary(min_size=1, max_size=6))
vote_maps = st.dictionaries(st.sampled_from(["ann", "bob", "cy"]), vote_values, max_size=3)


@st.composite
def entries(draw: st.DrawFn, guid: bytes | None = None) -> FeatureEntry:
    """A valid feature entry (first <= last <= expires), sometimes with a tombstone."""
    first = draw(times)
    last = first + draw(st.integers(0, 20))
    expires = last + draw(st.integers(0, 40))
    removed = draw(st.none() | times)
    return FeatureEntry(
        guid if guid is not None else draw(guids),
        draw(namespaces),
        draw(feature_tuples),
        first,
        last,
        expires,
        removed,
    )


@st.composite
def feature_objects(draw: st.DrawFn, cap: int = 3) -> FeatureObject:
    """A valid feature object for ``cap``: entries, or a boilerplate sketch."""
    if draw(st.booleans()):
        sketch = sorted(draw(st.lists(guids, min_size=cap, max_size=cap, unique=True)))
        return FeatureObject({}, tuple(sketch), draw(times))
    es = draw(st.lists(entries(), max_size=cap, unique_by=lambda e: e.guid))
    return FeatureObject({e.guid: e for e in es})


@st.composite
def records(draw: st.DrawFn, guid: bytes | None = None) -> ObjectRecord:
    """A valid object record."""
    return ObjectRecord(
        guid if guid is not None else draw(guids),
        draw(namespaces),
        draw(feature_tuples),
        draw(vote_maps),
        draw(times),
    )


@st.composite
def pointers(draw: st.DrawFn) -> Pointer:
    """A valid path pointer."""
    return Pointer(
        draw(guids),
        draw(guids),
        draw(st.sampled_from(HOSTS)),
        draw(st.integers(1, 65535)),
        draw(times),
    )

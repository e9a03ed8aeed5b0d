"""Records: liveness, tombstones, the boilerplate cap, and the semilattice merge laws."""

from functools import reduce

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pspam.adolr.keys import feature_key
from p2pspam.adolr.records import (
    FeatureObject,
    ObjectRecord,
    add_entry,
    entry_matches_key,
    expire_object,
    merge_entries,
    merge_objects,
    merge_pointers,
    merge_records,
    published_entry,
    tombstone_entry,
)
from p2pspam.errors import ParameterError

from .strategies import GUIDS, entries, feature_objects, guids, pointers, records

NS = "ata/1/L=50"
G = GUIDS[0]
CAP = 3


def _obj(*es):
    return reduce(lambda o, e: add_entry(o, e, CAP), es, FeatureObject({}))


# ------------------------------------------------------------------ entries


def test_a_published_entry_is_live_until_it_expires():
    e = published_entry(G, NS, [3, 1, 2], now_ms=100, ttl_ms=50)
    assert e.features == (1, 2, 3)
    assert e.live(now_ms=150)
    assert not e.live(now_ms=151)


def test_a_tombstone_hides_an_earlier_publication():
    merged = merge_entries(
        published_entry(G, NS, [1], 100, 50), tombstone_entry(G, NS, [1], 120, 50)
    )
    assert merged.removed
    assert not merged.live()


def test_a_republication_after_the_tombstone_revives_the_entry():
    merged = merge_entries(
        tombstone_entry(G, NS, [1], 120, 50), published_entry(G, NS, [1], 121, 50)
    )
    assert merged.live()


def test_the_tombstone_wins_a_tie_with_a_publication():
    merged = merge_entries(
        published_entry(G, NS, [1], 120, 50), tombstone_entry(G, NS, [1], 120, 50)
    )
    assert merged.removed


def test_a_tombstone_outlives_the_publication_it_removes():
    merged = merge_entries(
        published_entry(G, NS, [1], 100, 50), tombstone_entry(G, NS, [1], 120, 50)
    )
    assert merged.expires_ms == 170


def test_merging_entries_of_different_guids_is_refused():
    with pytest.raises(ParameterError):
        merge_entries(published_entry(G, NS, [1], 1, 1), published_entry(GUIDS[1], NS, [1], 1, 1))


@pytest.mark.parametrize(
    ("features", "ttl"), [([], 5), ([-1], 5), ([1.5], 5), (list(range(65)), 5), ([1], 0)]
)
def test_a_publication_with_bad_parameters_is_refused(features, ttl):
    with pytest.raises(ParameterError):
        published_entry(G, NS, features, 1, ttl)


@given(st.data())
def test_merge_entries_is_commutative_associative_and_idempotent(data):
    guid = data.draw(guids)
    a, b, c = (data.draw(entries(guid)) for _ in range(3))
    assert merge_entries(a, b) == merge_entries(b, a)
    assert merge_entries(merge_entries(a, b), c) == merge_entries(a, merge_entries(b, c))
    assert merge_entries(a, a) == a


def test_a_conflicting_vector_for_one_guid_resolves_to_the_greater_one():
    a = published_entry(G, NS, [1, 2], 1, 10)
    b = published_entry(G, NS, [1, 3], 1, 10)
    assert merge_entries(a, b).features == (1, 3)
    assert merge_entries(b, a).features == (1, 3)


def test_an_entry_matches_the_keys_of_its_features_only():
    e = published_entry(G, NS, [1, 2], 1, 10)
    assert entry_matches_key(e, feature_key(NS, 2))
    assert not entry_matches_key(e, feature_key(NS, 3))


# ------------------------------------------------------------------ feature objects


def test_an_object_keeps_up_to_cap_guids():
    obj = _obj(*(published_entry(g, NS, [1], 1, 10) for g in GUIDS[:CAP]))
    assert not obj.boilerplate
    assert set(obj.entries) == set(GUIDS[:CAP])


def test_past_the_cap_an_object_becomes_a_bounded_boilerplate_marker():
    obj = _obj(*(published_entry(g, NS, [1], i, 10) for i, g in enumerate(GUIDS)))
    assert obj.boilerplate
    assert obj.entries == {}
    assert obj.boilerplate_sketch == tuple(sorted(GUIDS)[:CAP])
    assert obj.boilerplate_expires_ms == len(GUIDS) - 1 + 10


def test_tombstoned_guids_count_toward_the_cap():
    es = [tombstone_entry(g, NS, [1], 1, 10) for g in GUIDS[: CAP + 1]]
    assert _obj(*es).boilerplate


def test_a_boilerplate_object_estimates_how_many_guids_it_saw():
    import hashlib

    many = [hashlib.sha256(str(i).encode()).digest()[:20] for i in range(2000)]
    obj = reduce(
        lambda o, g: add_entry(o, published_entry(g, NS, [1], 1, 10), 64), many, FeatureObject({})
    )
    assert len(obj.boilerplate_sketch) == 64
    assert 1000 < obj.estimated_guids() < 4000


@given(feature_objects(), feature_objects(), feature_objects())
def test_merge_objects_is_commutative_associative_and_idempotent(a, b, c):
    ab = merge_objects(a, b, CAP)
    assert ab == merge_objects(b, a, CAP)
    assert merge_objects(ab, c, CAP) == merge_objects(a, merge_objects(b, c, CAP), CAP)
    assert merge_objects(a, a, CAP) == a


@given(st.lists(entries(), max_size=12), st.randoms())
def test_adding_entries_in_any_order_gives_the_same_object(es, rnd):
    shuffled = list(es)
    rnd.shuffle(shuffled)
    assert _obj(*es) == _obj(*shuffled, *shuffled[:3])


def test_expiry_drops_entries_that_expired_before_now():
    obj = _obj(published_entry(G, NS, [1], 0, 10), published_entry(GUIDS[1], NS, [1], 0, 20))
    assert set(expire_object(obj, 15).entries) == {GUIDS[1]}
    assert expire_object(obj, 21).is_empty()


def test_expiry_drops_a_boilerplate_marker_once_every_folded_entry_expired():
    obj = _obj(*(published_entry(g, NS, [1], 0, 10) for g in GUIDS))
    assert expire_object(obj, 10).boilerplate
    assert expire_object(obj, 11).is_empty()


# ------------------------------------------------------------------ object records


def test_votes_keep_the_latest_timestamp_per_user():
    old = ObjectRecord(G, NS, (1,), {"ann": (5, b"spam"), "bob": (9, b"ham")}, 10)
    new = ObjectRecord(G, NS, (1,), {"ann": (7, b"ham")}, 20)
    merged = merge_records(old, new)
    assert merged.votes == {"ann": (7, b"ham"), "bob": (9, b"ham")}
    assert merged.expires_ms == 20


def test_equal_vote_timestamps_resolve_by_the_vote_bytes():
    a = ObjectRecord(G, NS, (1,), {"ann": (5, b"a")}, 1)
    b = ObjectRecord(G, NS, (1,), {"ann": (5, b"b")}, 1)
    assert merge_records(a, b).votes == merge_records(b, a).votes == {"ann": (5, b"b")}


@given(st.data())
def test_merge_records_is_commutative_associative_and_idempotent(data):
    guid = data.draw(guids)
    a, b, c = (data.draw(records(guid)) for _ in range(3))
    assert merge_records(a, b) == merge_records(b, a)
    assert merge_records(merge_records(a, b), c) == merge_records(a, merge_records(b, c))
    assert merge_records(a, a) == a


@given(pointers(), st.data())
def test_merge_pointers_is_commutative_associative_and_idempotent(a, data):
    from dataclasses import replace

    b, c = (replace(data.draw(pointers()), key=a.key, node_id=a.node_id) for _ in range(2))
    assert merge_pointers(a, b) == merge_pointers(b, a)
    assert merge_pointers(merge_pointers(a, b), c) == merge_pointers(a, merge_pointers(b, c))
    assert merge_pointers(a, a) == a


def test_past_max_votes_a_record_keeps_the_most_recent_voters():
    a = ObjectRecord(G, NS, (1,), {"ann": (5, b"v"), "bob": (9, b"v")}, 1)
    b = ObjectRecord(G, NS, (1,), {"cy": (7, b"v"), "ann": (8, b"v")}, 1)
    assert merge_records(a, b, max_votes=2).votes == {"bob": (9, b"v"), "ann": (8, b"v")}


@given(st.data())
def test_bounded_vote_merges_are_commutative_associative_and_idempotent(data):
    guid = data.draw(guids)
    a, b, c = (data.draw(records(guid)) for _ in range(3))
    m = 2
    assert merge_records(a, b, m) == merge_records(b, a, m)
    assert merge_records(merge_records(a, b, m), c, m) == merge_records(
        a, merge_records(b, c, m), m
    )
    ab = merge_records(a, b, m)
    assert merge_records(ab, ab, m) == ab
    assert len(ab.votes) <= m

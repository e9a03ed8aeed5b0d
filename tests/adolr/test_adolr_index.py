"""ApproxIndex: the in-memory single-node approximate DOLR."""

from functools import reduce

from hypothesis import given
from hypothesis import strategies as st

from p2pspam.adolr.index import ApproxIndex
from p2pspam.adolr.keys import feature_key
from p2pspam.adolr.records import (
    FeatureObject,
    Pointer,
    Vector,
    expire_object,
    merge_objects,
)

from .strategies import GUIDS, entries, feature_objects

NS = "ata/1/L=50"
A, B = GUIDS[:2]
V = Vector(NS, (1, 2, 3, 4))


def test_a_published_vector_is_found_by_an_overlapping_query():
    ix = ApproxIndex()
    assert ix.publish_approx(V, A, now_ms=0, ttl_ms=100) == 4
    assert [(m.guid, m.overlap) for m in ix.route_approx([1, 2, 3, 9], NS, 3)] == [(A, 3)]


def test_publishing_stores_the_object_record_with_its_votes():
    ix = ApproxIndex()
    ix.publish_approx(V, A, 0, 100, votes={"ann": (5, b"spam")})
    record = ix.get_object(A)
    assert record is not None
    assert record.features == (1, 2, 3, 4)
    assert record.votes == {"ann": (5, b"spam")}
    assert record.expires_ms == 100


def test_an_unpublished_vector_is_no_longer_found():
    ix = ApproxIndex()
    ix.publish_approx(V, A, 0, 100)
    assert ix.unpublish_approx(V, A, 10, 100) == 4
    assert ix.route_approx([1, 2, 3], NS, 1) == []


def test_a_republication_after_unpublication_is_found_again():
    ix = ApproxIndex()
    ix.publish_approx(V, A, 0, 100)
    ix.unpublish_approx(V, A, 10, 100)
    ix.publish_approx(V, A, 11, 100)
    assert [m.guid for m in ix.route_approx([1, 2, 3], NS, 1)] == [A]


def test_put_votes_keeps_the_latest_vote_per_user():
    ix = ApproxIndex()
    ix.publish_approx(V, A, 0, 100, votes={"ann": (5, b"spam")})
    assert ix.put_votes(A, {"ann": (7, b"ham"), "bob": (1, b"spam")})
    assert ix.put_votes(A, {"ann": (6, b"spam")})
    assert ix.get_object(A).votes == {"ann": (7, b"ham"), "bob": (1, b"spam")}


def test_put_votes_for_an_unknown_guid_stores_nothing():
    ix = ApproxIndex()
    assert not ix.put_votes(A, {"ann": (7, b"ham")})
    assert ix.get_object(A) is None


def test_expire_drops_expired_entries_records_and_pointers():
    ix = ApproxIndex()
    ix.publish_approx(V, A, 0, 10)
    ix.publish_approx(Vector(NS, (1, 9)), B, 0, 50)
    ix.put_pointer(Pointer(A, B, "127.0.0.1", 8468, 10))
    assert ix.expire(20) == 4 + 1 + 1
    assert [m.guid for m in ix.route_approx([1, 2], NS, 1)] == [B]
    assert ix.get_object(A) is None
    assert ix.get_pointers(A) == []


def test_pointers_keep_the_freshest_address_per_node():
    ix = ApproxIndex()
    ix.put_pointer(Pointer(A, B, "10.0.0.1", 1, 50))
    ix.put_pointer(Pointer(A, B, "10.0.0.2", 2, 40))
    assert ix.get_pointers(A, now_ms=45) == [Pointer(A, B, "10.0.0.1", 1, 50)]
    assert ix.get_pointers(A, now_ms=51) == []


def test_a_feature_shared_by_more_than_cap_guids_becomes_boilerplate():
    ix = ApproxIndex(cap=3)
    for i, g in enumerate(GUIDS):
        ix.publish_approx(Vector(NS, (1, 100 + i)), g, 0, 100)
    assert ix.get_feature_object(feature_key(NS, 1)).boilerplate
    assert ix.counts()["boilerplate"] == 1
    [m] = ix.route_approx([1, 100], NS, 1)
    assert (m.guid, m.discounted_features) == (GUIDS[0], (1,))


def test_feature_keys_are_listed_in_bounded_ascending_pages():
    ix = ApproxIndex()
    ix.publish_approx(Vector(NS, tuple(range(10))), A, 0, 100)
    pages, after = [], b""
    while page := ix.iter_feature_keys(after, limit=3):
        assert len(page) <= 3
        pages.extend(page)
        after = page[-1]
    assert pages == sorted(feature_key(NS, f) for f in range(10))


@given(st.lists(entries(), max_size=15))
def test_adding_entries_equals_folding_the_pure_merge(es):
    ix = ApproxIndex(cap=3)
    key = b"k" * 20
    for e in es:
        ix.add_entry(key, e)
    expected = reduce(
        lambda o, e: merge_objects(o, FeatureObject({e.guid: e}), 3), es, FeatureObject({})
    )
    got = ix.get_feature_object(key) or FeatureObject({})
    assert got == expected


@given(st.lists(feature_objects(cap=3), max_size=6))
def test_merging_whole_objects_equals_the_pure_merge(objs):
    ix = ApproxIndex(cap=3)
    key = b"k" * 20
    for o in objs:
        ix.merge_feature_object(key, o)
    expected = reduce(lambda a, b: merge_objects(a, b, 3), objs, FeatureObject({}))
    assert (ix.get_feature_object(key) or FeatureObject({})) == expected


@given(st.lists(entries(), max_size=10), st.integers(0, 100))
def test_expire_equals_the_pure_expiry(es, now):
    ix = ApproxIndex(cap=3)
    key = b"k" * 20
    for e in es:
        ix.add_entry(key, e)
    before = ix.get_feature_object(key) or FeatureObject({})
    ix.expire(now)
    assert (ix.get_feature_object(key) or FeatureObject({})) == expire_object(before, now)

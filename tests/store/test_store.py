"""Store: the SQLite approximate DOLR behaves like ApproxIndex and the pure merges, and
keeps what it acknowledged across reopening."""

import sqlite3
from functools import reduce

import pytest
from adolr.strategies import GUIDS, entries, feature_objects, pointers, records
from hypothesis import given
from hypothesis import strategies as st

from p2pspam.adolr.index import ApproxIndex
from p2pspam.adolr.keys import feature_key
from p2pspam.adolr.records import (
    FeatureObject,
    Pointer,
    Vector,
    merge_objects,
    merge_pointers,
    merge_records,
)
from p2pspam.errors import ParameterError
from p2pspam.peer.store import Store

NS = "ata/1/L=50"
A, B = GUIDS[:2]
V = Vector(NS, (1, 2, 3, 4))
KEY = b"k" * 20


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "peer.sqlite3", cap=3) as s:
        yield s


def test_the_database_runs_in_wal_mode(tmp_path):
    path = tmp_path / "peer.sqlite3"
    Store(path).close()
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_an_unknown_synchronous_mode_is_refused(tmp_path):
    with pytest.raises(ParameterError, match="synchronous"):
        Store(tmp_path / "x.sqlite3", synchronous="OFF")


def test_an_unopenable_path_is_a_clear_error(tmp_path):
    with pytest.raises(ParameterError, match="cannot open the store"):
        Store(tmp_path / "missing-dir" / "x.sqlite3")


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path):
    path = tmp_path / "x.sqlite3"
    path.write_bytes(b"not a database" * 100)
    with pytest.raises(ParameterError, match="cannot open the store"):
        Store(path)


def test_reopening_with_another_cap_is_refused(tmp_path):
    Store(tmp_path / "x.sqlite3", cap=64).close()
    with pytest.raises(ParameterError, match="created with cap=64"):
        Store(tmp_path / "x.sqlite3", cap=32)


def test_a_store_of_another_schema_version_is_refused(tmp_path):
    with Store(tmp_path / "x.sqlite3") as s:
        s.set_meta("schema_version", b"99")
    with pytest.raises(ParameterError, match="schema version"):
        Store(tmp_path / "x.sqlite3")


def test_counts_match_the_index(store):
    ix = ApproxIndex(cap=3)
    for replica in (store, ix):
        replica.publish_approx(V, A, 0, 100, votes={"ann": (1, b"v")})
        for i, g in enumerate(GUIDS):
            replica.publish_approx(Vector(NS, (9, 20 + i)), g, 0, 100)
        replica.put_pointer(Pointer(A, B, "127.0.0.1", 8468, 100))
    assert store.counts() == ix.counts()


def test_a_published_vector_is_found_by_an_overlapping_query(store):
    assert store.publish_approx(V, A, 0, 100, votes={"ann": (5, b"spam")}) == 4
    [m] = store.route_approx([1, 2, 3, 9], NS, 3)
    assert (m.guid, m.overlap, m.features) == (A, 3, (1, 2, 3, 4))
    assert store.get_object(A).votes == {"ann": (5, b"spam")}


def test_an_unpublished_vector_is_no_longer_found_until_republished(store):
    store.publish_approx(V, A, 0, 100)
    store.unpublish_approx(V, A, 10, 100)
    assert store.route_approx([1, 2], NS, 1) == []
    store.publish_approx(V, A, 11, 100)
    assert [m.guid for m in store.route_approx([1, 2], NS, 1)] == [A]


def test_put_votes_for_an_unknown_guid_stores_nothing(store):
    assert not store.put_votes(A, {"ann": (1, b"v")})
    assert store.get_object(A) is None
    assert store.counts()["votes"] == 0


def test_records_survive_closing_and_reopening(tmp_path):
    path = tmp_path / "peer.sqlite3"
    with Store(path) as s:
        s.publish_approx(V, A, 0, 100, votes={"ann": (5, b"spam")})
        s.put_pointer(Pointer(A, B, "127.0.0.1", 8468, 100))
        s.set_meta("node_id", B)
    with Store(path) as s:
        assert [m.guid for m in s.route_approx([1, 2, 3], NS, 3)] == [A]
        assert s.get_object(A).votes == {"ann": (5, b"spam")}
        assert s.get_pointers(A) == [Pointer(A, B, "127.0.0.1", 8468, 100)]
        assert s.get_meta("node_id") == B
        assert s.get_meta("routing_state") is None


def test_a_failed_transaction_leaves_nothing_behind(store):
    with pytest.raises(RuntimeError), store.transaction():
        store.publish_approx(V, A, 0, 100)
        raise RuntimeError("boom")
    assert store.counts()["feature_entries"] == 0
    assert store.get_object(A) is None


def test_expire_deletes_expired_rows_with_their_votes(store):
    store.publish_approx(V, A, 0, 10, votes={"ann": (5, b"spam")})
    store.publish_approx(Vector(NS, (1, 9)), B, 0, 50)
    store.put_pointer(Pointer(A, B, "127.0.0.1", 8468, 10))
    assert store.expire(20) == 4 + 1 + 1
    assert store.counts() == {
        "feature_objects": 2,
        "feature_entries": 2,
        "boilerplate": 0,
        "object_records": 1,
        "votes": 0,
        "pointers": 0,
    }


def test_a_feature_shared_by_more_than_cap_guids_becomes_a_boilerplate_row(store):
    for i, g in enumerate(GUIDS):
        store.publish_approx(Vector(NS, (1, 100 + i)), g, 0, 100)
    obj = store.get_feature_object(feature_key(NS, 1))
    assert obj.boilerplate
    assert obj.boilerplate_sketch == tuple(sorted(GUIDS)[:3])
    assert store.counts()["boilerplate"] == 1


def test_feature_keys_are_listed_in_bounded_pages_and_ranges(store):
    store.publish_approx(Vector(NS, tuple(range(10))), A, 0, 100)
    keys = sorted(feature_key(NS, f) for f in range(10))
    pages, after = [], b""
    while page := store.iter_feature_keys(after, limit=3):
        assert len(page) <= 3
        pages.extend(page)
        after = page[-1]
    assert pages == keys
    assert store.iter_feature_keys(keys[2], 100, before=keys[6]) == keys[3:6]


def test_republication_covers_everything_in_bounded_batches(store):
    for i, g in enumerate(GUIDS):
        store.publish_approx(Vector(NS, (i, 50 + i)), g, 0, 100)
    batches = list(store.iter_for_republish(batch=4))
    assert all(len(b.objects) <= 4 and len(b.records) <= 4 for b in batches)
    assert sorted(k for b in batches for k, _ in b.objects) == sorted(
        feature_key(NS, f) for i in range(len(GUIDS)) for f in (i, 50 + i)
    )
    assert sorted(r.guid for b in batches for r in b.records) == sorted(GUIDS)


def test_record_guids_are_listed_in_bounded_pages(store):
    for g in GUIDS:
        store.publish_approx(V, g, 0, 100)
    assert store.iter_record_guids(limit=3) == sorted(GUIDS)[:3]
    assert store.iter_record_guids(sorted(GUIDS)[2], limit=100) == sorted(GUIDS)[3:]


# ------------------------------------------------------------------ parity with the pure merges


@given(st.lists(entries(), max_size=12))
def test_entry_upserts_equal_folding_the_pure_merge(es):
    with Store(":memory:", cap=3) as s:
        for e in es:
            s.add_entry(KEY, e)
        expected = reduce(
            lambda o, e: merge_objects(o, FeatureObject({e.guid: e}), 3), es, FeatureObject({})
        )
        assert (s.get_feature_object(KEY) or FeatureObject({})) == expected


@given(st.lists(feature_objects(cap=3), max_size=5))
def test_merging_whole_objects_equals_the_pure_merge(objs):
    with Store(":memory:", cap=3) as s:
        for o in objs:
            s.merge_feature_object(KEY, o)
        expected = reduce(lambda a, b: merge_objects(a, b, 3), objs, FeatureObject({}))
        assert (s.get_feature_object(KEY) or FeatureObject({})) == expected


@given(st.data())
def test_record_upserts_equal_the_pure_merge(data):
    guid = data.draw(st.sampled_from(GUIDS))
    rs = data.draw(st.lists(records(guid), min_size=1, max_size=5))
    with Store(":memory:") as s:
        for r in rs:
            s.put_record(r)
        assert s.get_object(guid) == reduce(merge_records, rs)


@given(st.data())
def test_bounded_vote_upserts_equal_the_pure_bounded_merge(data):
    guid = data.draw(st.sampled_from(GUIDS))
    rs = data.draw(st.lists(records(guid), min_size=1, max_size=5))
    with Store(":memory:", max_votes=2) as s:
        for r in rs:
            s.put_record(r)
        expected = reduce(lambda a, b: merge_records(a, b, 2), rs, rs[0])
        assert s.get_object(guid) == merge_records(expected, expected, 2)


@given(st.lists(pointers(), min_size=1, max_size=8))
def test_pointer_upserts_equal_the_pure_merge(ps):
    with Store(":memory:") as s:
        for p in ps:
            s.put_pointer(p)
        for key in {p.key for p in ps}:
            expected: dict[bytes, Pointer] = {}
            for p in (p for p in ps if p.key == key):
                old = expected.get(p.node_id)
                expected[p.node_id] = p if old is None else merge_pointers(old, p)
            assert sorted(s.get_pointers(key), key=lambda p: p.node_id) == sorted(
                expected.values(), key=lambda p: p.node_id
            )


@given(st.lists(entries(), max_size=10), st.integers(0, 100))
def test_expire_equals_the_index_expire(es, now):
    ix = ApproxIndex(cap=3)
    with Store(":memory:", cap=3) as s:
        for e in es:
            ix.add_entry(KEY, e)
            s.add_entry(KEY, e)
        assert s.expire(now) == ix.expire(now)
        assert s.snapshot() == ix.snapshot()

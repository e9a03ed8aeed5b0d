"""In-network evaluation: overlap of the whole query vector, THRES rules, boilerplate
discount, determinism."""

from functools import reduce

import pytest

from p2pspam.adolr.query import evaluate
from p2pspam.adolr.records import FeatureObject, add_entry, published_entry, tombstone_entry
from p2pspam.errors import ParameterError

from .strategies import GUIDS

NS = "ata/1/L=50"
A, B, C = GUIDS[:3]


def _obj(*es, cap=64):
    return reduce(lambda o, e: add_entry(o, e, cap), es, FeatureObject({}))


def _pub(guid, features, now=0, ttl=100, ns=NS):
    return published_entry(guid, ns, features, now, ttl)


def test_a_guid_sharing_thres_features_matches_with_its_overlap():
    e = _pub(A, [1, 2, 3, 4, 5])
    [m] = evaluate([1, 2, 3, 9], 3, {1: _obj(e)})
    assert (m.guid, m.overlap, m.matched_features, m.discounted_features) == (A, 3, (1, 2, 3), ())
    assert m.features == (1, 2, 3, 4, 5)


def test_one_feature_object_is_enough_to_count_the_whole_overlap():
    assert evaluate([1, 2, 3], 3, {3: _obj(_pub(A, [1, 2, 3]))})[0].overlap == 3


def test_a_guid_below_thres_does_not_match():
    assert evaluate([1, 2, 8, 9], 3, {1: _obj(_pub(A, [1, 2, 3]))}) == []


def test_thres_equal_to_the_query_length_is_allowed():
    assert [m.guid for m in evaluate([1, 2], 2, {1: _obj(_pub(A, [1, 2, 3]))})] == [A]


@pytest.mark.parametrize("thres", [0, -1, 4])
def test_thres_outside_one_to_query_length_is_refused_with_the_rule(thres):
    with pytest.raises(ParameterError, match=r"0 < thres <= 3"):
        evaluate([1, 2, 3], thres, {})


@pytest.mark.parametrize("thres", [True, 1.0, "2", None])
def test_a_non_integer_thres_is_refused(thres):
    with pytest.raises(ParameterError, match="thres must be an integer"):
        evaluate([1, 2, 3], thres, {})


def test_duplicate_query_features_count_once_toward_the_length():
    with pytest.raises(ParameterError, match=r"0 < thres <= 2"):
        evaluate([1, 1, 2], 3, {})


def test_an_empty_query_is_refused():
    with pytest.raises(ParameterError, match="features"):
        evaluate([], 1, {})


def test_a_tombstoned_guid_does_not_match():
    obj = _obj(_pub(A, [1, 2]), tombstone_entry(A, NS, [1, 2], 5, 100))
    assert evaluate([1, 2], 1, {1: obj}) == []


def test_an_expired_entry_does_not_match_when_now_is_given():
    obj = _obj(_pub(A, [1, 2], now=0, ttl=10))
    assert evaluate([1, 2], 1, {1: obj}, now_ms=10) != []
    assert evaluate([1, 2], 1, {1: obj}, now_ms=11) == []


def test_entries_of_another_namespace_do_not_match_when_namespace_is_given():
    obj = _obj(_pub(A, [1, 2], ns="other"))
    assert evaluate([1, 2], 1, {1: obj}, namespace=NS) == []
    assert evaluate([1, 2], 1, {1: obj}) != []


def test_features_of_a_boilerplate_object_are_discounted_and_reported():
    footer = _obj(*(_pub(g, [1, 2, 3]) for g in GUIDS), cap=3)
    assert footer.boilerplate
    body = _obj(_pub(A, [1, 2, 3]))
    [m] = evaluate([1, 2, 3], 2, {1: footer, 2: body})
    assert (m.overlap, m.matched_features, m.discounted_features) == (2, (2, 3), (1,))


def test_features_held_by_more_than_max_guids_live_guids_are_discounted():
    crowded = _obj(*(_pub(g, [1, 2, 3, i + 10]) for i, g in enumerate(GUIDS[:4])))
    ms = evaluate([1, 2, 3, 10], 3, {1: crowded}, max_guids=3)
    assert [m.guid for m in ms] == [A]
    assert ms[0].matched_features == (2, 3, 10)
    assert ms[0].discounted_features == (1,)


def test_tombstoned_guids_do_not_count_toward_max_guids():
    es = [_pub(g, [1, 2]) for g in GUIDS[:4]] + [tombstone_entry(GUIDS[3], NS, [1, 2], 5, 100)]
    ms = evaluate([1, 2], 2, {1: _obj(*es)}, max_guids=3)
    assert [m.overlap for m in ms] == [2, 2, 2]


def test_matches_are_ordered_by_overlap_then_guid():
    obj = _obj(_pub(C, [1, 2, 3]), _pub(B, [1, 2]), _pub(A, [1, 2]))
    assert [m.guid for m in evaluate([1, 2, 3], 1, {1: obj})] == [C, A, B]


def test_a_guid_found_in_several_objects_is_reported_once():
    e = _pub(A, [1, 2, 3])
    assert len(evaluate([1, 2, 3], 1, {1: _obj(e), 2: _obj(e), 3: _obj(e)})) == 1


def test_objects_for_features_outside_the_query_are_ignored():
    assert evaluate([1, 2], 1, {7: _obj(_pub(A, [1, 2, 7]))}) == []

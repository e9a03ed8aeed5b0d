"""A 32-peer network on loopback UDP: publication, in-network evaluation, THRES, votes.

One network serves every test of this module (starting it is the slow part)."""

from __future__ import annotations

import random

import pytest

from p2pspam.adolr.records import Vector
from p2pspam.errors import ParameterError
from p2pspam.peer.localnet import api_call, local_config, local_network
from p2pspam.peer.service import selftest_vector

from .helpers import Authority, LoopRunner, demo_vectors, edited, random_vector, spam_vote

PEERS = 32


@pytest.fixture(scope="module")
def net():
    runner = LoopRunner()
    authority = Authority()
    cm = local_network(PEERS, authority.public_key, node_config=local_config())
    network = runner.run(cm.__aenter__())
    network.authority = authority
    network.runner = runner
    rng = random.Random(7)
    network.published = []
    for publisher in (0, 11, 23):
        vector = random_vector(rng)
        guid = rng.randbytes(20)
        runner.run(network.peers[publisher].node.publish_approx(vector, guid))
        network.published.append((publisher, vector, guid))
    yield network
    runner.run(cm.__aexit__(None, None, None))
    runner.close()


def route(net, peer: int, vector, thres: int = 3, ttl=None):
    return net.runner.run(
        net.peers[peer].node.route_approx(vector, thres, ttl=ttl, use_cache=False)
    )


def test_every_published_vector_is_found_from_every_other_peer(net):
    for publisher, vector, guid in net.published:
        for peer in range(PEERS):
            if peer == publisher:
                continue
            result = route(net, peer, vector)
            assert [m.guid for m in result.matches] == [guid], (publisher, peer)
            assert result.matches[0].overlap == 10


def test_an_edited_copy_sharing_thres_features_is_found(net):
    rng = random.Random(11)
    _, vector, guid = net.published[0]
    for peer in rng.sample(range(PEERS), 8):
        copy = edited(vector, rng, keep=3)
        result = route(net, peer, copy, thres=3)
        assert [(m.guid, m.overlap) for m in result.matches] == [(guid, 3)]


def test_a_copy_sharing_fewer_than_thres_features_is_not_found(net):
    rng = random.Random(12)
    _, vector, _ = net.published[1]
    for peer in rng.sample(range(PEERS), 4):
        assert route(net, peer, edited(vector, rng, keep=2), thres=3).matches == []


def test_ham_with_no_published_neighbour_matches_nothing(net):
    rng = random.Random(13)
    for peer in rng.sample(range(PEERS), 6):
        assert route(net, peer, random_vector(rng)).matches == []


def test_thres_equal_to_the_vector_length_needs_every_feature(net):
    rng = random.Random(14)
    _, vector, guid = net.published[2]
    assert [m.guid for m in route(net, 5, vector, thres=10).matches] == [guid]
    assert route(net, 5, edited(vector, rng, keep=9), thres=10).matches == []


@pytest.mark.parametrize("thres", [0, -1, 11])
def test_thres_outside_one_to_the_vector_length_is_refused(net, thres):
    _, vector, _ = net.published[0]
    with pytest.raises(ParameterError, match="thres"):
        route(net, 3, vector, thres=thres)


def test_unpublished_vector_is_no_longer_found(net):
    rng = random.Random(15)
    vector, guid = random_vector(rng), rng.randbytes(20)
    net.runner.run(net.peers[4].node.publish_approx(vector, guid))
    assert [m.guid for m in route(net, 20, vector).matches] == [guid]
    net.runner.run(net.peers[4].node.unpublish_approx(vector, guid))
    for peer in (20, 21, 9):
        assert route(net, peer, vector).matches == []


def test_a_marked_campaign_is_reported_with_its_tally_through_the_agent_api(net):
    spam, merged, html, ham, _ = demo_vectors()
    alice, bob = net.authority.user("alice"), net.authority.user("bob")
    for user, peer in ((alice, 2), (bob, 17)):
        reply = net.runner.run(
            api_call(net.peers[peer].api_address, "publish", {"vote": spam_vote(user, spam)})
        )
        assert reply["ok"], reply
        assert reply["result"]["guid"] == spam.guid
    for copy in (merged, html):
        args = {"namespace": copy.namespace, "features": list(copy.features), "thres": 3}
        reply = net.runner.run(api_call(net.peers[29].api_address, "check", args))
        assert reply["ok"], reply
        (match,) = reply["result"]["matches"]
        assert match["guid"] == spam.guid
        assert match["tally"]["spam"] == 2 and match["tally"]["voters"] == 2
        assert match["selftest"] is False
    args = {"namespace": ham.namespace, "features": list(ham.features), "thres": 3}
    reply = net.runner.run(api_call(net.peers[29].api_address, "check", args))
    assert reply["result"]["matches"] == []


def test_a_vote_from_another_authority_is_refused_with_its_reason(net):
    spam = demo_vectors()[0]
    stranger = Authority().user("mallory")
    reply = net.runner.run(
        api_call(net.peers[1].api_address, "publish", {"vote": spam_vote(stranger, spam)})
    )
    assert not reply["ok"]
    assert reply["error"]["code"] == "vote_rejected"
    assert reply["error"]["reason"] == "unknown_authority"


def test_every_peer_answers_the_selftest_vector_without_any_vote(net):
    vector = selftest_vector()
    args = {"namespace": vector.namespace, "features": list(vector.features), "thres": 3}
    reply = net.runner.run(api_call(net.peers[8].api_address, "check", args))
    (match,) = reply["result"]["matches"]
    assert match["selftest"] is True
    assert match["guid"] == vector.guid
    assert match["tally"]["spam"] == 1 and match["tally"]["voters"] == 0


@pytest.mark.parametrize(
    ("op", "args", "code"),
    [
        ("check", {"namespace": "ata/1/L=50", "features": [1, 2, 3], "thres": 0}, "bad_request"),
        ("check", {"namespace": "ata/1/L=50", "features": "nope", "thres": 1}, "bad_request"),
        ("check", {"features": [1, 2, 3], "thres": 1}, "bad_request"),
        (
            "check",
            {"namespace": "ata/1/L=50", "features": [1, 2], "thres": 1, "ttl": "x"},
            "bad_request",
        ),
        (
            "check",
            {"namespace": "ata/1/L=50", "features": [1, 2], "thres": 1, "ttl": 0},
            "bad_request",
        ),
        ("publish", {"vote": b"\x93garbage"}, "vote_rejected"),
        ("publish", {}, "bad_request"),
        ("explode", {}, "unknown_op"),
    ],
)
def test_bad_api_requests_get_clear_error_replies(net, op, args, code):
    reply = net.runner.run(api_call(net.peers[6].api_address, op, args))
    assert reply["ok"] is False
    assert reply["error"]["code"] == code
    assert reply["error"]["message"]


def test_status_reports_contacts_records_and_counters(net):
    reply = net.runner.run(api_call(net.peers[11].api_address, "status"))
    status = reply["result"]
    assert status["contacts"] >= 10
    assert status["records"]["feature_objects"] > 0
    assert status["counters"]["rpcs"]["find_approx"] > 0
    assert status["node_id"] == net.peers[11].node.node_id.hex()


def test_the_vector_cache_answers_a_repeated_query_with_the_same_guid(net):
    _, vector, guid = net.published[0]
    node = net.peers[30].node
    first = net.runner.run(node.route_approx(Vector(vector.namespace, vector.features), 3))
    again = net.runner.run(node.route_approx(Vector(vector.namespace, vector.features), 3))
    assert [m.guid for m in first.matches] == [m.guid for m in again.matches] == [guid]
    assert again.cached and not first.cached

"""The network-side boilerplate defences on real peers: the ham-vote discount at the node
that evaluates a query, and the match features of the ``check`` reply that the agent
builds its ham vote from (``p2pspam.defences.pipeline.ham_vote_vector``).

The vectors are ATA vectors of ``canonical_body`` (without the agent's normalisation
defences, which would strip this footer): the point is the network's own defence."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from wordfreq import top_n_list

from p2pspam.adolr.query import Match
from p2pspam.adolr.records import FeatureEntry, FeatureObject
from p2pspam.auth.votes import sign_vote
from p2pspam.defences.pipeline import ham_vote_vector
from p2pspam.dht.discount import ham_discounted_objects
from p2pspam.fingerprint import canonical_body
from p2pspam.fingerprint.ata import AtaScheme
from p2pspam.peer.localnet import api_call, local_config, local_network

from .helpers import (
    NAMESPACE,
    Authority,
    LoopRunner,
    demo_vectors,
    edited,
    now_ms,
    random_vector,
    spam_vote,
)

PEERS = 12
THRES = 3
FOOTER = (
    "_______________________________________________\n"
    "Birdwatchers mailing list  birdwatchers@lists.example.org\n"
    "To unsubscribe or change your subscription options visit\n"
    "https://lists.example.org/mailman/listinfo/birdwatchers\n"
    "Sponsored by the Northern Valley Ornithology Society, promoting field trips\n"
    "and bird counts since 1987. Archives: https://lists.example.org/pipermail/birdwatchers/\n"
)
WORDS = top_n_list("en", 3000)[100:]


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _list_mail(subject: str, body: str) -> bytes:
    return f"From: someone@example.org\nSubject: {subject}\n\n{body}\n{FOOTER}".encode()


@pytest.fixture(scope="module")
def net():
    runner = LoopRunner()
    authority = Authority()
    # 3 replicas among 12 peers: the footer's feature objects live on different nodes
    cm = local_network(PEERS, authority.public_key, node_config=local_config(replicas=3))
    network = runner.run(cm.__aenter__())
    network.runner, network.authority = runner, authority
    yield network
    runner.run(cm.__aexit__(None, None, None))
    runner.close()


def check(net, peer: int, vector) -> list[dict]:
    args = {"namespace": vector.namespace, "features": list(vector.features), "thres": THRES}
    reply = net.runner.run(api_call(net.peers[peer].api_address, "check", args))
    assert reply["ok"], reply
    return [m for m in reply["result"]["matches"] if not m["selftest"]]


def publish(net, peer: int, encoded_vote: bytes) -> None:
    reply = net.runner.run(api_call(net.peers[peer].api_address, "publish", {"vote": encoded_vote}))
    assert reply["ok"], reply


def as_match(raw: dict) -> Match:
    """The agent's view of a ``check`` match (what ``ham_vote_vector`` takes)."""
    return Match(
        raw["guid"],
        raw["overlap"],
        tuple(raw["matched"]),
        tuple(raw["discounted"]),
        NAMESPACE,
        tuple(raw["features"]),
    )


def test_a_ham_vote_on_a_list_message_discounts_the_footer_but_the_spam_is_still_caught(net):
    rng = random.Random(8)
    spam_text = _words(rng, 90)
    tokens = spam_text.split()
    for i in (5, 30, 60):
        tokens[i] = "zzzedited"
    scheme = AtaScheme()
    spam_body = canonical_body(_list_mail("Cheap watches", spam_text))
    spam = scheme.vector(spam_body)
    edited_spam = scheme.vector(canonical_body(_list_mail("Cheap watches!", " ".join(tokens))))
    first_body = canonical_body(_list_mail("Owl sighting", _words(rng, 60)))
    first = scheme.vector(first_body)
    second_body = canonical_body(_list_mail("Heron nest", _words(rng, 60)))
    second = scheme.vector(second_body)
    third = scheme.vector(canonical_body(_list_mail("Kite roost", _words(rng, 60))))
    footer = set(scheme.vector(canonical_body(("Hi\n" + FOOTER).encode())).features)
    shared = set(spam.features) & set(first.features)
    assert len(shared) >= THRES and shared <= footer  # the list messages share only the footer
    marker, lister = net.authority.user("marker"), net.authority.user("lister")
    reader = net.authority.user("reader")

    publish(net, 1, spam_vote(marker, spam))
    # a legitimate list message matches the marked spam through the footer alone
    [match] = check(net, 2, first)
    assert match["guid"] == spam.guid and match["tally"]["spam"] == 1
    assert set(match["matched"]) == shared and match["discounted"] == []
    assert [m["guid"] for m in check(net, 5, second)] == [spam.guid]

    # the user rescues it: a ham vote on the footer features it shares with the spam
    vote_vector = ham_vote_vector(first, first_body.text, [as_match(match)], scheme.length)
    assert set(vote_vector.features) >= shared
    publish(net, 3, sign_vote(lister, vote_vector, "ham", now_ms()).encode())

    # one rescuer against one marker is a tie, which the policy calls spam: the footer
    # still counts, so a single ham vote cannot switch off what another user marked
    [tie] = [m for m in check(net, 4, second) if m["guid"] == spam.guid]
    # a second list member rescues the post they received
    vote_vector = ham_vote_vector(second, second_body.text, [as_match(tie)], scheme.length)
    publish(net, 5, sign_vote(reader, vote_vector, "ham", now_ms()).encode())

    # another post of the list no longer matches the spam (at most the rescued messages,
    # whose tallies say ham)
    later = check(net, 6, third)
    assert spam.guid not in [m["guid"] for m in later]
    assert all(m["guid"] in (first.guid, second.guid) for m in later)
    assert all(m["tally"]["spam"] == 0 for m in later)
    # an edited copy of the spam is still caught by its own content, footer discounted
    # (and it may match the rescued message through the footer: that GUID is ham)
    matches = {m["guid"]: m for m in check(net, 7, edited_spam)}
    assert set(matches) <= {spam.guid, first.guid, second.guid}
    caught = matches[spam.guid]
    assert caught["tally"]["spam"] == 1
    assert set(caught["discounted"]) == set(spam.features) & set(edited_spam.features) & footer
    assert caught["overlap"] >= THRES and not set(caught["matched"]) & footer
    assert first.guid not in matches or matches[first.guid]["tally"]["spam"] == 0


def test_the_check_reply_carries_each_matched_messages_own_features(net):
    rng = random.Random(21)
    base = random_vector(rng)
    vector = replace(demo_vectors()[0], features=base.features, guid=rng.randbytes(20))
    publish(net, 4, spam_vote(net.authority.user("ann"), vector))
    [match] = check(net, 9, edited(base, rng, 4))
    assert match["guid"] == vector.guid
    assert match["features"] == sorted(vector.features)
    assert match["overlap"] == 4


# -- the rule at one node (pure) -------------------------------------------------------


def _entry(guid: bytes, features: tuple[int, ...]) -> FeatureEntry:
    return FeatureEntry(guid, NAMESPACE, features, 0, 0, 10**15)


SPAM, HAM = b"s" * 20, b"h" * 20


def test_a_feature_held_with_a_ham_guid_is_presented_as_boilerplate_keeping_its_entries():
    spam, ham = _entry(SPAM, (1, 2, 3, 4, 5)), _entry(HAM, (1, 9))
    objects = {1: FeatureObject({SPAM: spam, HAM: ham}), 2: FeatureObject({SPAM: spam})}
    out = ham_discounted_objects((1, 2, 3), objects, NAMESPACE, {HAM}, 1, 0)
    assert out[1].boilerplate and set(out[1].entries) == {SPAM, HAM}
    assert not out[2].boilerplate


def test_a_feature_held_elsewhere_is_discounted_when_a_ham_entry_here_contains_it():
    spam, ham = _entry(SPAM, (1, 2, 3, 4, 5)), _entry(HAM, (1, 2, 9))
    objects = {1: FeatureObject({SPAM: spam, HAM: ham})}
    out = ham_discounted_objects((1, 2, 3), objects, NAMESPACE, {HAM}, 1, 0)
    assert out[2].boilerplate and out[2].entries == {}
    assert 3 not in out


def test_without_the_ham_decision_or_with_the_rule_off_nothing_is_discounted():
    spam, ham = _entry(SPAM, (1, 2, 3)), _entry(HAM, (1, 2))
    objects = {1: FeatureObject({SPAM: spam, HAM: ham})}
    assert ham_discounted_objects((1, 2, 3), objects, NAMESPACE, set(), 1, 0) == objects
    assert ham_discounted_objects((1, 2, 3), objects, NAMESPACE, {HAM}, None, 0) == objects
    assert not ham_discounted_objects((1, 2), objects, NAMESPACE, {HAM}, 2, 0)[1].boilerplate


# -- replication keeps ham records next to the feature objects ---------------------------


def test_republication_carries_the_ham_records_along_with_the_feature_objects():
    from p2pspam.adolr.keys import feature_key

    runner = LoopRunner()
    authority = Authority()
    rng = random.Random(5)

    async def scenario():
        config = local_config(replicas=2)
        async with local_network(16, authority.public_key, node_config=config) as net:
            vector = replace(demo_vectors()[0], features=random_vector(rng, 3).features)
            vote = spam_vote(authority.user("rescuer"), vector, "ham")
            reply = await api_call(net.peers[0].api_address, "publish", {"vote": vote})
            assert reply["ok"], reply
            key = feature_key(vector.namespace, vector.features[0])

            def holders() -> set[int]:
                return {
                    i
                    for i, p in enumerate(net.peers)
                    if i not in net._stopped and p.store.get_feature_object(key) is not None
                }

            # only the publisher is left with the object or the record
            for index, peer in enumerate(net.peers):
                if index and (index in holders() or peer.store.get_object(vector.guid)):
                    await net.stop_peer(index)
            await net.peers[0].node.republish()
            fresh = holders() - {0}
            return fresh, {i for i in fresh if net.peers[i].store.get_object(vector.guid)}

    try:
        fresh, with_record = runner.run(scenario())
    finally:
        runner.close()
    assert len(fresh) >= 2
    assert with_record == fresh


# -- configuration and wire ------------------------------------------------------------


def test_the_discounts_default_to_the_measured_constants_and_can_be_configured(tmp_path):
    from p2pspam.defences import DEFAULT_HAM_GUIDS, DEFAULT_MAX_GUIDS
    from p2pspam.peer.config import load_toml, resolve

    default = resolve({}).node
    assert (default.max_guids, default.ham_guids) == (DEFAULT_MAX_GUIDS, DEFAULT_HAM_GUIDS)
    toml = tmp_path / "peer.toml"
    toml.write_text("[defences]\nmax_guids = 32\nham_guids = 0\n")
    from_file = resolve(load_toml(toml)).node
    assert (from_file.max_guids, from_file.ham_guids) == (32, None)
    flags = resolve(load_toml(toml), max_guids=16, ham_guids=2).node
    assert (flags.max_guids, flags.ham_guids) == (16, 2)


@pytest.mark.parametrize(
    ("flags", "error"), [({"max_guids": 0}, "max_guids"), ({"ham_guids": -1}, "ham_guids")]
)
def test_bad_discount_settings_are_refused_with_the_setting_named(flags, error):
    from p2pspam.errors import ParameterError
    from p2pspam.peer.config import resolve

    with pytest.raises(ParameterError, match=error):
        resolve({}, **flags)


def test_an_unknown_defences_key_in_peer_toml_is_refused(tmp_path):
    from p2pspam.errors import InputError
    from p2pspam.peer.config import load_toml

    toml = tmp_path / "peer.toml"
    toml.write_text("[defences]\nmax_guid = 32\n")
    with pytest.raises(InputError, match="defences"):
        load_toml(toml)


@pytest.mark.parametrize("bad", [["x"], [-1], [1 << 64], "12", [1] * 2000])
def test_a_malformed_discounted_list_in_a_reply_is_refused(bad):
    from p2pspam.dht import messages, wire

    with pytest.raises(wire.WireError):
        messages.approx_reply({"holds_key": True, "discounted": bad})


def test_a_reply_reports_the_discounted_features():
    from p2pspam.dht import messages

    assert messages.approx_reply({"holds_key": True, "discounted": [3, 1]}).discounted == (3, 1)


def test_a_node_claiming_discounts_for_features_it_was_not_asked_about_is_ignored():
    from p2pspam.adolr.keys import feature_key

    runner = LoopRunner()
    authority = Authority()
    rng = random.Random(13)

    async def scenario():
        config = local_config(replicas=2)
        async with local_network(12, authority.public_key, node_config=config) as net:
            vector = replace(demo_vectors()[0], features=random_vector(rng).features)
            vote = spam_vote(authority.user("marker"), vector)
            reply = await api_call(net.peers[1].api_address, "publish", {"vote": vote})
            assert reply["ok"], reply
            # the querier holds the fewest of the feature objects: it must ask the others
            querier = min(
                net.peers[2:],
                key=lambda p: len(p.store.feature_objects_for(vector.namespace, vector.features)),
            )
            for peer in net.peers:  # every other node lies about the other features
                if peer is querier:
                    continue
                honest = peer.node.answer_approx

                async def lying(query, exclude=None, honest=honest):
                    reply = await honest(query, exclude)
                    reply["discounted"] = [
                        f for f in query.features if feature_key(query.namespace, f) != query.key
                    ]
                    return reply

                peer.node.answer_approx = lying
            result = await querier.node.route_approx(vector, THRES, use_cache=False)
            return vector, result.matches

    try:
        vector, matches = runner.run(scenario())
    finally:
        runner.close()
    assert [m.guid for m in matches] == [vector.guid]
    assert matches[0].overlap == len(vector.features) and matches[0].discounted == ()

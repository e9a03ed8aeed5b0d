"""Votes through a real network of 16 peers on loopback UDP: tallies seen by a checking
agent on another peer, rejection reasons at the agent API and at storing peers, a
tampering peer, replay, and a revocation list spreading through the network.

One network serves every test of this module (starting it is the slow part)."""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import replace
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pspam.adolr.records import Vector, new_record
from p2pspam.auth.credentials import UserKey, new_user_key, public_bytes
from p2pspam.auth.revocation import sign_revocations
from p2pspam.auth.votes import Vote, sign_vote
from p2pspam.fingerprint.normalize import CanonicalBody, canonical_text
from p2pspam.fingerprint.vector import FeatureVector
from p2pspam.peer.localnet import api_call, local_config, local_network

from .helpers import SCHEME

PEERS = 16
DAY = 86_400_000
REVOKED = "mallory"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def message(topic: str) -> FeatureVector:
    """The ATA vector of a made-up campaign about ``topic``."""
    text = (
        f"Exclusive offer about {topic}: our certified partners guarantee results within "
        f"days. Reply with your details to receive the {topic} package at half price, "
        f"limited stock, shipping worldwide, satisfaction guaranteed or your money back."
    )
    return SCHEME.vector(CanonicalBody(canonical_text(text), None))


class World:
    """The network, its event loop, an authority and its users."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.authority = Ed25519PrivateKey.generate()
        self.public_key = public_bytes(self.authority)
        self.users: dict[str, UserKey] = {}
        self.cm = local_network(PEERS, self.public_key, node_config=local_config())
        self.net = self.run(self.cm.__aenter__())

    def run(self, coro: Any, timeout: float = 120.0) -> Any:
        return self.loop.run_until_complete(asyncio.wait_for(coro, timeout))

    def user(self, name: str, not_before: int | None = None, not_after: int | None = None):
        now = now_ms()
        key = new_user_key(
            self.authority,
            name,
            now - DAY if not_before is None else not_before,
            now + DAY if not_after is None else not_after,
        )
        self.users.setdefault(name, key)
        return key

    def api(self, peer: int, op: str, args: dict[str, Any]) -> dict[str, Any]:
        address = self.net.peers[peer].api_address
        return self.run(api_call(address, op, args))

    def publish(self, peer: int, vote: bytes) -> dict[str, Any]:
        return self.api(peer, "publish", {"vote": vote})

    def tally(self, peer: int, vector: FeatureVector) -> dict[str, Any] | None:
        """The tally of ``vector``'s GUID in a check from ``peer`` (None: no match)."""
        reply = self.api(
            peer,
            "check",
            {"namespace": vector.namespace, "features": list(vector.features), "thres": 3},
        )
        assert reply["ok"], reply
        for match in reply["result"]["matches"]:
            if match["guid"] == vector.guid:
                return match["tally"]
        return None

    def counters(self, reason: str, exclude: int | None = None) -> int:
        return sum(
            p.node.counters.get(f"vote_rejected.{reason}", 0)
            for i, p in enumerate(self.net.peers)
            if i != exclude
        )

    def close(self) -> None:
        self.run(self.cm.__aexit__(None, None, None))
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()


@pytest.fixture(scope="module")
def world():
    w = World()
    yield w
    w.close()


def vote(key: UserKey, vector: FeatureVector, verdict: str = "spam", ts: int | None = None):
    return sign_vote(key, vector, verdict, now_ms() if ts is None else ts)


def tally(spam: int, ham: int) -> dict[str, int]:
    return {"spam": spam, "ham": ham, "voters": spam + ham}


def counts(t: dict[str, Any] | None) -> dict[str, int] | None:
    return None if t is None else {k: t[k] for k in ("spam", "ham", "voters")}


def test_marks_by_several_users_give_the_right_tally_on_every_other_peer(world):
    campaign = message("watches")
    for i in range(5):
        reply = world.publish(1 + i, vote(world.user(f"spammed{i}"), campaign).encode())
        assert reply["ok"], reply
    world.publish(6, vote(world.user("listmember"), campaign, "ham").encode())
    for checker in (0, 9, 12, 15):
        assert counts(world.tally(checker, campaign)) == tally(5, 1)


def test_one_user_marking_many_times_counts_once_through_the_network(world):
    campaign = message("pills")
    stuffer = world.user("stuffer")
    start = now_ms()
    for i in range(20):
        assert world.publish(i % PEERS, vote(stuffer, campaign, ts=start + i).encode())["ok"]
    assert counts(world.tally(3, campaign)) == tally(1, 0)


def test_a_changed_mind_wins_and_a_replayed_old_vote_does_not_resurrect(world):
    campaign = message("loans")
    carol = world.user("carol")
    first = vote(carol, campaign, "spam", now_ms() - 1000)
    assert world.publish(2, first.encode())["ok"]
    assert counts(world.tally(10, campaign)) == tally(1, 0)
    assert world.publish(4, vote(carol, campaign, "ham").encode())["ok"]
    assert counts(world.tally(10, campaign)) == tally(0, 1)
    world.publish(13, first.encode())  # the old vote again, through another peer
    assert counts(world.tally(10, campaign)) == tally(0, 1)
    assert counts(world.tally(5, campaign)) == tally(0, 1)


def tamper_and_store(world: World, peer: int, genuine: Vote, altered: bytes) -> None:
    """Peer ``peer`` misbehaves: it stores ``altered`` bytes as ``genuine``'s user's vote
    at the replicas, bypassing verification."""
    tamperer = world.net.peers[peer]
    now = now_ms()
    record = new_record(
        genuine.guid,
        genuine.namespace,
        genuine.features,
        now,
        tamperer.settings.node.entry_ttl_ms,
        {genuine.user_id: (genuine.timestamp_ms, altered)},
    )
    world.run(
        tamperer.node.publish_approx(
            Vector(genuine.namespace, genuine.features), genuine.guid, record
        )
    )


def test_votes_altered_by_a_tampering_peer_are_refused_by_every_storing_peer(world):
    campaign = message("newsletter")
    dave = world.user("dave")
    genuine = vote(dave, campaign, "ham")
    before = world.counters("bad_signature", exclude=7)
    tamper_and_store(world, 7, genuine, replace(genuine, verdict="spam").encode())
    assert world.counters("bad_signature", exclude=7) > before
    for checker in (0, 3, 11):
        assert counts(world.tally(checker, campaign)) in (None, tally(0, 0))


def test_a_revocation_list_reaching_one_peer_stops_the_users_votes_everywhere(world):
    campaign = message("crypto")
    mallory, erin = world.user(REVOKED), world.user("erin")
    assert world.publish(3, vote(mallory, campaign).encode())["ok"]
    assert world.publish(8, vote(erin, campaign).encode())["ok"]
    assert counts(world.tally(14, campaign)) == tally(2, 0)

    signed = sign_revocations(world.authority, 1, now_ms(), {REVOKED}).encode()
    assert world.api(5, "revocations", {"list": signed})["result"]["accepted"]

    async def spread() -> None:
        while not all(p.verifier.is_revoked(REVOKED) for p in world.net.peers):
            await asyncio.sleep(0.05)

    world.run(spread(), timeout=30)
    for checker in range(PEERS):
        assert counts(world.tally(checker, campaign)) == tally(1, 0), checker


def bad_votes(world: World) -> dict[str, bytes]:
    """One refused vote per reason the agent API can give (rate_limited aside: its
    unit test does not need 200 publications)."""
    campaign = message("rejections")
    now = now_ms()
    alice = world.user("alice")
    stranger = new_user_key(Ed25519PrivateKey.generate(), "alice", now - DAY, now + DAY)
    expired = world.user("expired", now - 3 * DAY, now - DAY)
    early = world.user("early", now + DAY, now + 3 * DAY)
    genuine = vote(alice, campaign, "ham")
    wide = replace(campaign, features=tuple(range(1, 12)))
    return {
        "oversized": b"\x00" * 3000,
        "malformed": b"\x92\xc4\x01x\xc4\x01y",
        "bad_signature": replace(genuine, verdict="spam").encode(),
        "unknown_authority": vote(stranger, campaign).encode(),
        # Dated outside the validity: refused as fresh votes and as replicas alike (a
        # replica cast while its credential was valid keeps counting after expiry).
        "credential_expired": vote(expired, campaign, ts=now).encode(),
        "credential_not_yet_valid": vote(early, campaign, ts=now).encode(),
        "revoked": vote(world.user(REVOKED), campaign).encode(),
        "future_timestamp": vote(alice, campaign, ts=now + DAY).encode(),
        "bad_vector": vote(alice, wide).encode(),
    }


def ensure_revoked(world: World) -> None:
    signed = sign_revocations(world.authority, 1, now_ms(), {REVOKED}).encode()
    for peer in world.net.peers:
        peer.node.accept_revocations(signed, gossip=False)


def test_every_rejection_reason_reaches_the_agent_with_its_code(world):
    ensure_revoked(world)
    for reason, data in bad_votes(world).items():
        reply = world.publish(9, data)
        assert not reply["ok"], reason
        assert reply["error"]["code"] == "vote_rejected"
        assert reply["error"]["reason"] == reason, (reason, reply["error"])


def test_every_rejection_reason_is_applied_by_storing_peers(world):
    ensure_revoked(world)
    carrier = vote(world.user("carrier"), message("rejections"))
    for reason, data in bad_votes(world).items():
        if reason == "oversized":
            continue  # an object record cannot even carry it: refused by the record codec
        before = world.counters(reason, exclude=2)
        tamper_and_store(world, 2, carrier, data)
        assert world.counters(reason, exclude=2) > before, reason


def test_authority_push_hands_a_newer_list_to_a_peer_and_the_network_adopts_it(world, tmp_path):
    from p2pspam.auth.authority import AuthorityExport

    campaign = message("casino")
    trudy = world.user("trudy")
    assert world.publish(4, vote(trudy, campaign).encode())["ok"]
    assert counts(world.tally(11, campaign)) == tally(1, 0)
    signed = sign_revocations(world.authority, 2, now_ms(), {REVOKED, "trudy"}).encode()
    export = tmp_path / "authority.json"
    export.write_bytes(AuthorityExport(world.public_key, signed).to_bytes())
    host, port = world.net.peers[6].api_address

    async def push() -> tuple[int, bytes]:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "p2pspam.cli",
            "authority",
            "push",
            f"{host}:{port}",
            "--export",
            str(export),
            stdout=asyncio.subprocess.PIPE,
        )
        out, _ = await process.communicate()
        while not all(p.verifier.is_revoked("trudy") for p in world.net.peers):
            await asyncio.sleep(0.05)
        return process.returncode, out

    code, out = world.run(push(), timeout=60)
    assert code == 0 and b"adopted revocation list 2" in out
    assert counts(world.tally(11, campaign)) == tally(0, 0)

"""Peer credentials for a closed federation."""

from __future__ import annotations

from dataclasses import replace

import pytest

from p2pspam.auth.credentials import public_bytes
from p2pspam.auth.peers import (
    PeerRejected,
    issue_peer_key,
    node_id_for,
    peer_proof,
    verify_peer_credential,
    verify_peer_proof,
)
from p2pspam.auth.revocation import sign_revocations

from .helpers import DAY, NOW, authority_key


@pytest.fixture
def authority():
    return authority_key()


@pytest.fixture
def peer(authority):
    return issue_peer_key(authority, "node1", NOW - DAY, NOW + DAY)


def rejected(data, authority, now=NOW, **kw) -> str:
    with pytest.raises(PeerRejected) as info:
        verify_peer_credential(data, public_bytes(authority), now, **kw)
    return info.value.reason


def test_a_certified_peer_is_accepted(authority, peer):
    credential = verify_peer_credential(peer.credential.encode(), public_bytes(authority), NOW)
    assert credential.node_id == node_id_for(credential.public_key) == peer.node_id


def test_the_node_id_must_be_the_one_the_contact_claims(authority, peer):
    assert rejected(peer.credential.encode(), authority, node_id=bytes(20)) == "wrong_node_id"


def test_a_peer_of_another_authority_is_refused(authority):
    stranger = issue_peer_key(authority_key(), "node1", NOW - DAY, NOW + DAY)
    assert rejected(stranger.credential.encode(), authority) == "unknown_authority"


def test_a_chosen_node_id_breaks_the_signature(authority, peer):
    moved = replace(peer.credential, node_id=bytes(20))
    assert rejected(moved.encode(), authority) == "unknown_authority"


def test_an_expired_or_early_peer_credential_is_refused(authority, peer):
    assert rejected(peer.credential.encode(), authority, NOW + 2 * DAY) == "credential_expired"
    assert rejected(peer.credential.encode(), authority, NOW - 2 * DAY) == (
        "credential_not_yet_valid"
    )


def test_a_revoked_peer_is_refused(authority, peer):
    revocations = sign_revocations(authority, 1, NOW, set(), {peer.node_id})
    assert rejected(peer.credential.encode(), authority, revocations=revocations) == "revoked"


def test_garbage_is_malformed(authority):
    assert rejected(b"\x00\x01", authority) == "malformed"


def test_a_peer_proves_it_holds_its_key(peer):
    proof = peer_proof(peer, b"nonce-1234")
    verify_peer_proof(peer.credential, b"nonce-1234", proof)
    with pytest.raises(PeerRejected, match="bad_proof"):
        verify_peer_proof(peer.credential, b"nonce-9999", proof)


def test_a_proof_by_another_key_is_refused(authority, peer):
    other = issue_peer_key(authority, "node2", NOW - DAY, NOW + DAY)
    with pytest.raises(PeerRejected):
        verify_peer_proof(peer.credential, b"nonce", peer_proof(other, b"nonce"))

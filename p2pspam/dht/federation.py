"""Closed federation: peers talk only to peers the authority certified.

With a peer credential (``p2pspam authority issue-peer``), a peer runs this gate:

- before its first request to an address it runs a handshake (two RPCs, mutual proof):
  ``hello(nodeid, challenge_a, credential_a)`` -> ``[credential_b, proof_b(challenge_a),
  challenge_b]``, then ``confirm(nodeid, proof_a(challenge_b))`` -> ``True``; each side
  checks the other's credential (signed by the authority, valid now, not revoked, node id
  derived from the key) and proof of key possession (``p2pspam.auth.peers``);
- it serves requests (other than ``hello``/``confirm``) only from an address admitted
  with the node id the request claims; anything else is dropped as ``unverified_peer``.

Trade-off (see ``docs/peer.md``): a closed federation keeps strangers from joining,
eclipsing keys or polluting routing tables, at the cost of one more handshake (two round
trips) per new contact and of the authority deciding which organisations may run peers.
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from p2pspam.auth.peers import (
    MAX_PEER_CREDENTIAL_BYTES,
    PeerKey,
    PeerRejected,
    peer_proof,
    verify_peer_credential,
    verify_peer_proof,
)
from p2pspam.auth.revocation import RevocationList
from p2pspam.dht import wire

Address = tuple[str, int]
CHALLENGE_BYTES = 32
HANDSHAKE_RPCS = frozenset({"hello", "confirm"})
MAX_ADMITTED = 4096


def hello_args(args: list[Any]) -> tuple[bytes, bytes, bytes]:
    """Validate ``hello(nodeid, challenge, credential)``."""
    if len(args) != 3:
        raise wire.bad("hello takes [node_id, challenge, credential]")
    challenge = wire.blob(args[1], CHALLENGE_BYTES, "challenge")
    if len(challenge) != CHALLENGE_BYTES:
        raise wire.bad(f"challenge must be {CHALLENGE_BYTES} bytes")
    return wire.node_id(args[0]), challenge, wire.blob(args[2], MAX_PEER_CREDENTIAL_BYTES, "cred")


def confirm_args(args: list[Any]) -> tuple[bytes, bytes]:
    """Validate ``confirm(nodeid, proof)``."""
    if len(args) != 2:
        raise wire.bad("confirm takes [node_id, proof]")
    return wire.node_id(args[0]), wire.blob(args[1], 64, "proof")


class Federation:
    """The closed-federation gate of one peer (see the module docstring)."""

    def __init__(
        self,
        peer_key: PeerKey,
        authority_public_key: bytes,
        revocations: Callable[[], RevocationList | None],
        clock: Callable[[], int],
    ) -> None:
        self.peer_key = peer_key
        self.authority_public_key = authority_public_key
        self.revocations = revocations
        self.clock = clock
        self._admitted: OrderedDict[Address, bytes] = OrderedDict()
        self._pending: OrderedDict[Address, tuple[Any, bytes]] = OrderedDict()
        self._handshakes: dict[Address, asyncio.Future[bool]] = {}

    @property
    def node_id(self) -> bytes:
        """The node id the authority assigned to this peer."""
        return self.peer_key.node_id

    def _revoked(self, node_id: bytes) -> bool:
        revocations = self.revocations()
        return revocations is not None and node_id in revocations.nodes

    def _admit(self, address: Address, node_id: bytes) -> None:
        self._admitted.pop(address, None)
        self._admitted[address] = node_id
        while len(self._admitted) > MAX_ADMITTED:
            self._admitted.popitem(last=False)

    def admitted(self, address: Address, node_id: bytes | None) -> bool:
        """True when ``address`` proved it is the certified, unrevoked ``node_id``
        (``None``: any node id admitted at that address)."""
        known = self._admitted.get(address)
        if known is None or (node_id is not None and known != node_id):
            return False
        return not self._revoked(known)

    def _verify(self, credential: bytes, node_id: bytes | None) -> Any:
        return verify_peer_credential(
            credential, self.authority_public_key, self.clock(), self.revocations(), node_id
        )

    # -- serving side -----------------------------------------------------------------

    def rpc_hello(
        self, sender: Address, nodeid: bytes, challenge: bytes, credential: bytes
    ) -> list[Any] | None:
        """Check the caller's credential, prove our key, and challenge the caller."""
        try:
            cred = self._verify(credential, nodeid)
        except PeerRejected:
            return None
        mine = os.urandom(CHALLENGE_BYTES)
        self._pending.pop(sender, None)
        self._pending[sender] = (cred, mine)
        while len(self._pending) > 1024:
            self._pending.popitem(last=False)
        proof = peer_proof(self.peer_key, challenge)
        return [self.peer_key.credential.encode(), proof, mine]

    def rpc_confirm(self, sender: Address, nodeid: bytes, proof: bytes) -> bool | None:
        """Admit the caller once it signed our challenge with its certified key."""
        pending = self._pending.pop(sender, None)
        if pending is None:
            return None
        cred, challenge = pending
        if cred.node_id != nodeid:
            return None
        try:
            verify_peer_proof(cred, challenge, proof)
        except PeerRejected:
            return None
        self._admit(sender, nodeid)
        return True

    # -- calling side -----------------------------------------------------------------

    async def ensure(self, protocol: Any, address: Address) -> bool:
        """Run (or join) the handshake with ``address``; True once it is admitted."""
        if address in self._admitted and not self._revoked(self._admitted[address]):
            return True
        running = self._handshakes.get(address)
        if running is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._handshakes[address] = future
        try:
            ok = await self._handshake(protocol, address)
        except Exception:
            ok = False
        finally:
            del self._handshakes[address]
        future.set_result(ok)
        if not ok:
            protocol.counters["federation.refused"] += 1
        return ok

    async def _handshake(self, protocol: Any, address: Address) -> bool:
        challenge = os.urandom(CHALLENGE_BYTES)
        credential = self.peer_key.credential.encode()
        ok, reply = await protocol.raw_call(address, "hello", self.node_id, challenge, credential)
        if not ok or not isinstance(reply, list) or len(reply) != 3:
            return False
        their_credential, their_proof, their_challenge = reply
        if not all(isinstance(x, bytes) for x in reply) or len(their_challenge) != CHALLENGE_BYTES:
            return False
        try:
            cred = self._verify(their_credential, None)
            verify_peer_proof(cred, challenge, their_proof)
        except PeerRejected:
            return False
        proof = peer_proof(self.peer_key, their_challenge)
        ok, reply = await protocol.raw_call(address, "confirm", self.node_id, proof)
        if not ok or reply is not True:
            return False
        self._admit(address, cred.node_id)
        return True

"""A whole peer: SQLite store, vote verifier, ADOLR node and the agent API operations.

:class:`Peer` wires the parts together and implements the agent API operations
(``check``, ``publish``, ``unpublish``, ``status``, ``revocations``; see
``docs/peer.md``). Every vote that reaches a tally or a record went through
``VoteVerifier``: fresh votes from agents with the per-user rate limit, votes from other
peers as replicas (in ``AdolrNode.verified_record``), and stored votes again when a tally
is served (``tally_record``), so a revocation takes effect at once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from p2pspam.adolr.records import Vector, new_record
from p2pspam.auth.peers import PeerKey
from p2pspam.auth.ratelimit import VoteRateLimiter
from p2pspam.auth.tally import tally_record
from p2pspam.auth.verify import RateLimitedVerifier, VoteRejected, VoteVerifier
from p2pspam.dht import wire
from p2pspam.dht.federation import Federation
from p2pspam.dht.node import AdolrNode, NodeConfig, RouteResult, now_ms
from p2pspam.errors import ParameterError
from p2pspam.fingerprint.vector import FeatureVector
from p2pspam.peer.api import ApiError, ApiServer, Network, parse_networks
from p2pspam.peer.store import Store

log = logging.getLogger(__name__)

STORE_FILE = "peer.sqlite3"


@dataclass(frozen=True, slots=True)
class PeerSettings:
    """Everything a peer is configured with (see ``p2pspam.peer.config``)."""

    data_dir: Path
    authority_public_key: bytes
    revocations: bytes | None = None
    listen: tuple[str, int] = ("0.0.0.0", 8468)
    api: tuple[str, int] | None = ("127.0.0.1", 8469)
    api_allow: tuple[str, ...] = ("127.0.0.0/8", "::1/128")
    bootstrap: tuple[tuple[str, int], ...] = ()
    votes_per_hour: int = 200
    node: NodeConfig = field(default_factory=NodeConfig)
    # a peer credential: talk only to peers certified by the same authority
    peer_key: PeerKey | None = None


@cache
def selftest_vector() -> FeatureVector:
    """The ATA vector (default parameters) of the built-in self-test message."""
    from p2pspam.fingerprint import canonical_body, get_scheme
    from p2pspam.selftest import SELFTEST_MESSAGE

    return get_scheme("ata").vector(canonical_body(SELFTEST_MESSAGE))


def _bad(message: str) -> ApiError:
    return ApiError("bad_request", message)


def _arg(args: dict[str, Any], name: str, check: Any, *extra: Any) -> Any:
    if name not in args:
        raise _bad(f"missing argument {name!r}")
    try:
        return check(args[name], *extra)
    except wire.WireError as exc:
        raise _bad(f"argument {name!r}: {exc}") from None


class Peer:
    """One running peer (see the module docstring)."""

    def __init__(self, settings: PeerSettings) -> None:
        self.settings = settings
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        self.store = Store(settings.data_dir / STORE_FILE, max_guids=settings.node.max_guids)
        self.verifier = VoteVerifier(settings.authority_public_key)
        saved = self.store.get_meta("revocations")
        for signed in (saved, settings.revocations):
            if signed is not None:
                try:
                    self.verifier.update_revocations(signed, now_ms())
                except Exception as exc:  # a bad saved list must not stop the peer
                    log.warning("ignoring a revocation list: %s", exc)
        self.fresh_votes = RateLimitedVerifier(
            self.verifier, VoteRateLimiter(per_hour=settings.votes_per_hour)
        )
        federation = None
        if settings.peer_key is not None:
            federation = Federation(
                settings.peer_key,
                settings.authority_public_key,
                lambda: self.verifier.revocations,
                now_ms,
            )
        self.node = AdolrNode(self.store, self.verifier, settings.node, federation=federation)
        self.api: ApiServer | None = None
        self.api_address: tuple[str, int] | None = None
        self.started = time.monotonic()
        self._allow: list[Network] = parse_networks(settings.api_allow)

    # -- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Listen (UDP and API) and join the network through the bootstrap addresses
        and the contacts saved at the last run."""
        host, port = self.settings.listen
        await self.node.start(host, port)
        if self.settings.api is not None:
            self.api = ApiServer(self.dispatch, self._allow)
            self.api_address = await self.api.start(*self.settings.api)
        seeds = list(self.settings.bootstrap) + self.node.saved_contacts()
        if seeds:
            await self.node.bootstrap(seeds)
        log.debug(
            "peer started",
            extra={
                "node_id": self.node.node_id.hex(),
                "listen": self.node.listen_address,
                "api": self.api_address,
                "contacts": len(self.node.contacts()),
            },
        )

    async def stop(self) -> None:
        """Stop serving and close the store (everything acknowledged is committed)."""
        if self.api is not None:
            await self.api.stop()
        await self.node.stop()
        self.store.close()

    # -- the agent API ----------------------------------------------------------------

    async def dispatch(self, op: str, args: dict[str, Any]) -> Any:
        """Run agent API operation ``op``."""
        handler = {
            "check": self.op_check,
            "publish": self.op_publish,
            "unpublish": self.op_unpublish,
            "status": self.op_status,
            "revocations": self.op_revocations,
        }.get(op)
        if handler is None:
            raise ApiError("unknown_op", f"unknown operation {op!r}")
        return await handler(args)

    async def op_check(self, args: dict[str, Any]) -> dict[str, Any]:
        """``check``: every published message sharing >= thres features, with tallies."""
        namespace = _arg(args, "namespace", wire.namespace)
        features = _arg(args, "features", wire.features)
        thres = _arg(args, "thres", wire.thres, len(features))
        ttl = _arg(args, "ttl", wire.ttl) if "ttl" in args else None
        fv = Vector(namespace, features)
        try:
            result = await self.node.route_approx(fv, thres, ttl=ttl)
        except ParameterError as exc:
            raise _bad(str(exc)) from None
        return self.check_result(fv, thres, result)

    def check_result(self, fv: Vector, thres: int, result: RouteResult) -> dict[str, Any]:
        """The ``check`` reply map for ``result`` (tallies re-verified now; each match
        also carries the matched GUID's own ``features``, which the agent needs to vote
        ham on boilerplate, ``p2pspam.defences.pipeline.ham_vote_vector``)."""
        now = now_ms()
        matches = []
        for m in result.matches:
            if m.record is not None:
                summary, _ = tally_record(m.record.votes, self.verifier, now)
                tally = summary.as_dict()
            else:
                tally = {"spam": 0, "ham": 0, "voters": 0, "last_vote_ms": None}
            matches.append(
                {
                    "guid": m.guid,
                    "overlap": m.overlap,
                    "matched": list(m.matched),
                    "discounted": list(m.discounted),
                    "features": list(m.features),
                    "tally": tally,
                    "selftest": False,
                }
            )
        selftest = selftest_vector()
        if fv.namespace == selftest.namespace:
            shared = sorted(set(fv.features) & set(selftest.features))
            if len(shared) >= thres:
                matches.insert(
                    0,
                    {
                        "guid": selftest.guid,
                        "overlap": len(shared),
                        "matched": shared,
                        "discounted": [],
                        "features": list(selftest.features),
                        "tally": {"spam": 1, "ham": 0, "voters": 0, "last_vote_ms": None},
                        "selftest": True,
                    },
                )
        return {"matches": matches, "rounds": result.rounds}

    def _fresh_vote(self, args: dict[str, Any]) -> Any:
        data = _arg(args, "vote", wire.blob, 8192, "vote")
        try:
            return self.fresh_votes.verify(data, now_ms())
        except VoteRejected as exc:
            self.node.protocol.counters[f"vote_rejected.{exc.reason}"] += 1
            raise ApiError("vote_rejected", str(exc), exc.reason) from None

    async def op_publish(self, args: dict[str, Any]) -> dict[str, Any]:
        """``publish``: verify a signed vote and publish its vector with the vote."""
        vote = self._fresh_vote(args)
        if vote.verdict == "withdraw":
            return await self._withdraw(vote)
        now = now_ms()
        ttl = self.settings.node.entry_ttl_ms
        votes = {vote.user_id: (vote.timestamp_ms, vote.encoded)}
        record = new_record(vote.guid, vote.namespace, vote.features, now, ttl, votes)
        stored = await self.node.publish_approx(
            Vector(vote.namespace, vote.features), vote.guid, record
        )
        return {"guid": vote.guid, "stored": stored}

    async def op_unpublish(self, args: dict[str, Any]) -> dict[str, Any]:
        """``unpublish``: record a signed withdrawal; unpublish the vector when no live
        spam or ham vote remains."""
        vote = self._fresh_vote(args)
        if vote.verdict != "withdraw":
            raise _bad(f"unpublish needs a 'withdraw' vote, got {vote.verdict!r}")
        return await self._withdraw(vote)

    async def _withdraw(self, vote: Any) -> dict[str, Any]:
        now = now_ms()
        ttl = self.settings.node.entry_ttl_ms
        votes = {vote.user_id: (vote.timestamp_ms, vote.encoded)}
        record = new_record(vote.guid, vote.namespace, vote.features, now, ttl, votes)
        stored = await self.node.put_record(record)
        merged = await self.node.get_object(vote.guid)
        remaining = 0
        if merged is not None:
            summary, _ = tally_record(merged.votes, self.verifier, now)
            remaining = summary.voters
        if remaining == 0:
            stored += await self.node.unpublish_approx(
                Vector(vote.namespace, vote.features), vote.guid
            )
        return {"guid": vote.guid, "stored": stored}

    async def op_status(self, args: dict[str, Any]) -> dict[str, Any]:
        """``status``: identity, contacts, records, counters, uptime."""
        node = self.node
        listen = node.listen_address or ("", 0)
        api_counters = dict(self.api.counters) if self.api is not None else {}
        wire_counters = node.counters
        requests = {k[len("op.") :]: v for k, v in api_counters.items() if k.startswith("op.")}
        rpcs = {k[len("rpc.") :]: v for k, v in wire_counters.items() if k.startswith("rpc.")}
        drops = {k[len("drop.") :]: v for k, v in wire_counters.items() if k.startswith("drop.")}
        for k, v in api_counters.items():
            if k.startswith("drop."):
                drops[f"api.{k[len('drop.') :]}"] = v
        revocations = self.verifier.revocations
        return {
            "node_id": node.node_id.hex(),
            "listen": f"{listen[0]}:{listen[1]}",
            "api": None if self.api_address is None else "{}:{}".format(*self.api_address),
            "contacts": len(node.contacts()),
            "records": self.store.counts(),
            "counters": {
                "requests": requests,
                "rpcs": rpcs,
                "drops": drops,
                "other": {
                    k: v
                    for k, v in {**wire_counters, **api_counters}.items()
                    if not k.startswith(("op.", "rpc.", "drop."))
                },
            },
            "revocation_sequence": None if revocations is None else revocations.sequence,
            "uptime_s": round(time.monotonic() - self.started, 3),
        }

    async def op_revocations(self, args: dict[str, Any]) -> dict[str, Any]:
        """``revocations``: adopt a newer signed revocation list and gossip it."""
        signed = _arg(args, "list", wire.blob, 1 << 20, "list")
        return {"accepted": self.node.accept_revocations(signed, gossip=True)}


async def run_until_stopped(peer: Peer, stop: asyncio.Event) -> None:
    """Start ``peer``, wait for ``stop``, then stop it cleanly."""
    await peer.start()
    try:
        await stop.wait()
    finally:
        await peer.stop()

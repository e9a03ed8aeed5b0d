"""The approximate DOLR on the ``kademlia`` DHT: one peer's network side.

:class:`AdolrNode` owns a ``kademlia.network.Server`` whose protocol is
:class:`~p2pspam.dht.protocol.HardenedProtocol`, registers the ADOLR RPCs of
:mod:`p2pspam.dht.messages` on it, and drives lookups with the sans-IO
:class:`~p2pspam.dht.lookup.Lookup`. Records live in a ``p2pspam.peer.store.Store``
(or anything with the ``ApproxIndex`` interface).

Publication (:meth:`AdolrNode.publish_approx`) stores the ``(GUID, vector)`` entry at the
``replicas`` nodes closest to each feature key, *with a copy of the object record*, and
the record at the nodes closest to the GUID; the publisher keeps its own copy (it is a
"server" of the object, as in Tapestry) and leaves path pointers to itself on the other
nodes of each feature lookup path.

Routing (:meth:`AdolrNode.route_approx`) is in-network evaluation (SpamWatch 3.3): each
``find_approx`` carries the whole vector; a node holding feature objects of any of its
features evaluates the overlap locally and answers with the matching GUIDs and their
records (co-located copies, or fetched in one hop from the GUID's nodes); a node holding
only a path pointer for the key forwards the query to the pointed node once. A node
that already resolved a query id answers again without records (duplicate dropped).

Boilerplate discounts (``NodeConfig.max_guids``, ``NodeConfig.ham_guids``, the defaults of
``p2pspam.defences``) apply where a query is evaluated (:meth:`AdolrNode.evaluate_held`):
a feature whose object holds more than ``max_guids`` distinct GUIDs, or at least
``ham_guids`` GUIDs whose tally (the verified votes of the co-located record held here)
the ``Policy`` decides ham, does not count (:mod:`p2pspam.dht.discount`).

- TTL = maximum number of lookup rounds per feature lookup. With a TTL, all features
  are queried and the first answer with matches ends the query.
- Without a TTL, the lookup is exhaustive and deterministic: ``N - thres + 1`` features
  are queried (any match shares at least one of them, by pigeonhole), each lookup runs
  until a node holding *that* feature's object answers or the ``replicas`` closest nodes
  were all asked, so every match is found.
- The client keeps a vector -> GUID cache (SpamWatch optimisation 1): a repeated query
  goes straight to the cached GUIDs' records.

Received votes are never trusted: every vote in a record arriving from a peer is checked
with ``VoteVerifier.verify(..., replica=True)`` before the record is merged; votes that
fail are dropped and counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import msgpack
from kademlia.network import Server
from kademlia.node import Node

from p2pspam.adolr.keys import feature_key
from p2pspam.adolr.query import Match, check_query, evaluate, is_discounted
from p2pspam.adolr.records import (
    FeatureObject,
    ObjectRecord,
    VectorLike,
    merge_records,
    new_record,
    object_to_wire,
    published_entry,
    tombstone_entry,
)
from p2pspam.auth.policy import Policy
from p2pspam.auth.tally import live_record_votes, tally_record
from p2pspam.auth.verify import VoteRejected, VoteVerifier
from p2pspam.auth.votes import decode_vote
from p2pspam.defences import DEFAULT_HAM_GUIDS, DEFAULT_MAX_GUIDS
from p2pspam.dht import messages, wire
from p2pspam.dht.discount import HamGuids, ham_discounted_objects
from p2pspam.dht.federation import Federation, confirm_args, hello_args
from p2pspam.dht.handlers import RpcHandlers
from p2pspam.dht.lookup import Lookup
from p2pspam.dht.messages import RoutedMatch, fit_record
from p2pspam.dht.protocol import HardenedProtocol, ProtocolLimits
from p2pspam.dht.replication import Replication, gather_limited

log = logging.getLogger(__name__)

Address = tuple[str, int]
DAY_MS = 24 * 3600 * 1000


@dataclass(frozen=True, slots=True)
class NodeConfig:
    """Tunables of the network side of a peer (all have working defaults)."""

    ksize: int = 20
    alpha: int = 3
    replicas: int = 8
    entry_ttl_ms: int = 30 * DAY_MS
    tombstone_ttl_ms: int = 60 * DAY_MS
    pointer_ttl_ms: int = 1 * DAY_MS
    republish_interval_s: float = 3600.0
    expire_interval_s: float = 300.0
    save_interval_s: float = 60.0
    dedupe_ttl_s: float = 30.0
    cache_ttl_s: float = 60.0
    cache_size: int = 4096
    handoff_max_keys: int = 512
    handoff_queue: int = 64
    limits: ProtocolLimits = field(default_factory=ProtocolLimits)
    # boilerplate discounts at the evaluating node: more than ``max_guids`` distinct GUIDs
    # in a feature object, or at least ``ham_guids`` ham-decided GUIDs (None: rule off)
    max_guids: int = DEFAULT_MAX_GUIDS
    ham_guids: int | None = DEFAULT_HAM_GUIDS


@dataclass(frozen=True, slots=True)
class RouteResult:
    """What a query found: matches (best first) and the lookup rounds it took (the round
    of the first answer with a match; else the most rounds any feature lookup used)."""

    matches: list[RoutedMatch]
    rounds: int
    cached: bool = False
    # sequential request rounds on the querier's critical path: the feature lookups'
    # rounds plus the rounds of any object lookup made after them
    round_trips: int = 0


def now_ms() -> int:
    """Wall-clock milliseconds (records carry absolute expiry times)."""
    return time.time_ns() // 1_000_000


def _int_id(node_id: bytes) -> int:
    return int.from_bytes(node_id, "big")


def _bytes_id(long_id: int) -> bytes:
    return long_id.to_bytes(20, "big")


def _says_ham(encoded: bytes) -> bool:
    """True when an (unverified) encoded vote's verdict is ham."""
    try:
        return decode_vote(encoded).verdict == "ham"
    except Exception:  # undecodable: verification would drop it too
        return False


def merge_matches(a: RoutedMatch, b: RoutedMatch) -> RoutedMatch:
    """Merge two nodes' answers for one GUID: a feature either node discounted does not
    count (the shared features are the same at every node: entries carry whole vectors);
    the records are merged."""
    discounted = set(a.discounted) | set(b.discounted)
    matched = (set(a.matched) | set(b.matched)) - discounted
    if a.record is None or b.record is None:
        record = a.record or b.record
    else:
        record = merge_records(a.record, b.record)
    return RoutedMatch(
        a.guid,
        len(matched),
        tuple(sorted(matched)),
        tuple(sorted(discounted)),
        a.features,
        record,
    )


class PeerServer(Server):
    """``kademlia.network.Server`` running the hardened protocol."""

    protocol_class = HardenedProtocol

    def __init__(self, limits: ProtocolLimits, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limits = limits

    def _create_protocol(self) -> HardenedProtocol:
        return self.protocol_class(self.node, self.storage, self.ksize, self.limits)


class _Expiring(OrderedDict):
    """A bounded map whose items expire ``ttl`` seconds after insertion."""

    def __init__(self, ttl: float, size: int) -> None:
        super().__init__()
        self.ttl = ttl
        self.size = size

    def put(self, key: Any, value: Any, now: float) -> None:
        self.pop(key, None)
        self[key] = (now + self.ttl, value)
        while len(self) > self.size:
            self.popitem(last=False)

    def fresh(self, key: Any, now: float) -> Any:
        item = self.get(key)
        if item is None:
            return None
        if item[0] < now:
            del self[key]
            return None
        return item[1]


class AdolrNode(RpcHandlers, Replication):
    """One peer's approximate DOLR over the network (see the module docstring)."""

    def __init__(
        self,
        store: Any,
        verifier: VoteVerifier,
        config: NodeConfig | None = None,
        node_id: bytes | None = None,
        clock: Callable[[], int] = now_ms,
        federation: Federation | None = None,
    ) -> None:
        self.store = store
        self.verifier = verifier
        self.config = config or NodeConfig()
        self.clock = clock
        self.federation = federation
        if federation is not None:
            node_id = federation.node_id  # the authority assigns it
            if store.get_meta("node_id") != node_id:
                store.set_meta("node_id", node_id)
        if node_id is None:
            node_id = store.get_meta("node_id")
        if node_id is None:
            node_id = os.urandom(20)
            store.set_meta("node_id", node_id)
        self.server = PeerServer(
            self.config.limits, ksize=self.config.ksize, alpha=self.config.alpha, node_id=node_id
        )
        self.node_id = node_id
        self.listen_address: Address | None = None
        self._resolved = _Expiring(self.config.dedupe_ttl_s, 8192)
        self._cache = _Expiring(self.config.cache_ttl_s, self.config.cache_size)
        self.policy = Policy()
        # (guid, the record's (user, timestamp) pairs) -> decided ham; cleared when a
        # revocation list is adopted
        self._ham = _Expiring(self.config.cache_ttl_s, self.config.cache_size)
        self._handoff: asyncio.Queue[Node] = asyncio.Queue(self.config.handoff_queue)
        self._background: list[asyncio.Task[Any]] = []
        self.started_at = time.monotonic()

    # -- lifecycle -------------------------------------------------------------------

    @property
    def protocol(self) -> HardenedProtocol:
        """The running protocol (after :meth:`start`)."""
        proto = self.server.protocol
        if proto is None:
            raise RuntimeError("the node is not listening; call start() first")
        return proto

    @property
    def counters(self) -> dict[str, int]:
        """Wire counters: requests by RPC, drops by reason, datagrams and bytes."""
        return dict(self.protocol.counters)

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> Address:
        """Listen on UDP ``host:port`` and start the background jobs; return the address."""
        await self.server.listen(port, host)
        proto = self.protocol
        proto.app = self
        reg = proto.register
        if self.federation is not None:
            proto.federation = self.federation
            reg("hello", hello_args, self.federation.rpc_hello)
            reg("confirm", confirm_args, self.federation.rpc_confirm)
        reg("store_batch", messages.store_batch_args, self._rpc_store_batch)
        reg("store_pointer", messages.store_pointer_args, self._rpc_store_pointer)
        reg("find_approx", messages.find_approx_args, self._rpc_find_approx)
        reg("find_object", messages.two_ids, self._rpc_find_object)
        reg("get_feature", messages.two_ids, self._rpc_get_feature)
        reg("revocations", messages.revocations_args, self._rpc_revocations)
        sock = self.server.transport.get_extra_info("sockname")
        self.listen_address = (sock[0], sock[1])
        loop = asyncio.get_running_loop()
        for job in (self._handoff_worker, self._republish_loop, self._expire_loop):
            self._background.append(loop.create_task(job()))
        return self.listen_address

    async def stop(self) -> None:
        """Save routing state, stop background jobs and close the socket."""
        with contextlib.suppress(Exception):
            self.save_routing_state()
        for task in self._background:
            task.cancel()
        for task in self._background:
            with contextlib.suppress(BaseException):
                await task
        self._background.clear()
        if self.server.protocol is not None:
            self.server.protocol.close_tasks()
        self.server.stop()

    def contacts(self) -> list[Node]:
        """Every contact in the routing table."""
        return [n for b in self.protocol.router.buckets for n in b.get_nodes()]

    def save_routing_state(self) -> None:
        """Persist the routing contacts (reused to bootstrap after a restart)."""
        rows = [[n.id, n.ip, n.port] for n in self.contacts()[:200]]
        self.store.set_meta("routing_state", msgpack.packb(rows, use_bin_type=True))

    def saved_contacts(self) -> list[Address]:
        """Addresses saved by :meth:`save_routing_state` (empty if none or unreadable)."""
        raw = self.store.get_meta("routing_state")
        if raw is None:
            return []
        try:
            rows = wire.contacts(wire.unpack(raw)[:200])
        except (wire.WireError, TypeError):
            return []
        return [(ip, port) for _, ip, port in rows]

    async def bootstrap(self, addresses: Iterable[Address]) -> int:
        """Ping ``addresses`` and look up our own id to fill the routing table; return
        the number of contacts known afterwards."""
        proto = self.protocol

        async def ping(addr: Address) -> None:
            ok, result = await proto.call(addr, "ping", self.node_id)
            if ok and isinstance(result, bytes) and len(result) == 20 and result != self.node_id:
                proto.welcome_if_new(Node(result, addr[0], addr[1]))

        await asyncio.gather(*(ping(a) for a in set(addresses) if a != self.listen_address))
        await self._node_lookup(self.node_id)
        await self.refresh_buckets()
        return len(self.contacts())

    async def refresh_buckets(self) -> None:
        """Look up a random id in every bucket's range (the Kademlia join step): without
        it a node may never learn of whole subtrees and answer lookups for their keys as
        if it were the closest."""
        buckets = list(self.protocol.router.buckets)
        targets = [
            random.randint(b.range[0], min(b.range[1], (1 << 160) - 1)).to_bytes(20, "big")
            for b in buckets
        ]
        await gather_limited((self._find_nodes(t) for t in targets), 4)

    # -- lookups ---------------------------------------------------------------------

    def _seeds(self, key: bytes, exclude: Iterable[bytes] = ()) -> list[tuple[int, Address]]:
        skip = set(exclude)
        found = self.protocol.router.find_neighbors(Node(key), k=self.config.ksize)
        return [(n.long_id, (n.ip, n.port)) for n in found if n.id not in skip]

    def _learn(self, closer: list[tuple[bytes, str, int]]) -> list[tuple[int, Address]]:
        return [(_int_id(nid), (ip, port)) for nid, ip, port in closer if nid != self.node_id]

    async def _drive(
        self,
        lookup: Lookup[Address],
        rpc: str,
        args: Callable[[bool], tuple[Any, ...]],
        parse: Callable[[int, Any], tuple[list[tuple[bytes, str, int]], Any]],
        stop: asyncio.Event | None = None,
    ) -> Lookup[Address]:
        """Run ``lookup`` to completion with RPC ``rpc``; ``parse(node, result)`` returns
        ``(closer contacts, answer or None)``."""
        proto = self.protocol

        async def ask(long_id: int, addr: Address, first: bool) -> None:
            ok, result = await proto.call(addr, rpc, self.node_id, *args(first))
            node = Node(_bytes_id(long_id), addr[0], addr[1])
            if not ok:
                lookup.on_failure(long_id)
                proto.router.remove_contact(node)
                return
            try:
                closer, answer = parse(long_id, result)
            except wire.WireError:
                proto.drop("bad_reply")
                lookup.on_failure(long_id)
                return
            proto.welcome_if_new(node)
            lookup.on_response(long_id, self._learn(closer), answer)

        while not lookup.done and not (stop is not None and stop.is_set()):
            batch = lookup.next_requests()
            if not batch:
                break
            await asyncio.gather(*(ask(n, a, i == 0) for i, (n, a) in enumerate(batch)))
        return lookup

    @property
    def window(self) -> int:
        """How many closest nodes a lookup tracks: ``max(ksize, replicas)`` (a lookup
        narrower than the routing buckets misses the true closest nodes)."""
        return max(self.config.ksize, self.config.replicas)

    async def _node_lookup(self, key: bytes) -> list[tuple[int, Address]]:
        """The ``replicas`` live nodes closest to ``key``."""
        lookup = await self._find_nodes(key)
        return lookup.closest(self.config.replicas)

    def _lookup(self, key: bytes, k: int, ttl: int | None = None) -> Lookup[Address]:
        """A lookup toward ``key`` seeded from the routing table (never asking itself)."""
        return Lookup(
            _int_id(key),
            self._seeds(key),
            k=k,
            alpha=self.config.alpha,
            ttl=ttl,
            exclude=[_int_id(self.node_id)],
        )

    async def _find_nodes(self, key: bytes) -> Lookup[Address]:
        lookup = self._lookup(key, self.window)

        def parse(_: int, result: Any) -> tuple[list[tuple[bytes, str, int]], None]:
            return wire.contacts(result), None

        return await self._drive(lookup, "find_node", lambda _first: (key,), parse)

    # -- publication -----------------------------------------------------------------

    async def _store_at(
        self,
        targets: list[tuple[int, Address]],
        objects: list[tuple[bytes, FeatureObject]],
        records: list[ObjectRecord],
    ) -> int:
        wobjects = [[k, object_to_wire(o)] for k, o in objects]
        wrecords = [fit_record(r) for r in records]

        async def one(addr: Address) -> bool:
            ok, result = await self.protocol.call(
                addr, "store_batch", self.node_id, wobjects, wrecords
            )
            return ok and type(result) is int

        acks = await asyncio.gather(*(one(a) for _, a in targets))
        return sum(acks)

    async def _publish_feature(
        self,
        key: bytes,
        obj: FeatureObject,
        record: ObjectRecord | None,
        pointers: bool,
        wide: bool = False,
    ) -> int:
        lookup = await self._find_nodes(key)
        # Tombstones go to the whole lookup window: hand-offs may have copied the entry
        # to nodes just outside the replica set, and a stale copy must not answer.
        closest = lookup.closest(self.window if wide else self.config.replicas)
        stored = await self._store_at(closest, [(key, obj)], [record] if record else [])
        if pointers:
            near = {n for n, _ in closest}
            path = [a for n, a in lookup.responded() if n not in near]
            await asyncio.gather(
                *(self.protocol.call(a, "store_pointer", self.node_id, [key]) for a in path)
            )
        return stored

    async def _publish_record(self, record: ObjectRecord) -> int:
        closest = await self._node_lookup(record.guid)
        return await self._store_at(closest, [], [record])

    async def publish_approx(
        self, fv: VectorLike, guid: bytes, record: ObjectRecord | None = None
    ) -> int:
        """Publish ``guid`` under vector ``fv`` with its object record (votes must be
        verified by the caller); return how many remote replicas acknowledged a store."""
        now = self.clock()
        entry = published_entry(guid, fv.namespace, fv.features, now, self.config.entry_ttl_ms)
        if record is None:
            ttl = self.config.entry_ttl_ms
            record = new_record(guid, entry.namespace, entry.features, now, ttl)
        obj = FeatureObject({guid: entry})
        with self.store.transaction():
            for f in entry.features:
                self.store.add_entry(feature_key(entry.namespace, f), entry)
            self.store.put_record(record)
        # A cached vector -> GUIDs answer may now miss this GUID: forget them all (the
        # cache only spares repeated checks; correctness comes from the network).
        self._cache.clear()
        jobs = [
            self._publish_feature(feature_key(entry.namespace, f), obj, record, pointers=True)
            for f in entry.features
        ]
        jobs.append(self._publish_record(record))
        return sum(await asyncio.gather(*jobs))

    async def put_record(self, record: ObjectRecord) -> int:
        """Merge ``record`` (verified votes) here and at the nodes closest to its GUID and
        to each of its features (the co-located copies); return the acknowledgements."""
        self.store.put_record(record)
        jobs = [self._publish_record(record)]
        for f in record.features:
            key = feature_key(record.namespace, f)
            jobs.append(self._store_record_near(key, record))
        return sum(await asyncio.gather(*jobs))

    async def _store_record_near(self, key: bytes, record: ObjectRecord) -> int:
        closest = await self._node_lookup(key)
        return await self._store_at(closest, [], [record])

    async def unpublish_approx(self, fv: VectorLike, guid: bytes) -> int:
        """Merge a tombstone for ``guid`` into every feature object of ``fv`` (here and at
        the replicas); return how many remote replicas acknowledged."""
        now = self.clock()
        entry = tombstone_entry(guid, fv.namespace, fv.features, now, self.config.tombstone_ttl_ms)
        obj = FeatureObject({guid: entry})
        with self.store.transaction():
            for f in entry.features:
                self.store.add_entry(feature_key(entry.namespace, f), entry)
        for f in entry.features:
            self._cache.pop((entry.namespace, f), None)
        self._cache.clear()
        jobs = [
            self._publish_feature(
                feature_key(entry.namespace, f), obj, None, pointers=False, wide=True
            )
            for f in entry.features
        ]
        return sum(await asyncio.gather(*jobs))

    async def get_object(self, guid: bytes) -> ObjectRecord | None:
        """Return the object record of ``guid`` (local copy merged with the first remote
        replica found), or None."""
        record, _ = await self._fetch_object(guid)
        return record

    async def _fetch_object(self, guid: bytes) -> tuple[ObjectRecord | None, int]:
        """The record of ``guid`` and the lookup rounds it took."""
        local = self.store.get_object(guid)
        lookup = self._lookup(guid, self.config.replicas)

        def parse(_: int, result: Any) -> tuple[list[tuple[bytes, str, int]], Any]:
            closer, rec = messages.object_reply(result)
            if rec is not None and rec.guid != guid:
                raise wire.bad("record for another GUID")
            return closer, rec

        await self._drive(lookup, "find_object", lambda _first: (guid,), parse)
        remote = self.verified_record(lookup.answer) if lookup.answer is not None else None
        if local is None:
            return remote, lookup.rounds
        return (local if remote is None else merge_records(local, remote)), lookup.rounds

    # -- routing ---------------------------------------------------------------------

    def _plan(self, namespace: str, features: tuple[int, ...], thres: int, exhaustive: bool):
        """Which features to look up: all of them with a TTL; without, ``N - thres + 1``
        (any match shares one), preferring those whose objects are held here."""
        if not exhaustive:
            return list(features)
        held = self.store.feature_objects_for(namespace, features)
        order = sorted(features, key=lambda f: (f not in held, f))
        return order[: len(features) - thres + 1]

    async def route_approx(
        self,
        fv: VectorLike,
        thres: int,
        msg: str = "tally",
        ttl: int | None = None,
        use_cache: bool = True,
    ) -> RouteResult:
        """Find every GUID whose vector shares at least ``thres`` features with ``fv``
        (``0 < thres <= len(fv)``, else ParameterError) and return it with its object
        record (``msg`` "tally": the votes, re-verified by the caller's tally)."""
        features = tuple(sorted(check_query(fv.features, thres)))
        namespace = fv.namespace
        feature_key(namespace, features[0])  # raises ParameterError for a bad namespace
        if msg != "tally":
            raise ValueError(f"unknown message {msg!r}; peers deliver 'tally' only")
        loop = asyncio.get_running_loop()
        cache_key = (namespace, features, thres)
        if use_cache:
            guids = self._cache.fresh(cache_key, loop.time())
            if guids:
                return await self._from_cache(guids)
        exhaustive = ttl is None
        now = self.clock()
        qid = os.urandom(8)
        found: dict[bytes, RoutedMatch] = {}
        boilerplate: set[int] = set()  # query features some evaluating node discounted

        def collect(matches: Iterable[RoutedMatch]) -> None:
            for m in matches:
                old = found.get(m.guid)
                found[m.guid] = m if old is None else merge_matches(old, m)

        local = self.store.feature_objects_for(namespace, features)
        if local:
            collect(self._local_matches(features, thres, namespace, local, now, boilerplate))
        stop = asyncio.Event()
        first_answer: list[int] = []
        plan = [f for f in self._plan(namespace, features, thres, exhaustive) if f not in local]
        if found and not exhaustive:
            plan = []

        async def one(feature: int) -> Lookup[Address]:
            key = feature_key(namespace, feature)
            lookup = self._lookup(key, self.config.replicas, ttl)

            def parse(_: int, result: Any) -> tuple[list[tuple[bytes, str, int]], Any]:
                reply = messages.approx_reply(result)
                if feature in reply.discounted:  # a node vouches for the key it was asked
                    boilerplate.add(feature)
                routed = [self._routed(m) for m in reply.matches]
                collect(routed)
                if routed:
                    first_answer.append(lookup.rounds)
                    if not exhaustive:
                        stop.set()
                        return reply.closer, routed
                return reply.closer, (routed if reply.holds_key else None)

            return await self._drive(
                lookup,
                "find_approx",
                lambda first: (qid, key, namespace, list(features), thres, True, first),
                parse,
                stop,
            )

        lookups = await asyncio.gather(*(one(f) for f in plan))
        missing = [g for g, m in found.items() if m.record is None]
        object_rounds = 0
        if missing:
            fetched = await asyncio.gather(*(self._fetch_object(g) for g in missing))
            object_rounds = max(r for _, r in fetched)
            records = [rec for rec, _ in fetched]
            for guid, rec in zip(missing, records, strict=True):
                if rec is not None:
                    old = found[guid]
                    found[guid] = RoutedMatch(
                        guid, old.overlap, old.matched, old.discounted, old.features, rec
                    )
        # a feature discounted by any evaluating node does not count (nodes know different
        # feature objects and records), so a merged match may fall below THRES
        now = self.clock()
        matches = sorted(
            (
                m
                for m in (self._discount(m, boilerplate, now) for m in found.values())
                if m.overlap >= thres
            ),
            key=lambda m: (-m.overlap, m.guid),
        )
        if first_answer:
            rounds = min(first_answer)
        else:
            rounds = max((lk.rounds for lk in lookups), default=0)
        if matches and use_cache:
            self._cache.put(cache_key, [(m.guid, m) for m in matches], loop.time())
        lookup_rounds = max((lk.rounds for lk in lookups), default=0)
        return RouteResult(matches, rounds, round_trips=lookup_rounds + object_rounds)

    async def _from_cache(self, cached: list[tuple[bytes, RoutedMatch]]) -> RouteResult:
        fetched = await asyncio.gather(*(self._fetch_object(g) for g, _ in cached))
        records = [rec for rec, _ in fetched]
        out = []
        for (_, m), rec in zip(cached, records, strict=True):
            out.append(replace(m, record=rec))
        return RouteResult(out, 0, cached=True, round_trips=max(r for _, r in fetched))

    def _discount(self, m: RoutedMatch, boilerplate: set[int], now: int) -> RoutedMatch:
        """``m`` without the features that some evaluating node discounted (not for a
        GUID whose record the policy decides ham: it keeps its own match)."""
        if not boilerplate.intersection(m.matched) or self.is_ham(m.guid, now, m.record):
            return m
        matched = tuple(f for f in m.matched if f not in boilerplate)
        discounted = tuple(sorted(set(m.discounted) | (boilerplate & set(m.matched))))
        return replace(m, overlap=len(matched), matched=matched, discounted=discounted)

    def _routed(self, m: RoutedMatch) -> RoutedMatch:
        """``m`` with only the votes of its record that verify."""
        return m if m.record is None else replace(m, record=self.verified_record(m.record))

    def _local_matches(
        self,
        features: tuple[int, ...],
        thres: int,
        namespace: str,
        objects: dict[int, FeatureObject],
        now: int,
        boilerplate: set[int],
    ) -> list[RoutedMatch]:
        found, discounted = self.evaluate_held(features, thres, objects, namespace, now)
        boilerplate.update(discounted)
        return [
            RoutedMatch(
                m.guid,
                m.overlap,
                m.matched_features,
                m.discounted_features,
                m.features,
                self.store.get_object(m.guid),
            )
            for m in found
        ]

    # -- naive baseline ---------------------------------------------------------------

    async def route_naive(self, fv: VectorLike, thres: int) -> RouteResult:
        """The basic ADOLR of SpamWatch 3.2, for comparison: fetch every feature object,
        count GUID occurrences here, then fetch each matching GUID's record."""
        features = tuple(sorted(check_query(fv.features, thres)))
        namespace = fv.namespace

        async def fetch(feature: int) -> tuple[Lookup[Address], FeatureObject | None]:
            key = feature_key(namespace, feature)
            lookup = self._lookup(key, self.config.replicas)

            def parse(_: int, result: Any) -> tuple[list[tuple[bytes, str, int]], Any]:
                return messages.feature_reply(key, result)

            await self._drive(lookup, "get_feature", lambda _first: (key,), parse)
            return lookup, lookup.answer

        fetched = await asyncio.gather(*(fetch(f) for f in features))
        objects = {f: obj for f, (_, obj) in zip(features, fetched, strict=True) if obj}
        found, _ = self.evaluate_held(features, thres, objects, namespace, self.clock())
        got = await asyncio.gather(*(self._fetch_object(m.guid) for m in found))
        records = [rec for rec, _ in got]
        rounds = max((lk.rounds for lk, _ in fetched), default=0)
        object_rounds = max((r for _, r in got), default=0)
        return RouteResult(
            [
                RoutedMatch(
                    m.guid, m.overlap, m.matched_features, m.discounted_features, m.features, r
                )
                for m, r in zip(found, records, strict=True)
            ],
            rounds,
            round_trips=rounds + object_rounds,
        )

    # -- discounts -------------------------------------------------------------------

    def evaluate_held(
        self,
        features: Iterable[int],
        thres: int,
        objects: dict[int, FeatureObject],
        namespace: str,
        now: int,
    ) -> tuple[list[Match], frozenset[int]]:
        """In-network evaluation of a query on the feature objects ``objects`` known
        here, with both boilerplate discounts (see the module docstring); also return
        the query features discounted here."""
        features = tuple(features)
        ham = HamGuids(lambda guid: self.is_ham(guid, now))
        discounted = ham_discounted_objects(
            features,
            objects,
            namespace,
            ham,
            self.config.ham_guids,
            now,
            lambda guid: self.voter_sets(guid, now),
            self.policy,
        )
        boilerplate = frozenset(
            f
            for f, obj in discounted.items()
            if f in features and is_discounted(obj, self.config.max_guids, now)
        )
        found = evaluate(
            features,
            thres,
            discounted,
            namespace=namespace,
            now_ms=now,
            max_guids=self.config.max_guids,
        )
        if len(discounted) == len(objects) and all(
            discounted[f] is obj for f, obj in objects.items()
        ):
            return found, boilerplate
        # A GUID decided ham keeps its own match (its tally stays visible: a changed
        # mind, a rescued message); the ham-vote rule discounts its features for others.
        seen = {m.guid for m in found}
        found += [
            m
            for m in evaluate(
                features,
                thres,
                objects,
                namespace=namespace,
                now_ms=now,
                max_guids=self.config.max_guids,
            )
            if m.guid not in seen and m.guid in ham
        ]
        found.sort(key=lambda m: (-m.overlap, m.guid))
        return found, boilerplate

    def is_ham(self, guid: bytes, now: int, record: ObjectRecord | None = None) -> bool:
        """True when the policy decides ``guid`` ham on the verified votes of
        ``record`` (default: its object record held here; False without one)."""
        if record is None:
            record = self.store.get_object(guid)
        if record is None or not any(_says_ham(encoded) for _, encoded in record.votes.values()):
            return False  # no ham vote at all: no need to verify signatures
        key = (guid, tuple(sorted((user, ts) for user, (ts, _) in record.votes.items())))
        loop_time = time.monotonic()
        known = self._ham.fresh(key, loop_time)
        if known is None:
            summary, _ = tally_record(record.votes, self.verifier, now)
            known = self.policy.decide(summary) == "ham"
            self._ham.put(key, known, loop_time)
        return known

    def voter_sets(self, guid: bytes, now: int) -> tuple[frozenset[str], frozenset[str]]:
        """Return the users whose verified live vote on ``guid`` (its object record held
        here) is spam, and those whose is ham; empty without a record."""
        record = self.store.get_object(guid)
        if record is None or not record.votes:
            return frozenset(), frozenset()
        live, _ = live_record_votes(record.votes, self.verifier, now)
        return live.users("spam"), live.users("ham")

    # -- votes -----------------------------------------------------------------------

    def verified_record(self, record: ObjectRecord) -> ObjectRecord:
        """Return ``record`` with only the votes that verify (as replicas) and belong to
        it; every other vote is dropped and counted."""
        now = self.clock()
        kept: dict[str, tuple[int, bytes]] = {}
        features = set(record.features)
        for user, (ts, encoded) in record.votes.items():
            try:
                vote = self.verifier.verify(encoded, now, replica=True)
            except VoteRejected as exc:
                self.protocol.counters[f"vote_rejected.{exc.reason}"] += 1
                continue
            if (
                vote.user_id != user
                or vote.timestamp_ms != ts
                or vote.guid != record.guid
                or set(vote.features) != features
            ):
                self.protocol.counters["vote_rejected.mismatch"] += 1
                continue
            kept[user] = (ts, encoded)
        if len(kept) == len(record.votes):
            return record
        return ObjectRecord(record.guid, record.namespace, record.features, kept, record.expires_ms)

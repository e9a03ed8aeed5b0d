"""The hardened ``KademliaProtocol``: strict decoding, rate limits, validated RPCs.

The stock ``rpcudp`` path decodes every datagram with a pure-Python msgpack, spawns a task
per datagram without limit, raises on malformed requests and dispatches any ``rpc_*``
name with unchecked arguments. :class:`HardenedProtocol` replaces that path:

- datagrams are decoded by :mod:`p2pspam.dht.wire` (C msgpack, explicit limits);
- each source address has a token bucket; over it, datagrams are dropped;
- at most ``max_inflight_per_source`` requests per source address and
  ``max_inflight`` in total are handled at once; more are dropped;
- only RPCs listed in :attr:`HardenedProtocol.RPCS` exist, and each has a validator
  that checks every argument before the handler sees it;
- responses are accepted only for an outstanding request, from the address it was
  sent to;
- in a closed federation (``p2pspam.dht.federation``), requests are sent to and served
  from certified peers only;
- every drop is counted by reason in :attr:`HardenedProtocol.counters`, never raised;
- a request's sender joins the routing table only after answering a ping (no table
  poisoning by spoofed sources);
- ``welcome_if_new`` no longer sends every stored key to every new contact: it adds the
  contact and asks the application (``app.on_new_contact``) for a bounded, batched
  hand-off.

The application (the ADOLR node, :mod:`p2pspam.dht.node`) registers further RPCs with
:meth:`HardenedProtocol.register`.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import os
import socket
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kademlia.node import Node
from kademlia.protocol import KademliaProtocol
from kademlia.routing import RoutingTable

from p2pspam.dht import wire

log = logging.getLogger(__name__)

Address = tuple[str, int]
Validator = Callable[[list[Any]], tuple[Any, ...]]
Handler = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class ProtocolLimits:
    """Limits of one peer's wire protocol."""

    rpc_timeout_s: float = 5.0
    rate_per_source: float = 500.0  # datagrams per second
    burst_per_source: float = 1000.0
    max_inflight_per_source: int = 32
    max_inflight: int = 512
    max_outgoing_per_peer: int = 16
    # Requests awaiting a reply, over all peers: replies to a burst must fit in the
    # socket's receive buffer, or the kernel drops them silently.
    max_outgoing: int = 64
    max_verifications: int = 64
    receive_buffer: int = 4 << 20


class App(Protocol):
    """What the protocol needs from the application above it."""

    def on_new_contact(self, node: Node) -> None:
        """Called once for each contact added to the routing table."""


def _ping_args(args: list[Any]) -> tuple[bytes]:
    if len(args) != 1:
        raise wire.bad("ping takes [node_id]")
    return (wire.node_id(args[0]),)


def _find_node_args(args: list[Any]) -> tuple[bytes, bytes]:
    if len(args) != 2:
        raise wire.bad("find_node takes [node_id, key]")
    return wire.node_id(args[0]), wire.node_id(args[1])


def _stun_args(args: list[Any]) -> tuple[()]:
    if args:
        raise wire.bad("stun takes no arguments")
    return ()


class ExactRoutingTable(RoutingTable):
    """``RoutingTable`` whose ``find_neighbors`` considers every bucket.

    The stock ``TableTraverser`` stops as soon as it runs out of buckets on the right
    after a step to the right, skipping the buckets left of the start: a node with
    contacts could then return none at all, and lookups from it found nothing."""

    def find_neighbors(
        self, node: Node, k: int | None = None, exclude: Node | None = None
    ) -> list[Node]:
        """The ``k`` (default ksize) contacts closest to ``node``, nearest first."""
        k = k or self.ksize
        candidates = (
            n
            for bucket in self.buckets
            for n in bucket.nodes.values()
            if n.id != node.id and (exclude is None or not n.same_home_as(exclude))
        )
        return heapq.nsmallest(k, candidates, key=node.distance_to)

    def add_contact(self, node: Node) -> None:
        """Stock ``add_contact`` (split, or ping the least recently seen contact of a full
        bucket), with the ping task tracked so that shutdown cancels it."""
        index = self.get_bucket_for(node)
        bucket = self.buckets[index]
        if bucket.add_node(node):
            return
        if bucket.has_in_range(self.node) or bucket.depth() % 5 != 0:
            self.split_bucket(index)
            self.add_contact(node)
        else:
            self.protocol.spawn(self.protocol.call_ping(bucket.head()))


class HardenedProtocol(KademliaProtocol):
    """``KademliaProtocol`` with the stock unsafe paths replaced (see module docstring)."""

    def __init__(
        self,
        source_node: Node,
        storage: Any,
        ksize: int,
        limits: ProtocolLimits | None = None,
    ) -> None:
        super().__init__(source_node, storage, ksize)
        self.router = ExactRoutingTable(self, ksize, source_node)
        self.limits = limits or ProtocolLimits()
        self._wait_timeout = self.limits.rpc_timeout_s
        self.counters: Counter[str] = Counter()
        self.app: App | None = None
        # the closed-federation gate (p2pspam.dht.federation.Federation), if configured
        self.federation: Any = None
        self._buckets = wire.TokenBuckets(self.limits.rate_per_source, self.limits.burst_per_source)
        self._inflight_by_source: Counter[Address] = Counter()
        self._inflight = 0
        self._outgoing: dict[Address, asyncio.Semaphore] = {}
        self._outgoing_all = asyncio.Semaphore(self.limits.max_outgoing)
        self._verifying: set[tuple[bytes, str, int]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.rpcs: dict[str, tuple[Validator, Handler]] = {
            "ping": (_ping_args, self._rpc_ping),
            "find_node": (_find_node_args, self._rpc_find_node),
            "stun": (_stun_args, self._rpc_stun),
        }

    # -- registration ----------------------------------------------------------------

    def spawn(self, coro: Any) -> None:
        """Run ``coro`` as a task cancelled by :meth:`close_tasks`."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def register(self, name: str, validator: Validator, handler: Handler) -> None:
        """Expose ``handler(sender_address, *validated_args)`` as RPC ``name``."""
        self.rpcs[name] = (validator, handler)

    def drop(self, reason: str) -> None:
        """Count one dropped datagram or request."""
        self.counters[f"drop.{reason}"] += 1

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Keep the transport and enlarge the socket's receive buffer (best effort: the
        kernel caps it at ``net.core.rmem_max``)."""
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.limits.receive_buffer)

    # -- receiving -------------------------------------------------------------------

    def datagram_received(self, data: bytes, addr: Address) -> None:  # type: ignore[override]
        """Decode, rate-limit and dispatch one datagram; drop (and count) anything bad."""
        try:
            self._receive(data, addr)
        except Exception:  # a bug must not kill the endpoint; count it and carry on
            log.exception("unexpected error handling a datagram from %s", addr)
            self.drop("internal")

    def _receive(self, data: bytes, addr: Address) -> None:
        self.counters["datagrams_in"] += 1
        self.counters["bytes_in"] += len(data)
        loop = asyncio.get_running_loop()
        if not self._buckets.allow(addr[0], loop.time()):
            self.drop("rate_limited")
            return
        try:
            dgram = wire.decode_datagram(data)
        except wire.WireError as exc:
            self.drop(exc.reason)
            return
        if dgram.kind == wire.RESPONSE:
            self._accept_response(dgram.msg_id, dgram.payload, addr)
            return
        try:
            name, raw_args = wire.request_parts(dgram.payload)
            entry = self.rpcs.get(name)
            if entry is None:
                raise wire.WireError("unknown_rpc")
            validator, handler = entry
            args = validator(raw_args)
        except wire.WireError as exc:
            self.drop(exc.reason)
            return
        gate = self.federation
        if gate is not None and name not in ("hello", "confirm"):
            claimed = args[0] if args and isinstance(args[0], bytes) else None
            if not gate.admitted(addr, claimed):
                self.drop("unverified_peer")
                return
        if self._inflight >= self.limits.max_inflight:
            self.drop("busy")
            return
        if self._inflight_by_source[addr] >= self.limits.max_inflight_per_source:
            self.drop("busy_source")
            return
        self.counters[f"rpc.{name}"] += 1
        self._inflight += 1
        self._inflight_by_source[addr] += 1
        task = loop.create_task(self._serve(dgram.msg_id, name, handler, args, addr))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(
        self, msg_id: bytes, name: str, handler: Handler, args: tuple[Any, ...], addr: Address
    ) -> None:
        try:
            result = handler(addr, *args)
            if isinstance(result, Awaitable):
                result = await result
            if result is None:
                return  # the handler chose not to answer (duplicate, refused)
            self._send(wire.RESPONSE, msg_id, result, addr)
        except wire.WireError as exc:
            self.drop(exc.reason)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("rpc %s from %s failed", name, addr)
            self.drop("handler_error")
        finally:
            self._inflight -= 1
            self._inflight_by_source[addr] -= 1
            if self._inflight_by_source[addr] <= 0:
                del self._inflight_by_source[addr]

    def _accept_response(self, msg_id: bytes, data: Any, address: Address) -> None:
        entry = self._outstanding.get(msg_id)
        if entry is None:
            self.drop("unsolicited")
            return
        future, timeout, expected = entry
        if expected != address:
            self.drop("wrong_source")
            return
        timeout.cancel()
        del self._outstanding[msg_id]
        if not future.done():
            future.set_result((True, data))

    def _timeout(self, msg_id: bytes) -> None:
        entry = self._outstanding.pop(msg_id, None)
        if entry is None:
            return
        self.counters["timeouts"] += 1
        if not entry[0].done():
            entry[0].set_result((False, None))

    # -- sending ---------------------------------------------------------------------

    def _send(self, kind: int, msg_id: bytes, payload: Any, address: Address) -> None:
        data = wire.encode_datagram(kind, msg_id, payload)
        if self.transport is None or self.transport.is_closing():
            return
        self.counters["datagrams_out"] += 1
        self.counters["bytes_out"] += len(data)
        self.transport.sendto(data, address)

    async def call(self, address: Address, name: str, *args: Any) -> tuple[bool, Any]:
        """Call RPC ``name`` on ``address`` (after the closed-federation handshake when
        one is configured); ``(True, result)``, or ``(False, None)`` on timeout or
        refusal."""
        gate = self.federation
        if (
            gate is not None
            and name not in ("hello", "confirm")
            and not await gate.ensure(self, address)
        ):
            return (False, None)
        return await self.raw_call(address, name, *args)

    async def raw_call(self, address: Address, name: str, *args: Any) -> tuple[bool, Any]:
        """Call RPC ``name`` on ``address``; return ``(True, result)`` or ``(False, None)``
        on timeout. At most ``max_outgoing_per_peer`` calls to one address and
        ``max_outgoing`` calls in all run at once; the others wait their turn."""
        sem = self._outgoing.get(address)
        if sem is None:
            if len(self._outgoing) >= 4096:  # forget idle per-address semaphores
                for idle in [a for a, s in self._outgoing.items() if not s.locked()]:
                    del self._outgoing[idle]
            sem = self._outgoing[address] = asyncio.Semaphore(self.limits.max_outgoing_per_peer)
        async with sem, self._outgoing_all:
            loop = asyncio.get_running_loop()
            msg_id = os.urandom(wire.MSG_ID_BYTES)
            future: asyncio.Future[tuple[bool, Any]] = loop.create_future()
            try:
                self._send(wire.REQUEST, msg_id, [name, list(args)], address)
            except wire.WireError:
                self.counters["send_too_large"] += 1
                return (False, None)
            timeout = loop.call_later(self._wait_timeout, self._timeout, msg_id)
            self._outstanding[msg_id] = (future, timeout, address)
            try:
                return await future
            finally:
                if msg_id in self._outstanding:
                    self._outstanding.pop(msg_id)[1].cancel()

    def __getattr__(self, name: str) -> Any:
        """Stock ``kademlia`` code calls remote RPCs as ``self.ping(address, *args)``;
        route those through :meth:`call`."""
        if name.startswith("_") or name.startswith("rpc_"):
            raise AttributeError(name)

        def remote(address: Address, *args: Any) -> Awaitable[tuple[bool, Any]]:
            return self.call(address, name, *args)

        return remote

    def close_tasks(self) -> None:
        """Cancel request handlers and outstanding calls (on shutdown)."""
        for task in list(self._tasks):
            task.cancel()
        for future, timeout, _ in list(self._outstanding.values()):
            timeout.cancel()
            if not future.done():
                future.set_result((False, None))
        self._outstanding.clear()

    # -- the stock RPCs, validated ---------------------------------------------------

    def _rpc_stun(self, sender: Address) -> list[Any]:
        return list(sender)

    def _rpc_ping(self, sender: Address, nodeid: bytes) -> bytes:
        self.welcome_sender(Node(nodeid, sender[0], sender[1]))
        return self.source_node.id

    def _rpc_find_node(self, sender: Address, nodeid: bytes, key: bytes) -> list[list[Any]]:
        source = Node(nodeid, sender[0], sender[1])
        self.welcome_sender(source)
        return self.neighbors(key, exclude=source)

    def neighbors(
        self, key: bytes, exclude: Node | None = None, k: int | None = None
    ) -> list[list[Any]]:
        """The ``k`` (default ksize) contacts closest to ``key`` as wire contacts
        ``[id, ip, port]``."""
        found = self.router.find_neighbors(Node(key), k=k, exclude=exclude)
        return [[n.id, n.ip, n.port] for n in found]

    async def call_find_node(self, node_to_ask: Node, node_to_find: Node) -> Any:
        """Ask ``node_to_ask`` for its contacts closest to ``node_to_find`` (validated)."""
        address = (node_to_ask.ip, node_to_ask.port)
        ok, result = await self.call(address, "find_node", self.source_node.id, node_to_find.id)
        if ok:
            try:
                result = wire.contacts(result)
            except wire.WireError:
                self.drop("bad_reply")
                ok, result = False, None
        return self.handle_call_response((ok, result), node_to_ask)

    async def call_ping(self, node_to_ask: Node) -> Any:
        """Ping ``node_to_ask``; the reply must be a 20-byte node id."""
        address = (node_to_ask.ip, node_to_ask.port)
        ok, result = await self.call(address, "ping", self.source_node.id)
        if ok and not (isinstance(result, bytes) and len(result) == wire.ID_BYTES):
            self.drop("bad_reply")
            ok, result = False, None
        return self.handle_call_response((ok, result), node_to_ask)

    def handle_call_response(self, result: Any, node: Node) -> Any:
        """Stock bookkeeping after a call (add on reply, remove on silence), without the
        stock per-call warning log line."""
        if not result[0]:
            self.counters["contacts.removed"] += 1
            self.router.remove_contact(node)
            return result
        self.welcome_if_new(node)
        return result

    def welcome_sender(self, node: Node) -> None:
        """A request came from ``node``: refresh it if known; otherwise add it only once
        it answers a ping from that address with that id (a source address is easy to
        spoof, and unverified contacts would poison routing tables). At most
        ``max_verifications`` pings are pending; beyond that new senders are ignored."""
        if node.id == self.source_node.id:
            return
        if not self.router.is_new_node(node):
            self.router.add_contact(node)
            return
        key = (node.id, node.ip, node.port)
        if key in self._verifying or len(self._verifying) >= self.limits.max_verifications:
            return
        self._verifying.add(key)
        task = asyncio.get_running_loop().create_task(self._verify(node, key))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _verify(self, node: Node, key: tuple[bytes, str, int]) -> None:
        try:
            ok, answer = await self.call((node.ip, node.port), "ping", self.source_node.id)
            if ok and answer == node.id:
                self.welcome_if_new(node)
            else:
                self.counters["contacts.unverified"] += 1
        finally:
            self._verifying.discard(key)

    def welcome_if_new(self, node: Node) -> None:
        """Add a new contact to the routing table; the application hands it the records
        it should hold in bounded batches (instead of every stored key at once)."""
        if node.id == self.source_node.id:
            return
        if not self.router.is_new_node(node):
            self.router.add_contact(node)  # refresh its place in its bucket
            return
        self.router.add_contact(node)
        if self.app is not None:
            self.app.on_new_contact(node)

"""The approximate-DOLR RPC handlers of a peer (the serving side of ``AdolrNode``).

``RpcHandlers`` is a mixin of :class:`p2pspam.dht.node.AdolrNode`: it answers
``store_batch``, ``store_pointer``, ``find_approx`` (in-network evaluation, path
pointers, one-hop record delivery, duplicate suppression), ``find_object``,
``get_feature`` and ``revocations``; arguments arrive validated by
:mod:`p2pspam.dht.messages`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import msgpack
from kademlia.node import Node

from p2pspam.adolr.keys import feature_key
from p2pspam.adolr.query import Match
from p2pspam.adolr.records import FeatureObject, ObjectRecord, Pointer, object_to_wire
from p2pspam.dht import messages, wire
from p2pspam.dht.messages import fit_record

log = logging.getLogger(__name__)

Address = tuple[str, int]


class RpcHandlers:
    """Serving side of the ADOLR RPCs (mixed into ``AdolrNode``)."""

    def _welcome(self, sender: Address, nodeid: bytes) -> Node:
        node = Node(nodeid, sender[0], sender[1])
        self.protocol.welcome_sender(node)
        return node

    def _rpc_store_batch(
        self,
        sender: Address,
        nodeid: bytes,
        objects: list[tuple[bytes, FeatureObject]],
        records: list[ObjectRecord],
    ) -> int:
        self._welcome(sender, nodeid)
        checked = [self.verified_record(r) for r in records]
        with self.store.transaction():
            for key, obj in objects:
                self.store.merge_feature_object(key, obj)
            for rec in checked:
                self.store.put_record(rec)
        self.protocol.counters["stored.objects"] += len(objects)
        self.protocol.counters["stored.records"] += len(checked)
        return len(objects) + len(checked)

    def _rpc_store_pointer(self, sender: Address, nodeid: bytes, keys: list[bytes]) -> bool:
        self._welcome(sender, nodeid)
        expires = self.clock() + self.config.pointer_ttl_ms
        with self.store.transaction():
            for key in keys:
                self.store.put_pointer(Pointer(key, nodeid, sender[0], sender[1], expires))
        return True

    async def _rpc_find_approx(
        self, sender: Address, nodeid: bytes, query: messages.ApproxQuery
    ) -> dict[str, Any]:
        source = self._welcome(sender, nodeid)
        return await self.answer_approx(query, exclude=source)

    async def answer_approx(
        self, query: messages.ApproxQuery, exclude: Node | None = None
    ) -> dict[str, Any]:
        """Evaluate ``query`` on the feature objects held here (in-network evaluation),
        follow a path pointer once if this node holds nothing for the key, or return the
        closer contacts."""
        now = self.clock()
        loop = asyncio.get_running_loop()
        objects = self.store.feature_objects_for(query.namespace, query.features)
        holds_key = any(feature_key(query.namespace, f) == query.key for f in objects)
        reply: dict[str, Any] = {"holds_key": holds_key}
        if not holds_key:
            reply["closer"] = self.protocol.neighbors(query.key, exclude, self.config.replicas)
        if objects:
            try:
                found, discounted = self.evaluate_held(
                    query.features, query.thres, objects, query.namespace, now
                )
            except Exception:  # a parameter the validators let through must not escape
                self.protocol.drop("bad_query")
                return reply
            if discounted:
                reply["discounted"] = sorted(discounted)
            found = found[: messages.MAX_MATCHES]
            dup = self._resolved.fresh(query.qid, loop.time()) is not None
            if found:
                self._resolved.put(query.qid, True, loop.time())
                reply["dup"] = dup
                if dup:
                    self.protocol.counters["find_approx.dup"] += 1
                reply["matches"] = [
                    await self._match_wire(
                        m, with_record=query.records and not dup, forward=query.forward
                    )
                    for m in found
                ]
            if holds_key or found:
                return reply
        if query.forward and not holds_key:
            forwarded = await self._follow_pointer(query, now)
            if forwarded is not None:
                if "discounted" in reply:  # what this node knows counts too
                    try:
                        theirs = messages.approx_reply(forwarded).discounted
                    except wire.WireError:
                        theirs = ()
                    forwarded["discounted"] = sorted(set(reply["discounted"]) | set(theirs))
                return forwarded
        return reply

    async def _match_wire(self, m: Match, with_record: bool, forward: bool) -> list[Any]:
        record = None
        if with_record:
            rec = self.store.get_object(m.guid)
            if rec is None and forward:
                rec = await self._fetch_record_one_hop(m.guid)
            record = fit_record(rec) if rec is not None else None
        return [
            m.guid,
            m.overlap,
            list(m.matched_features),
            list(m.discounted_features),
            list(m.features),
            record,
        ]

    async def _fetch_record_one_hop(self, guid: bytes) -> ObjectRecord | None:
        """Deliver the query to the GUID's nodes known here (one hop, no lookup)."""
        for node in self.protocol.router.find_neighbors(Node(guid), k=self.config.alpha):
            ok, result = await self.protocol.call(
                (node.ip, node.port), "find_object", self.node_id, guid
            )
            if not ok:
                continue
            try:
                _, rec = messages.object_reply(result)
            except wire.WireError:
                self.protocol.drop("bad_reply")
                continue
            if rec is not None and rec.guid == guid:
                rec = self.verified_record(rec)
                self.store.put_record(rec)
                return rec
        return None

    async def _follow_pointer(self, query: messages.ApproxQuery, now: int) -> dict[str, Any] | None:
        for pointer in self.store.get_pointers(query.key, now)[:2]:
            if pointer.node_id == self.node_id:
                continue
            ok, result = await self.protocol.call(
                (pointer.host, pointer.port),
                "find_approx",
                self.node_id,
                query.qid,
                query.key,
                query.namespace,
                list(query.features),
                query.thres,
                False,
                query.records,
            )
            if not ok:
                continue
            try:
                reply = messages.approx_reply(result)
            except wire.WireError:
                self.protocol.drop("bad_reply")
                continue
            if reply.holds_key:
                self.protocol.counters["find_approx.via_pointer"] += 1
                out = dict(result)
                out.pop("closer", None)
                return out
        return None

    def _rpc_find_object(self, sender: Address, nodeid: bytes, guid: bytes) -> dict[str, Any]:
        source = self._welcome(sender, nodeid)
        rec = self.store.get_object(guid)
        if rec is not None:
            return {"record": fit_record(rec)}
        return {"closer": self.protocol.neighbors(guid, source, self.config.replicas)}

    def _rpc_get_feature(self, sender: Address, nodeid: bytes, key: bytes) -> dict[str, Any]:
        source = self._welcome(sender, nodeid)
        obj = self.store.get_feature_object(key)
        if obj is not None:
            raw = object_to_wire(obj)
            if len(msgpack.packb(raw, use_bin_type=True)) < wire.MAX_DATAGRAM - 1000:
                return {"object": raw}
        return {"closer": self.protocol.neighbors(key, source, self.config.replicas)}

    def _rpc_revocations(self, sender: Address, nodeid: bytes, signed: bytes) -> bool:
        self._welcome(sender, nodeid)
        return self.accept_revocations(signed, gossip=True)

    def accept_revocations(self, signed: bytes, gossip: bool = True) -> bool:
        """Adopt a newer signed revocation list and gossip it to the contacts; return
        whether it was adopted (an invalid list is counted and refused)."""
        try:
            adopted = self.verifier.update_revocations(signed, self.clock())
        except Exception as exc:
            self.protocol.counters["revocations.rejected"] += 1
            log.info("refused a revocation list: %s", exc)
            return False
        if adopted:
            self.protocol.counters["revocations.adopted"] += 1
            self._ham.clear()  # a revoked user's ham votes stop counting at once
            self.store.set_meta("revocations", signed)
            if gossip:
                for node in self.contacts():
                    task = asyncio.get_running_loop().create_task(
                        self.protocol.call(
                            (node.ip, node.port), "revocations", self.node_id, signed
                        )
                    )
                    self._background.append(task)
                    task.add_done_callback(self._forget)
        return adopted

    def _forget(self, task: asyncio.Task[Any]) -> None:
        with contextlib.suppress(ValueError):
            self._background.remove(task)

"""Replication of a peer's records: bounded hand-off to new contacts, periodic
republication and expiry (a mixin of :class:`p2pspam.dht.node.AdolrNode`).

A feature object travels with the object records (held here) of its GUIDs that the policy
decides ham: the node that evaluates a query needs them next to the object to apply the
ham-vote discount (``p2pspam.dht.discount``), as publication placed them."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Iterable
from typing import Any

from kademlia.node import Node

from p2pspam.adolr.records import FeatureObject, ObjectRecord

log = logging.getLogger(__name__)


HAM_RECORDS_PER_OBJECT = 4  # ham records sent along with one feature object
RECORDS_PER_DATAGRAM = 2  # a record may take up to RECORD_WIRE_BUDGET bytes


class Replication:
    """Hand-off, republication and expiry (mixed into ``AdolrNode``)."""

    def ham_records(self, obj: FeatureObject) -> list[ObjectRecord]:
        """The object records held here of ``obj``'s GUIDs decided ham (at most
        ``HAM_RECORDS_PER_OBJECT``; none when the ham-vote discount is off)."""
        if self.config.ham_guids is None:
            return []
        now = self.clock()
        out: list[ObjectRecord] = []
        for guid in obj.entries:
            if self.is_ham(guid, now):
                record = self.store.get_object(guid)
                if record is not None:
                    out.append(record)
                    if len(out) >= HAM_RECORDS_PER_OBJECT:
                        break
        return out

    async def _store_records(
        self, targets: list[tuple[int, tuple[str, int]]], records: list[ObjectRecord]
    ) -> None:
        for i in range(0, len(records), RECORDS_PER_DATAGRAM):
            await self._store_at(targets, [], records[i : i + RECORDS_PER_DATAGRAM])

    def on_new_contact(self, node: Node) -> None:
        """Queue a bounded hand-off of records to a new contact (dropped when full)."""
        try:
            self._handoff.put_nowait(node)
        except asyncio.QueueFull:
            self.protocol.drop("handoff_queue_full")

    async def _handoff_worker(self) -> None:
        while True:
            node = await self._handoff.get()
            try:
                await self._hand_off(node)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("hand-off to %s failed", node)

    async def _hand_off(self, node: Node) -> None:
        """Send ``node`` the feature objects and records it should hold: those of keys it
        is closer to than this node is, which are within our replica set, in batches."""
        # A contact is added on any message, so its address may be spoofed: hand records
        # only to a node that answers a ping from that address with the same id.
        ok, answer = await self.protocol.call((node.ip, node.port), "ping", self.node_id)
        if not ok or answer != node.id:
            self.protocol.counters["handoff.unverified"] += 1
            return
        router = self.protocol.router
        me = int.from_bytes(self.node_id, "big")
        sent = 0
        batch_objects: list[tuple[bytes, FeatureObject]] = []
        batch_records: list[ObjectRecord] = []

        def relevant(key: bytes) -> bool:
            k = int.from_bytes(key, "big")
            if node.long_id ^ k >= me ^ k:
                return False
            near = router.find_neighbors(Node(key), k=self.config.replicas)
            return len(near) < self.config.replicas or (node.long_id ^ k) <= (near[-1].long_id ^ k)

        async def flush() -> None:
            nonlocal batch_objects, batch_records
            if batch_objects or batch_records:
                await self._store_at(
                    [(node.long_id, (node.ip, node.port))], batch_objects, batch_records
                )
            batch_objects, batch_records = [], []

        after = b""
        while sent < self.config.handoff_max_keys:
            keys = self.store.iter_feature_keys(after, 256)
            if not keys:
                break
            after = keys[-1]
            for key in keys:
                if sent >= self.config.handoff_max_keys or not relevant(key):
                    continue
                obj = self.store.get_feature_object(key)
                if obj is None:
                    continue
                batch_objects.append((key, obj))
                sent += 1
                ham = self.ham_records(obj)
                if ham:
                    await self._store_records([(node.long_id, (node.ip, node.port))], ham)
                    sent += len(ham)
                if len(batch_objects) >= 8:
                    await flush()
        after = b""
        while sent < self.config.handoff_max_keys:
            guids = self.store.iter_record_guids(after, 256)
            if not guids:
                break
            after = guids[-1]
            for guid in guids:
                if sent >= self.config.handoff_max_keys or not relevant(guid):
                    continue
                rec = self.store.get_object(guid)
                if rec is None:
                    continue
                batch_records.append(rec)
                sent += 1
                if len(batch_records) >= 4:
                    await flush()
        await flush()
        self.protocol.counters["handoff.items"] += sent

    async def republish(self) -> int:
        """Store everything held here at the current replica nodes of its key; return
        how many objects and records were sent."""
        sent = 0

        async def one(key: bytes, obj: FeatureObject | None, rec: ObjectRecord | None) -> None:
            closest = await self._node_lookup(key)
            await self._store_at(closest, [(key, obj)] if obj else [], [rec] if rec else [])
            if obj is not None:
                await self._store_records(closest, self.ham_records(obj))

        for batch in self.store.iter_for_republish(64):
            jobs = [one(key, obj, None) for key, obj in batch.objects]
            jobs += [one(rec.guid, None, rec) for rec in batch.records]
            await gather_limited(jobs, 8)
            sent += len(jobs)
        return sent

    async def _republish_loop(self) -> None:
        interval = self.config.republish_interval_s
        while True:
            await asyncio.sleep(interval * random.uniform(0.9, 1.1))
            try:
                await self.republish()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("republication failed")

    async def _expire_loop(self) -> None:
        while True:
            await asyncio.sleep(min(self.config.expire_interval_s, self.config.save_interval_s))
            try:
                self.store.expire(self.clock())
                self.save_routing_state()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("expiry failed")


async def gather_limited(jobs: Iterable[Awaitable[Any]], limit: int) -> list[Any]:
    """Await ``jobs`` with at most ``limit`` running at once."""
    sem = asyncio.Semaphore(limit)

    async def one(job: Awaitable[Any]) -> Any:
        async with sem:
            return await job

    return await asyncio.gather(*(one(j) for j in jobs))

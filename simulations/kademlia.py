"""A Kademlia overlay model driven by the peer's own sans-IO lookup.

Every lookup runs :class:`p2pspam.dht.lookup.Lookup` (the code the asyncio peer ships);
this module only plays the network: it answers each request with the responder's
``ksize`` contacts closest to the target (excluding the asker, as the peer's
``find_node`` does) and records which node answered in which round.

Routing tables are full k-buckets: for node u and each bucket (the nodes whose id shares
exactly b leading bits with u), up to ``ksize`` members drawn at random (a stable
network's buckets hold its longest-lived nodes: random with respect to ids and
latency). Node ids are 160-bit; XOR distances are ordered on their top 64 bits (ties
among a few thousand random ids have probability ~1e-12).

Parameters follow the peer (``p2pspam.dht.node.NodeConfig``): ``ksize`` = 20 contacts
per bucket and per reply, ``alpha`` = 3, lookups keep the ``replicas`` = 8 closest, seeds
are the querier's ``ksize`` closest contacts, records live on the ``replicas`` closest
nodes, and publication leaves path pointers on every other node that responded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from p2pspam.dht.lookup import Lookup


@dataclass(frozen=True, slots=True)
class Trace:
    """One lookup: ``nodes[i]`` answered in round ``rounds[i]`` (1-based), ``round_ms[r-1]``
    is the longest round trip of round r, ``closest`` the ``replicas`` closest nodes
    that answered, ``messages`` the requests sent."""

    querier: int
    nodes: np.ndarray
    rounds: np.ndarray
    round_ms: np.ndarray
    closest: np.ndarray
    messages: int


class Kademlia:
    """``n`` nodes with random 160-bit ids and k-bucket routing tables (built lazily)."""

    def __init__(
        self,
        n: int,
        rng: np.random.Generator,
        latency: np.ndarray | None = None,
        ksize: int = 20,
        alpha: int = 3,
        replicas: int = 8,
    ) -> None:
        if n < 2:
            raise ValueError("a Kademlia network needs at least 2 nodes")
        self.n = n
        self.ksize, self.alpha, self.replicas = ksize, alpha, replicas
        self.latency = latency
        self._rng = rng
        raw = np.frombuffer(rng.bytes(8 * (n + 64)), dtype=np.uint64)
        _, first = np.unique(raw, return_index=True)
        if len(first) < n:  # astronomically unlikely with 64-bit draws
            raise RuntimeError("could not draw distinct node ids")
        self.top = raw[np.sort(first)[:n]].copy()
        self.ids = [
            (int(t) << 96) | int.from_bytes(rng.bytes(12), "big") for t in self.top.tolist()
        ]
        self.pairs = [(self.ids[i], i) for i in range(n)]
        self._order = np.argsort(self.top)
        self._sorted = self.top[self._order]
        self._tables: dict[int, np.ndarray] = {}
        self._replies: dict[tuple[int, int], list[tuple[int, int]]] = {}

    def table(self, u: int) -> np.ndarray:
        """Node indices in u's routing table (all its k-buckets)."""
        got = self._tables.get(u)
        if got is not None:
            return got
        me = int(self.top[u])
        parts = []
        for b in range(64):
            width = 1 << (63 - b)
            start = ((me >> (64 - b)) << (64 - b) if b else 0) | ((me & width) ^ width)
            lo = int(np.searchsorted(self._sorted, np.uint64(start), side="left"))
            hi = int(np.searchsorted(self._sorted, np.uint64(start + width - 1), side="right"))
            count = hi - lo
            if count > self.ksize:
                pick = lo + self._rng.choice(count, self.ksize, replace=False)
                parts.append(self._order[pick])
            elif count:
                parts.append(self._order[lo:hi])
            own_lo = int(np.searchsorted(self._sorted, np.uint64(start ^ width), side="left"))
            own_hi = int(
                np.searchsorted(self._sorted, np.uint64((start ^ width) + width - 1), side="right")
            )
            if own_hi - own_lo <= 1:
                break  # u alone in its half: every deeper bucket is empty
        table = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
        self._tables[u] = table
        return table

    def key_top(self, key: int) -> np.uint64:
        """The top 64 bits of a 160-bit key."""
        return np.uint64(key >> 96)

    def random_key(self, rng: np.random.Generator) -> int:
        """A uniformly random 160-bit key."""
        return int.from_bytes(rng.bytes(20), "big")

    def closest_known(self, u: int, key: int, count: int) -> np.ndarray:
        """The ``count`` entries of u's table closest to ``key``, nearest first."""
        table = self.table(u)
        dist = self.top[table] ^ self.key_top(key)
        if len(table) > count:
            part = np.argpartition(dist, count)[:count]
            return table[part[np.argsort(dist[part])]]
        return table[np.argsort(dist)]

    def true_closest(self, key: int, count: int) -> np.ndarray:
        """The ``count`` nodes of the whole network closest to ``key``, nearest first."""
        dist = self.top ^ self.key_top(key)
        part = np.argpartition(dist, count)[:count]
        return part[np.argsort(dist[part])]

    def _reply(self, v: int, key: int, asker: int) -> list[tuple[int, int]]:
        cached = self._replies.get((v, key))
        if cached is None:
            cached = [self.pairs[i] for i in self.closest_known(v, key, self.ksize + 1).tolist()]
            if len(self._replies) > 200_000:
                self._replies.clear()
            self._replies[(v, key)] = cached
        return [c for c in cached if c[1] != asker][: self.ksize]

    def lookup(
        self,
        querier: int,
        key: int,
        ttl: int | None = None,
        failed: np.ndarray | None = None,
        answer: np.ndarray | None = None,
        k: int | None = None,
    ) -> Trace:
        """Run the peer's lookup for ``key`` from ``querier``. ``failed[v]``: v does not
        answer; ``answer[v]``: v answers (holds the record or a pointer), which ends
        the lookup as in the peer; ``k`` overrides the replicas the lookup keeps."""
        seeds = [self.pairs[i] for i in self.closest_known(querier, key, self.ksize).tolist()]
        lk: Lookup[int] = Lookup(
            key,
            seeds,
            k=k or self.replicas,
            alpha=self.alpha,
            ttl=ttl,
            exclude=[self.ids[querier]],
        )
        nodes: list[int] = []
        rounds: list[int] = []
        round_ms: list[float] = []
        messages = 0
        lat = self.latency
        while True:
            batch = lk.next_requests()
            if not batch:
                break
            r = lk.rounds
            messages += len(batch)
            worst = 0.0
            for node_id, v in batch:
                if lat is not None:
                    worst = max(worst, 2.0 * float(lat[querier, v]))
                if failed is not None and failed[v]:
                    lk.on_failure(node_id)
                    continue
                hit = True if answer is not None and answer[v] else None
                lk.on_response(node_id, self._reply(v, key, querier), hit)
                nodes.append(v)
                rounds.append(r)
            round_ms.append(worst)
        return Trace(
            querier=querier,
            nodes=np.array(nodes, dtype=np.int64),
            rounds=np.array(rounds, dtype=np.int64),
            round_ms=np.array(round_ms),
            closest=np.array([c for _, c in lk.closest()], dtype=np.int64),
            messages=messages,
        )

    def forget_replies(self) -> None:
        """Drop cached replies (call between keys to bound memory)."""
        self._replies.clear()

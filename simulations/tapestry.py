"""A Tapestry overlay model (Zhao, Kubiatowicz, Joseph 2001; SpamWatch paper section 2).

Node ids are strings of ``digits`` base-``base`` digits (hexadecimal by default). The
neighbour map of node u has, for each level l and digit d, the node closest to u in
network latency among those whose id starts with u's first l digits followed by d
(u itself for its own digit; ``proximity=False`` picks a random one instead, to measure
how much locality matters). Routing toward a key resolves one digit per hop; an empty
entry is skipped with Tapestry's deterministic surrogate routing (try d, d+1, ... mod
base), so every key has one root and the routes toward it form a tree.

Because the tables are complete and consistent, a node u whose id shares m digits with
the key's root R forwards to ``table[u, m, R[m]]``: :meth:`Tapestry.next_hops` computes
that next hop for every node at once (vectorised), which is all the TTL experiment needs.
Publication leaves a pointer on every node of the path from the publisher to the root;
a query walks its path toward the root and stops at the first node holding a pointer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Routes:
    """Routes toward one key: ``next_hop[u]`` (the root points to itself), the latency
    ``hop_ms[u]`` of u's next hop, and the ``root``."""

    root: int
    next_hop: np.ndarray
    hop_ms: np.ndarray


class Tapestry:
    """Neighbour maps of ``len(latency)`` nodes with random ids (seeded)."""

    def __init__(
        self,
        latency: np.ndarray,
        rng: np.random.Generator,
        base: int = 16,
        digits: int = 8,
        proximity: bool = True,
    ) -> None:
        n = len(latency)
        if base < 2 or digits < 1 or base**digits < n:
            raise ValueError(f"{base}^{digits} ids cannot name {n} nodes")
        self.base = base
        self.digits = digits
        self.latency = latency
        self.proximity = proximity
        self._rng = rng
        self.ids = _unique_ids(rng, n, base, digits)
        self.table = self._build_table()

    @property
    def size(self) -> int:
        """Number of nodes."""
        return len(self.ids)

    def _build_table(self) -> np.ndarray:
        n, base = self.size, self.base
        table = np.full((n, self.digits, base), -1, dtype=np.int32)
        prefix = np.zeros(n, dtype=np.int64)  # ids' first l digits as an integer
        for level in range(self.digits):
            digit = self.ids[:, level].astype(np.int64)
            groups = np.unique(prefix, return_inverse=True)[1]
            order = np.argsort(groups, kind="stable")
            bounds = np.flatnonzero(np.diff(groups[order])) + 1
            for members in np.split(order, bounds):
                if len(members) == 1:
                    table[members[0], level:, :] = -1
                    u = members[0]
                    table[u, np.arange(level, self.digits), self.ids[u, level:]] = u
                    continue
                block = self.latency[np.ix_(members, members)]
                for d in np.unique(digit[members]):
                    sub = digit[members] == d
                    if self.proximity:
                        closest = np.argmin(block[:, sub], axis=1)
                    else:  # sensitivity: ignore latency, any node with the prefix
                        closest = self._rng.integers(0, int(sub.sum()), size=len(members))
                    table[members, level, d] = members[np.flatnonzero(sub)[closest]]
                    table[members[sub], level, d] = members[sub]  # own digit: itself
            prefix = prefix * base + digit
            if len(np.unique(prefix)) == n:
                rest = np.arange(level + 1, self.digits)
                table[np.arange(n)[:, None], rest[None, :], self.ids[:, level + 1 :]] = np.arange(
                    n
                )[:, None]
                break
        return table

    def root_of(self, key: np.ndarray) -> int:
        """The node a key (array of digits) is rooted at, by surrogate routing."""
        candidates = np.arange(self.size)
        for level in range(self.digits):
            if len(candidates) == 1:
                break
            present = np.zeros(self.base, dtype=bool)
            present[self.ids[candidates, level]] = True
            d = int(key[level])
            while not present[d]:
                d = (d + 1) % self.base
            candidates = candidates[self.ids[candidates, level] == d]
        return int(candidates[0])

    def next_hops(self, key: np.ndarray) -> Routes:
        """Next hop of every node toward ``key``'s root."""
        root = self.root_of(key)
        shared = np.cumprod(self.ids == self.ids[root], axis=1).sum(axis=1)
        nodes = np.arange(self.size)
        nxt = nodes.copy()
        away = shared < self.digits
        level = shared[away]
        nxt[away] = self.table[nodes[away], level, self.ids[root, level]]
        if np.any(nxt < 0):
            raise RuntimeError("incomplete neighbour map (bug)")
        hop_ms = self.latency[nodes, nxt]
        return Routes(root=root, next_hop=nxt, hop_ms=hop_ms)

    def random_key(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random key (digits)."""
        return rng.integers(0, self.base, size=self.digits)


def _unique_ids(rng: np.random.Generator, n: int, base: int, digits: int) -> np.ndarray:
    ids = rng.integers(0, base, size=(n, digits), dtype=np.int64)
    while True:
        _, first = np.unique(ids, axis=0, return_index=True)
        if len(first) == n:
            return ids
        dup = np.setdiff1d(np.arange(n), first)
        ids[dup] = rng.integers(0, base, size=(len(dup), digits))


def pointer_holders(routes: Routes, publishers: np.ndarray) -> np.ndarray:
    """Boolean mask of the nodes on the publication paths from ``publishers`` to the root
    (publishers and root included)."""
    mark = np.zeros(len(routes.next_hop), dtype=bool)
    frontier = np.unique(publishers)
    while len(frontier):
        mark[frontier] = True
        frontier = np.unique(routes.next_hop[frontier])
        frontier = frontier[~mark[frontier]]
    return mark


def walk(routes: Routes, holders: np.ndarray, max_hops: int) -> tuple[np.ndarray, np.ndarray]:
    """For every node as a querier: the number of hops to the first node holding a
    pointer (0 = itself; ``max_hops + 1`` when not within ``max_hops``) and the cumulative
    latency after h hops, shape (nodes, max_hops + 1) (constant once at the root)."""
    n = len(routes.next_hop)
    cur = np.arange(n)
    found = np.full(n, max_hops + 1, dtype=np.int64)
    cum = np.zeros((n, max_hops + 1), dtype=np.float64)
    for h in range(max_hops + 1):
        hit = holders[cur] & (found > max_hops)
        found[hit] = h
        if h < max_hops:
            cum[:, h + 1] = cum[:, h] + routes.hop_ms[cur]
            cur = routes.next_hop[cur]
    return found, cum

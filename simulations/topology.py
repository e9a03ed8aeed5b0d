"""GT-ITM-style transit-stub topologies with router-to-router latencies.

A topology is a set of *transit domains* (each a connected random graph of transit
routers, the domains joined to each other by inter-domain links) and *stub domains*
(connected random graphs of stub routers), each stub domain hanging off one transit
router by one access link, as in GT-ITM's transit-stub model (Zegura, Calvert and
Bhattacharjee, 1996). Every link class has its own latency range; latencies are then
scaled so that the network diameter (the longest shortest path) is exactly
``diameter_ms`` (400 ms in the SpamWatch paper, section 6.3).

Shortest paths are computed with ``scipy.sparse.csgraph.dijkstra``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import connected_components, dijkstra

from p2pspam.errors import ParameterError

# (low, high) latency in ms before scaling, per link class.
LATENCY_MS = {
    "inter_transit": (40.0, 80.0),
    "intra_transit": (10.0, 30.0),
    "transit_stub": (3.0, 8.0),
    "intra_stub": (1.0, 4.0),
}


@dataclass(frozen=True, slots=True)
class TransitStubParams:
    """Shape of a transit-stub topology (defaults give 5,050 routers)."""

    transit_domains: int = 5
    routers_per_transit: int = 10
    stubs_per_transit_router: int = 4
    routers_per_stub: int = 25
    extra_edge_prob_transit: float = 0.4
    extra_edge_prob_stub: float = 0.08
    inter_domain_extra: float = 0.5
    diameter_ms: float = 400.0

    @property
    def routers(self) -> int:
        """Total number of routers."""
        transit = self.transit_domains * self.routers_per_transit
        return transit + transit * self.stubs_per_transit_router * self.routers_per_stub

    def check(self) -> None:
        """Raise ParameterError when the shape cannot make a connected topology."""
        if self.transit_domains < 1 or self.routers_per_transit < 1:
            raise ParameterError("a topology needs at least one transit router")
        if self.stubs_per_transit_router < 0 or self.routers_per_stub < 1:
            raise ParameterError("stub domains need at least one router")
        if self.diameter_ms <= 0:
            raise ParameterError(f"diameter must be positive, got {self.diameter_ms}")


@dataclass(frozen=True, slots=True)
class Topology:
    """A router graph: ``graph`` is a symmetric CSR matrix of scaled link latencies (ms),
    ``is_transit`` marks transit routers, ``diameter_ms`` the longest shortest path."""

    graph: csr_matrix
    is_transit: np.ndarray
    diameter_ms: float
    seed: int
    distances: np.ndarray | None = None

    @property
    def routers(self) -> int:
        """Number of routers."""
        return self.graph.shape[0]

    @property
    def links(self) -> int:
        """Number of (undirected) links."""
        return self.graph.nnz // 2

    def distances_from(self, sources: np.ndarray) -> np.ndarray:
        """Return shortest-path latencies (ms, float32) from each source router to every
        router, shape (len(sources), routers)."""
        return dijkstra(self.graph, directed=False, indices=np.asarray(sources)).astype(np.float32)

    def host_latencies(self, hosts: np.ndarray) -> np.ndarray:
        """Return the latency matrix between the given host routers (ms, float32), shape
        (len(hosts), len(hosts)); hosts may repeat (same router: latency 0)."""
        hosts = np.asarray(hosts)
        if self.distances is not None:
            return self.distances[np.ix_(hosts, hosts)]
        unique, inverse = np.unique(hosts, return_inverse=True)
        dist = self.distances_from(unique)[:, unique]
        return dist[np.ix_(inverse, inverse)]


def _connected_random_graph(
    rng: np.random.Generator, size: int, extra_prob: float
) -> list[tuple[int, int]]:
    """Edges of a connected random graph: a random spanning tree plus each other pair
    with probability ``extra_prob`` (GT-ITM's pure-random model, connectivity forced)."""
    edges: list[tuple[int, int]] = []
    order = rng.permutation(size)
    for i in range(1, size):
        edges.append((int(order[i]), int(order[rng.integers(0, i)])))
    if size > 2 and extra_prob > 0:
        a, b = np.triu_indices(size, k=1)
        pick = rng.random(len(a)) < extra_prob
        edges.extend(zip(a[pick].tolist(), b[pick].tolist(), strict=True))
    return edges


def generate(
    seed: int, params: TransitStubParams | None = None, keep_distances: bool = False
) -> Topology:
    """Generate a seeded transit-stub topology scaled to ``params.diameter_ms``; with
    ``keep_distances`` also keep the all-pairs latency matrix (float32, routers^2)."""
    p = params or TransitStubParams()
    p.check()
    rng = np.random.default_rng(seed)
    rows: list[int] = []
    cols: list[int] = []
    lats: list[float] = []

    def link(u: int, v: int, kind: str) -> None:
        if u == v:
            return
        low, high = LATENCY_MS[kind]
        rows.append(u)
        cols.append(v)
        lats.append(float(rng.uniform(low, high)))

    n_transit = p.transit_domains * p.routers_per_transit
    domain_routers = []
    for d in range(p.transit_domains):
        base = d * p.routers_per_transit
        for u, v in _connected_random_graph(rng, p.routers_per_transit, p.extra_edge_prob_transit):
            link(base + u, base + v, "intra_transit")
        domain_routers.append(np.arange(base, base + p.routers_per_transit))
    # Transit domains: a random tree of domains plus extra domain pairs, each domain
    # link joining random routers of the two domains.
    for a, b in _connected_random_graph(rng, p.transit_domains, p.inter_domain_extra):
        u, v = rng.choice(domain_routers[a]), rng.choice(domain_routers[b])
        link(int(u), int(v), "inter_transit")
    next_id = n_transit
    for t in range(n_transit):
        for _ in range(p.stubs_per_transit_router):
            base = next_id
            for u, v in _connected_random_graph(rng, p.routers_per_stub, p.extra_edge_prob_stub):
                link(base + u, base + v, "intra_stub")
            link(t, base + int(rng.integers(0, p.routers_per_stub)), "transit_stub")
            next_id += p.routers_per_stub
    n = next_id
    raw = coo_matrix((lats, (rows, cols)), shape=(n, n)).tocsr()
    raw = raw.maximum(raw.T).tocsr()  # symmetric; a duplicate pair keeps one latency
    components, _ = connected_components(raw, directed=False)
    if components != 1:  # cannot happen with spanning trees; guard the invariant
        raise RuntimeError(f"transit-stub generator produced {components} components")
    keep = np.empty((n, n), dtype=np.float32) if keep_distances else None
    diameter = _diameter(raw, keep)
    factor = p.diameter_ms / diameter
    scaled = (raw * factor).tocsr()
    if keep is not None:
        keep *= np.float32(factor)
    is_transit = np.zeros(n, dtype=bool)
    is_transit[:n_transit] = True
    return Topology(
        graph=scaled, is_transit=is_transit, diameter_ms=p.diameter_ms, seed=seed, distances=keep
    )


def _diameter(graph: csr_matrix, keep: np.ndarray | None) -> float:
    """The longest shortest path, from all sources in blocks (bounded memory); fills
    ``keep`` with the distances when given."""
    n = graph.shape[0]
    best = 0.0
    block = 512
    for start in range(0, n, block):
        stop = min(n, start + block)
        dist = dijkstra(graph, directed=False, indices=np.arange(start, stop))
        best = max(best, float(dist.max()))
        if keep is not None:
            keep[start:stop] = dist
    return best

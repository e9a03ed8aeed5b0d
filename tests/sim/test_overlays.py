"""The overlay models: Tapestry routes as its neighbour maps say, Kademlia runs the
peer's own lookup code."""

import numpy as np

import p2pspam.dht.lookup
import simulations.kademlia
from simulations.kademlia import Kademlia
from simulations.tapestry import Tapestry, pointer_holders, walk


def _latency(n: int, seed: int = 0) -> np.ndarray:
    pts = np.random.default_rng(seed).random((n, 2)) * 200
    return np.linalg.norm(pts[:, None] - pts[None, :], axis=2).astype(np.float32)


def _route_by_tables(tp: Tapestry, u: int, key: np.ndarray) -> list[int]:
    """Tapestry routing hop by hop with surrogate routing, straight from the tables."""
    path = [u]
    for level in range(tp.digits):
        d = int(key[level])
        while tp.table[u, level, d] < 0:
            d = (d + 1) % tp.base
        v = int(tp.table[u, level, d])
        if v != u:
            path.append(v)
            u = v
    return path


def test_tapestry_next_hops_follow_the_neighbour_maps_to_one_root():
    rng = np.random.default_rng(1)
    tp = Tapestry(_latency(300), rng, base=4, digits=7)
    for _ in range(10):
        key = tp.random_key(rng)
        routes = tp.next_hops(key)
        for u in range(0, 300, 7):
            path = _route_by_tables(tp, u, key)
            walked = [u]
            while walked[-1] != routes.root:
                walked.append(int(routes.next_hop[walked[-1]]))
            assert path == walked


def test_tapestry_neighbour_is_the_closest_node_with_the_prefix():
    rng = np.random.default_rng(2)
    lat = _latency(200, 3)
    tp = Tapestry(lat, rng, base=4, digits=6)
    u, d = 17, (int(tp.ids[17, 0]) + 1) % 4
    candidates = np.flatnonzero(tp.ids[:, 0] == d)
    assert tp.table[u, 0, d] == candidates[np.argmin(lat[u, candidates])]


def test_tapestry_pointers_cover_publication_paths_and_queries_stop_at_the_first():
    rng = np.random.default_rng(3)
    tp = Tapestry(_latency(256), rng, base=4, digits=6)
    routes = tp.next_hops(tp.random_key(rng))
    holders = pointer_holders(routes, np.array([5]))
    assert holders[5] and holders[routes.root]
    assert holders[routes.next_hop[5]]
    found, cum = walk(routes, holders, 8)
    assert found[5] == 0
    assert np.all(found <= 8)  # the root always holds a pointer
    assert np.all(np.diff(cum, axis=1) >= 0)


def test_kademlia_model_uses_the_peer_lookup_class():
    assert simulations.kademlia.Lookup is p2pspam.dht.lookup.Lookup


def test_kademlia_lookups_find_the_true_closest_nodes():
    rng = np.random.default_rng(4)
    net = Kademlia(600, rng)
    exact = 0
    for _ in range(40):
        q, key = int(rng.integers(600)), net.random_key(rng)
        truth = net.true_closest(key, net.replicas + 1)
        truth = truth[truth != q][: net.replicas]
        exact += set(net.lookup(q, key).closest.tolist()) == set(truth.tolist())
    assert exact >= 38


def test_kademlia_ttl_bounds_the_rounds_and_answers_end_the_lookup():
    rng = np.random.default_rng(5)
    net = Kademlia(600, rng)
    key = net.random_key(rng)
    assert net.lookup(3, key, ttl=1).rounds.max() == 1
    full = net.lookup(3, key)
    answer = np.zeros(600, dtype=bool)
    answer[full.nodes[0]] = True
    stopped = net.lookup(3, key, answer=answer)
    assert stopped.rounds.max() == 1 and stopped.messages <= full.messages


def test_kademlia_failed_nodes_never_answer():
    rng = np.random.default_rng(6)
    net = Kademlia(600, rng)
    dead = rng.random(600) < 0.5
    dead[9] = False
    trace = net.lookup(9, net.random_key(rng), failed=dead)
    assert not dead[trace.nodes].any()

"""The transit-stub generator: connected, seeded, scaled to the 400 ms diameter."""

import numpy as np
from scipy.sparse.csgraph import connected_components

from simulations.topology import TransitStubParams, generate

SMALL = TransitStubParams(
    transit_domains=3, routers_per_transit=4, stubs_per_transit_router=2, routers_per_stub=6
)


def test_default_shape_has_about_five_thousand_routers():
    assert 4800 <= TransitStubParams().routers <= 5200


def test_topology_is_connected_with_the_requested_router_count():
    topo = generate(3, SMALL)
    assert topo.routers == SMALL.routers
    assert connected_components(topo.graph, directed=False)[0] == 1


def test_longest_shortest_path_equals_the_diameter():
    topo = generate(3, SMALL, keep_distances=True)
    assert np.isclose(topo.distances.max(), 400.0, rtol=1e-5)


def test_same_seed_gives_the_same_topology_and_another_seed_another():
    a, b, c = generate(5, SMALL), generate(5, SMALL), generate(6, SMALL)
    assert (a.graph != b.graph).nnz == 0
    assert a.graph.shape != c.graph.shape or (a.graph != c.graph).nnz > 0


def test_host_latencies_match_dijkstra_and_are_symmetric():
    topo = generate(4, SMALL, keep_distances=True)
    hosts = np.array([0, 5, 17, 30, 5])
    direct = topo.host_latencies(hosts)
    plain = generate(4, SMALL).host_latencies(hosts)
    assert np.allclose(direct, plain, atol=1e-3)
    assert np.allclose(direct, direct.T)
    assert direct[1, 4] == 0.0


def test_transit_links_are_slower_than_stub_links():
    topo = generate(4, SMALL)
    coo = topo.graph.tocoo()
    both_transit = topo.is_transit[coo.row] & topo.is_transit[coo.col]
    neither = ~topo.is_transit[coo.row] & ~topo.is_transit[coo.col]
    assert coo.data[both_transit].mean() > 3 * coo.data[neither].mean()

"""Specification of the sans-IO Kademlia lookup, driven over a synthetic overlay."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pspam.dht.lookup import ID_LIMIT, Lookup


class Overlay:
    """A synthetic overlay: each node knows a few random contacts and its closest ones."""

    def __init__(self, n: int, seed: int, k: int = 8) -> None:
        rng = random.Random(seed)
        self.ids = [rng.randrange(ID_LIMIT) for _ in range(n)]
        self.k = k
        self.table: dict[int, list[int]] = {}
        for node in self.ids:
            others = [o for o in self.ids if o != node]
            near = sorted(others, key=lambda o, node=node: o ^ node)[:k]
            self.table[node] = near + rng.sample(others, min(len(others), 6))

    def closer(self, node: int, target: int) -> list[tuple[int, int]]:
        known = sorted(self.table[node], key=lambda o: o ^ target)[: self.k]
        return [(o, o) for o in known]

    def true_closest(self, target: int, k: int) -> list[int]:
        return sorted(self.ids, key=lambda o: o ^ target)[:k]


def drive(lookup: Lookup, overlay: Overlay, dead=frozenset(), answers=None) -> None:
    answers = answers or {}
    while not lookup.done:
        batch = lookup.next_requests()
        assert batch, "a lookup that is not done must have something to ask"
        for node_id, _ in batch:
            if node_id in dead:
                lookup.on_failure(node_id)
            else:
                lookup.on_response(
                    node_id, overlay.closer(node_id, lookup.target), answers.get(node_id)
                )


def test_exhaustive_lookup_finds_the_true_k_closest_nodes():
    overlay = Overlay(200, seed=1)
    rng = random.Random(2)
    for _ in range(20):
        target = rng.randrange(ID_LIMIT)
        start = rng.choice(overlay.ids)
        lookup = Lookup(target, overlay.closer(start, target), k=8, alpha=3)
        drive(lookup, overlay)
        assert [n for n, _ in lookup.closest()] == overlay.true_closest(target, 8)


def test_lookup_rounds_never_exceed_the_ttl():
    overlay = Overlay(300, seed=3, k=4)
    rng = random.Random(4)
    for ttl in (1, 2, 3):
        target = rng.randrange(ID_LIMIT)
        start = rng.choice(overlay.ids)
        lookup = Lookup(target, overlay.closer(start, target)[:3], k=4, alpha=1, ttl=ttl)
        drive(lookup, overlay)
        assert lookup.rounds <= ttl
        assert lookup.done


def test_first_answer_ends_the_lookup_and_records_who_answered():
    overlay = Overlay(200, seed=5)
    target = overlay.ids[17]
    holder = overlay.true_closest(target, 3)[2]
    start = overlay.true_closest(target, 200)[-1]
    lookup = Lookup(target, overlay.closer(start, target), k=8, alpha=3)
    drive(lookup, overlay, answers={holder: "pointer"})
    assert lookup.answer == "pointer"
    assert lookup.answered_by == holder
    assert lookup.answer_round == lookup.rounds
    assert lookup.next_requests() == []


def test_a_round_asks_at_most_alpha_nodes_while_it_makes_progress():
    seeds = [(i, i) for i in range(1, 10)]
    lookup = Lookup(0, seeds, k=8, alpha=3)
    first = lookup.next_requests()
    assert [n for n, _ in first] == [1, 2, 3]
    assert lookup.rounds == 1


def test_no_new_round_starts_while_requests_are_outstanding():
    lookup = Lookup(0, [(i, i) for i in range(1, 10)], k=8, alpha=3)
    lookup.next_requests()
    lookup.on_response(1, [])
    assert lookup.next_requests() == []
    assert lookup.pending == 2


def test_a_round_without_progress_asks_every_remaining_close_node():
    lookup = Lookup(0, [(i, i) for i in range(1, 10)], k=8, alpha=3)
    for node_id, _ in lookup.next_requests():
        lookup.on_response(node_id, [])
    second = lookup.next_requests()
    assert [n for n, _ in second] == [4, 5, 6, 7, 8]


def test_failed_nodes_are_forgotten_and_replaced_by_the_next_closest():
    lookup = Lookup(0, [(i, i) for i in range(1, 6)], k=2, alpha=2)
    for node_id, _ in lookup.next_requests():
        lookup.on_failure(node_id)
    assert [n for n, _ in lookup.next_requests()] == [3, 4]
    lookup.on_response(3, [])
    lookup.on_response(4, [])
    assert lookup.done
    assert [n for n, _ in lookup.closest()] == [3, 4]


def test_excluded_ids_and_duplicates_are_never_queried():
    lookup = Lookup(0, [(1, "a"), (1, "b"), (2, "c")], k=4, alpha=3, exclude=[2])
    assert lookup.next_requests() == [(1, "a")]


def test_unsolicited_responses_are_ignored():
    lookup = Lookup(0, [(1, 1)], k=4, alpha=3)
    lookup.on_response(99, [(5, 5)], answer="forged")
    assert lookup.answer is None
    assert lookup.next_requests() == [(1, 1)]


def test_a_lookup_with_no_seeds_is_done_at_once():
    lookup = Lookup(5, [], k=4)
    assert lookup.done
    assert lookup.next_requests() == []
    assert lookup.rounds == 0


@pytest.mark.parametrize(
    "kwargs", [{"target": -1}, {"target": ID_LIMIT}, {"k": 0}, {"alpha": 0}, {"ttl": 0}]
)
def test_out_of_range_parameters_are_refused(kwargs):
    args = {"target": 0, "k": 4, "alpha": 3, "ttl": None} | kwargs
    with pytest.raises(ValueError):
        Lookup(args["target"], [], k=args["k"], alpha=args["alpha"], ttl=args["ttl"])


@given(seed=st.integers(0, 10_000), dead_share=st.floats(0, 0.5))
def test_exhaustive_lookups_are_deterministic_and_terminate(seed, dead_share):
    overlay = Overlay(60, seed=seed % 7)
    rng = random.Random(seed)
    dead = frozenset(n for n in overlay.ids if rng.random() < dead_share)
    target = rng.randrange(ID_LIMIT)
    start = rng.choice(overlay.ids)
    runs = []
    for _ in range(2):
        lookup = Lookup(target, overlay.closer(start, target), k=8, alpha=3)
        drive(lookup, overlay, dead)
        assert lookup.rounds <= len(overlay.ids)
        runs.append(([n for n, _ in lookup.responded()], lookup.rounds))
    assert runs[0] == runs[1]
    assert not set(runs[0][0]) & dead

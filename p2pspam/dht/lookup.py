"""Sans-IO iterative Kademlia lookup.

One :class:`Lookup` walks the overlay toward a 160-bit ``target`` (XOR metric). It never
touches a socket, a clock or an event loop: a driver (the asyncio peer in
``p2pspam.dht.node``, or the simulator in ``simulations/``) asks it which contacts to
query, sends the requests however it likes, and feeds back each response or failure.

Rounds. A *round* is one batch returned by :meth:`Lookup.next_requests`: the ``alpha``
closest known contacts not yet asked (or, when the previous round found nobody closer,
every not-yet-asked contact among the ``k`` closest, as in the Kademlia paper). A new
round starts only when every request of the previous one has been answered or failed.

TTL = maximum number of lookup rounds. With ``ttl=None`` the lookup is exhaustive: it
ends only when the ``k`` closest contacts it knows have all been asked, which makes the
set of nodes it visits a deterministic function of the answers it gets.

Answers. A response may carry an *answer* (a path pointer, an in-network evaluation
result, a stored value): the first answer ends the lookup, and :attr:`Lookup.answer`
holds it with :attr:`Lookup.answered_by` and :attr:`Lookup.answer_round`.

Contacts are opaque to this module (an ``(ip, port)`` pair for the peer, an index in the
simulator); only node ids (ints in ``[0, 2**160)``) are compared.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable
from typing import Any, Generic, TypeVar

ID_BITS = 160
ID_LIMIT = 1 << ID_BITS

C = TypeVar("C")

_NEW, _PENDING, _RESPONDED, _FAILED = 0, 1, 2, 3


class Lookup(Generic[C]):
    """The state of one iterative lookup toward ``target``.

    ``seeds`` are ``(node_id, contact)`` pairs to start from (usually the ``k`` closest
    entries of the caller's routing table); ``exclude`` lists node ids never to query
    (the caller's own id)."""

    __slots__ = (
        "_alpha",
        "_best_before_round",
        "_contacts",
        "_exclude",
        "_k",
        "_order",
        "_pending",
        "_state",
        "_ttl",
        "answer",
        "answer_round",
        "answered_by",
        "rounds",
        "target",
    )

    def __init__(
        self,
        target: int,
        seeds: Iterable[tuple[int, C]],
        k: int = 20,
        alpha: int = 3,
        ttl: int | None = None,
        exclude: Iterable[int] = (),
    ) -> None:
        if not 0 <= target < ID_LIMIT:
            raise ValueError(f"lookup target must be a 160-bit integer, got {target!r}")
        if k < 1 or alpha < 1:
            raise ValueError(f"k and alpha must be at least 1, got k={k}, alpha={alpha}")
        if ttl is not None and ttl < 1:
            raise ValueError(f"ttl must be at least 1 lookup round or None, got {ttl}")
        self.target = target
        self._k = k
        self._alpha = alpha
        self._ttl = ttl
        self._exclude = frozenset(exclude)
        self._contacts: dict[int, C] = {}
        self._state: dict[int, int] = {}
        # (distance, node_id) of every known, non-failed node, ascending.
        self._order: list[tuple[int, int]] = []
        self._pending = 0
        self.rounds = 0
        self.answer: Any = None
        self.answered_by: int | None = None
        self.answer_round: int | None = None
        self._best_before_round: int | None = None
        self._add(seeds)

    def _add(self, nodes: Iterable[tuple[int, C]]) -> None:
        target = self.target
        for node_id, contact in nodes:
            if node_id in self._state or node_id in self._exclude:
                continue
            if not 0 <= node_id < ID_LIMIT:
                continue
            self._state[node_id] = _NEW
            self._contacts[node_id] = contact
            insort(self._order, (node_id ^ target, node_id))

    def _window(self) -> list[int]:
        """Node ids of the ``k`` closest known nodes that have not failed."""
        return [node_id for _, node_id in self._order[: self._k]]

    @property
    def done(self) -> bool:
        """True once the lookup has an answer, used up its TTL, or has asked the ``k``
        closest contacts it knows (and no request is outstanding)."""
        if self.answer is not None:
            return True
        if self._pending:
            return False
        if self._ttl is not None and self.rounds >= self._ttl:
            return True
        return not any(self._state[n] == _NEW for n in self._window())

    @property
    def pending(self) -> int:
        """Number of requests sent and not yet answered or failed."""
        return self._pending

    def next_requests(self) -> list[tuple[int, C]]:
        """Start the next round and return its ``(node_id, contact)`` pairs to query.

        Returns an empty list while requests of the current round are outstanding, and
        once the lookup is done."""
        if self._pending or self.done:
            return []
        window = self._window()
        fresh = [n for n in window if self._state[n] == _NEW]
        best = self._order[0][0] if self._order else None
        stalled = (
            self.rounds > 0
            and self._best_before_round is not None
            and best is not None
            and best >= self._best_before_round
        )
        chosen = fresh if stalled else fresh[: self._alpha]
        self._best_before_round = best
        for node_id in chosen:
            self._state[node_id] = _PENDING
        self._pending = len(chosen)
        self.rounds += 1
        return [(n, self._contacts[n]) for n in chosen]

    def on_response(
        self, node_id: int, closer: Iterable[tuple[int, C]] = (), answer: Any = None
    ) -> None:
        """Record ``node_id``'s reply: the contacts it knows closer to the target, and its
        answer if it has one (the first answer ends the lookup)."""
        if self._state.get(node_id) != _PENDING:
            return
        self._state[node_id] = _RESPONDED
        self._pending -= 1
        if answer is not None and self.answer is None:
            self.answer = answer
            self.answered_by = node_id
            self.answer_round = self.rounds
        self._add(closer)

    def on_failure(self, node_id: int) -> None:
        """Record that ``node_id`` did not answer (timeout, refusal): it is forgotten."""
        if self._state.get(node_id) != _PENDING:
            return
        self._state[node_id] = _FAILED
        self._pending -= 1
        key = (node_id ^ self.target, node_id)
        idx = _bisect_index(self._order, key)
        if idx is not None:
            del self._order[idx]

    def closest(self, k: int | None = None) -> list[tuple[int, C]]:
        """The ``k`` (default: the lookup's k) closest nodes that responded, nearest
        first: where a value for ``target`` is stored."""
        limit = self._k if k is None else k
        out: list[tuple[int, C]] = []
        for _, node_id in self._order:
            if self._state[node_id] == _RESPONDED:
                out.append((node_id, self._contacts[node_id]))
                if len(out) == limit:
                    break
        return out

    def responded(self) -> list[tuple[int, C]]:
        """Every node that responded, nearest first (the lookup path, for pointers)."""
        return [
            (node_id, self._contacts[node_id])
            for _, node_id in self._order
            if self._state[node_id] == _RESPONDED
        ]


def _bisect_index(order: list[tuple[int, int]], key: tuple[int, int]) -> int | None:
    idx = bisect_left(order, key)
    if idx < len(order) and order[idx] == key:
        return idx
    return None

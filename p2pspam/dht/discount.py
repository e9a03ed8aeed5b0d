"""The ham-vote boilerplate discount at the node that evaluates a query (pure).

The rule is the replay simulator's, ``p2pspam.defences.network.ham_discounted``: a query
feature whose feature object holds at least ``ham_limit`` GUIDs that the policy decides
ham does not count toward any overlap, and is reported among the match's discounted
features. (The distinct-GUID discount, ``max_guids``, is ``p2pspam.adolr.query``'s own.)

A node of the network holds only some feature objects. Every entry it holds carries its
GUID's whole vector, and a GUID's entry is in the object of each of its features, so for a
query feature whose object is held elsewhere the node still knows a part of that object:
the entries held here whose vectors contain the feature. The rule is applied to that
view as well (it can only undercount ham GUIDs, never invent one). Without it a node
holding one feature object of a list footer would discount that feature only and count
the footer's other features, and the footer would match again.

Whether a GUID is ham is decided from the object record held here (the co-located copy
that publication stores next to every feature object): a node without the record cannot
count that GUID as ham.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping

from p2pspam.adolr.records import FeatureEntry, FeatureObject
from p2pspam.auth.policy import Policy
from p2pspam.defences.network import VoterSets, ham_discounted

MARKER = (b"\xff" * 20,)  # a one-GUID bottom-k sketch: "boilerplate" to evaluate()


class HamGuids(Container[bytes]):
    """The GUIDs decided ham, asked lazily: ``decide(guid)`` runs once per GUID."""

    def __init__(self, decide: Callable[[bytes], bool]) -> None:
        self._decide = decide
        self._known: dict[bytes, bool] = {}

    def __contains__(self, guid: object) -> bool:
        if not isinstance(guid, bytes):
            return False
        known = self._known.get(guid)
        if known is None:
            known = self._known[guid] = self._decide(guid)
        return known


def ham_discounted_objects(
    query_features: Iterable[int],
    objects: Mapping[int, FeatureObject],
    namespace: str,
    ham_guids: Container[bytes],
    ham_limit: int | None,
    now_ms: int | None,
    voters: VoterSets | None = None,
    policy: Policy | None = None,
) -> dict[int, FeatureObject]:
    """Return ``objects`` (query feature -> object held here) for ``evaluate`` with every
    query feature that the ham-vote rule discounts presented as a boilerplate object that
    keeps its entries (so that they still count through their other features). A feature
    whose object is not held is judged on the entries held here that contain it.
    ``ham_limit`` None: the rule is off and ``objects`` is returned unchanged."""
    out = dict(objects)
    if ham_limit is None:
        return out
    known: dict[bytes, FeatureEntry] = {}
    for obj in objects.values():
        for guid, entry in obj.entries.items():
            if entry.namespace == namespace and entry.live(now_ms):
                known.setdefault(guid, entry)
    for feature in set(query_features):
        held = objects.get(feature)
        if held is not None and held.boilerplate:
            continue  # already discounted
        entries = dict(held.entries) if held is not None else {}
        for guid, entry in known.items():
            if guid not in entries and feature in entry.features:
                entries[guid] = entry
        if len(entries) < 2:
            # its only GUID is either not ham or keeps its own match (see evaluate_held):
            # discounting it changes no match, so spare the tally
            continue
        if ham_discounted(FeatureObject(entries), ham_guids, ham_limit, voters, policy):
            kept = held.entries if held is not None else {}
            expires = max((e.expires_ms for e in entries.values()), default=0)
            out[feature] = FeatureObject(kept, MARKER, expires)
    return out

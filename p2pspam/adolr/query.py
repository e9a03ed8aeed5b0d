"""In-network evaluation of an approximate query (SpamWatch section 3.3, optimisation 2).

The query carries the whole feature vector. A node holding feature objects for some of its
features counts, for every GUID found there, the overlap between the query and the GUID's
full vector (which every entry carries), so it can answer with complete overlaps without
fetching the other feature objects.

Boilerplate discount: a query feature whose object (held here) is marked boilerplate, or
holds more than ``max_guids`` distinct live GUIDs, says little about a message; it does not
count toward any overlap and is reported in ``Match.discounted_features``. A node can only
discount the features whose objects it holds.

``len(query)`` in the ``thres`` rule is the number of distinct query features.

Refinements of the agreed interface: the threshold keyword is ``max_guids`` (the
interface's ``boilerplate_guids=``); ``evaluate`` also takes ``namespace`` and ``now_ms``
filters; ``Match`` also carries the matched GUID's ``namespace`` and ``features``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from p2pspam.adolr.records import (
    DEFAULT_CAP,
    FeatureEntry,
    FeatureObject,
    canonical_features,
    merge_entries,
)
from p2pspam.errors import ParameterError

DEFAULT_MAX_GUIDS = DEFAULT_CAP


@dataclass(frozen=True, slots=True)
class Match:
    """A GUID whose vector shares ``overlap >= thres`` counted features with the query.

    ``matched_features``: the shared features that counted (sorted); ``discounted_features``:
    the shared features that did not count because they are boilerplate (sorted);
    ``namespace`` and ``features``: the matched GUID's own vector."""

    guid: bytes
    overlap: int
    matched_features: tuple[int, ...]
    discounted_features: tuple[int, ...]
    namespace: str = ""
    features: tuple[int, ...] = ()


def check_query(query_features: Iterable[int], thres: int) -> frozenset[int]:
    """Return the distinct query features after checking them (uint64, 1..MAX_FEATURES)
    and ``0 < thres <= len(query)``; raise ParameterError with the reason otherwise."""
    features = frozenset(canonical_features(query_features))
    if type(thres) is not int:
        raise ParameterError(f"thres must be an integer, got {thres!r}")
    if not 0 < thres <= len(features):
        raise ParameterError(
            f"thres must satisfy 0 < thres <= {len(features)} (the number of distinct query "
            f"features), got {thres}"
        )
    return features


def is_discounted(obj: FeatureObject, max_guids: int, now_ms: int | None = None) -> bool:
    """True when ``obj`` is boilerplate or holds more than ``max_guids`` live GUIDs."""
    if obj.boilerplate_sketch:
        return True
    if len(obj.entries) <= max_guids:
        return False
    return sum(1 for e in obj.entries.values() if e.live(now_ms)) > max_guids


def evaluate(
    query_features: Iterable[int],
    thres: int,
    feature_objects: Mapping[int, FeatureObject],
    *,
    namespace: str | None = None,
    now_ms: int | None = None,
    max_guids: int = DEFAULT_MAX_GUIDS,
) -> list[Match]:
    """Return every GUID found in ``feature_objects`` (query feature -> its object held
    here) whose vector shares at least ``thres`` non-discounted features with the query.

    Only live entries count (not tombstoned; not expired when ``now_ms`` is given) and,
    when ``namespace`` is given, only entries of that namespace. Results are ordered by
    overlap descending, then GUID ascending."""
    query = check_query(query_features, thres)
    if type(max_guids) is not int or max_guids < 1:
        raise ParameterError(f"max_guids must be a positive integer, got {max_guids!r}")
    discounted: set[int] = set()
    candidates: dict[bytes, FeatureEntry] = {}
    for feature, obj in feature_objects.items():
        if feature not in query:
            continue
        if is_discounted(obj, max_guids, now_ms):
            discounted.add(feature)
        for entry in obj.entries.values():
            if not entry.live(now_ms):
                continue
            if namespace is not None and entry.namespace != namespace:
                continue
            old = candidates.get(entry.guid)
            if old is None:
                candidates[entry.guid] = entry
            elif old is not entry:
                candidates[entry.guid] = merge_entries(old, entry)
    matches = []
    for guid, entry in candidates.items():
        shared = query.intersection(entry.features)
        counted = shared - discounted
        if len(counted) >= thres:
            matches.append(
                Match(
                    guid=guid,
                    overlap=len(counted),
                    matched_features=tuple(sorted(counted)),
                    discounted_features=tuple(sorted(shared & discounted)),
                    namespace=entry.namespace,
                    features=entry.features,
                )
            )
    matches.sort(key=lambda m: (-m.overlap, m.guid))
    return matches

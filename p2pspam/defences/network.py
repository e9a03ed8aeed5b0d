"""The network defences, as a thin layer over ``p2pspam.adolr``.

Two rules decide that a feature is boilerplate and must not count toward an overlap:

1. distinct GUIDs: its feature object holds more than ``max_guids`` distinct GUIDs (or
   was turned into a boilerplate marker past the cap). This is ``ApproxIndex``'s own
   discount; here it is only configured.
2. ham-voted GUIDs: its feature object holds at least ``ham_guids`` GUIDs that the
   policy decides are ham, *and* the votes of the distinct users on all the GUIDs that
   hold it, pooled, are decided ham by the same policy (a user who voted spam on one
   and ham on another counts as ham: to them the feature is in both). A ham vote on a
   message therefore weakens *every* GUID that matched it through the shared features
   (a list footer, a template), not only the message's own GUID, while those GUIDs'
   other features (a spam's own content) keep counting; and one user's ham vote cannot
   switch off a campaign that more users marked (with the default policy, a 1:1 tie
   stays spam), so disabling a campaign costs as many credentials as it has markers.
   ``ApproxIndex.route_approx`` has no such rule, so :func:`route` applies it
   by presenting those objects to ``p2pspam.adolr.query.evaluate`` as boilerplate
   markers; discounted features are reported in ``Match.discounted_features`` as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Iterable

from p2pspam.adolr.index import ApproxIndex
from p2pspam.adolr.query import Match, evaluate
from p2pspam.adolr.records import FeatureObject
from p2pspam.auth.policy import Policy
from p2pspam.auth.tally import TallySummary

# guid -> (users whose live vote on it is spam, users whose live vote on it is ham)
VoterSets = Callable[[bytes], tuple[Collection[str], Collection[str]]]

_MARKER = (b"\xff" * 20,)  # a one-GUID bottom-k sketch: "boilerplate" to evaluate()


def ham_discounted(
    obj: FeatureObject,
    ham_guids: Container[bytes],
    limit: int,
    voters: VoterSets | None = None,
    policy: Policy | None = None,
) -> bool:
    """True when ``obj`` holds at least ``limit`` GUIDs decided ham and (given
    ``voters``) the pooled votes of the distinct users on its GUIDs are decided ham."""
    if obj.boilerplate:
        return False  # already discounted
    found = 0
    for guid in obj.entries:
        if guid in ham_guids:
            found += 1
            if found >= limit:
                break
    if found < limit:
        return False
    return voters is None or pooled_ham(obj, voters, policy or Policy())


def pooled_ham(obj: FeatureObject, voters: VoterSets, policy: Policy) -> bool:
    """True when the policy decides ham on the distinct users' votes pooled over every
    GUID of ``obj`` (a user with a spam vote on one GUID and a ham vote on another
    counts once, as ham)."""
    spam: set[str] = set()
    ham: set[str] = set()
    for guid in obj.entries:
        spam_users, ham_users = voters(guid)
        spam.update(spam_users)
        ham.update(ham_users)
    spam -= ham
    pooled = TallySummary(spam=len(spam), ham=len(ham), voters=len(spam) + len(ham))
    return policy.decide(pooled) == "ham"


def route(
    index: ApproxIndex,
    features: Iterable[int],
    namespace: str,
    thres: int,
    now_ms: int | None,
    ham_guids: Container[bytes] = frozenset(),
    ham_limit: int | None = None,
    voters: VoterSets | None = None,
    policy: Policy | None = None,
) -> list[Match]:
    """``route_approx`` with the ham-voted discount (``ham_limit`` None: rule 1 only)."""
    features = tuple(features)
    if ham_limit is None:
        return index.route_approx(features, namespace, thres, now_ms)
    objects = index.feature_objects_for(namespace, features)
    for feature, obj in list(objects.items()):
        if ham_discounted(obj, ham_guids, ham_limit, voters, policy):
            expires = max((e.expires_ms for e in obj.entries.values()), default=0)
            objects[feature] = FeatureObject({}, _MARKER, expires)
    return evaluate(
        features, thres, objects, namespace=namespace, now_ms=now_ms, max_guids=index.max_guids
    )

"""Replicas (ApproxIndex and Store instances) that receive the same publications,
unpublications, records and pointers in any order, with duplicates and with whole-object
replication between them, converge to the same state; so do they after expiring at the
same time."""

import tempfile
from pathlib import Path

from adolr.strategies import GUIDS, NAMESPACES, guids, pointers, records, times, ttls, vectors
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from p2pspam.adolr.index import ApproxIndex
from p2pspam.peer.store import Store

CAP = 3
MAX_VOTES = 2
REPLICAS = 4
QUERY = list(range(12))


def _apply(replica, op):
    kind, *args = op
    if kind == "publish":
        vector, guid, now, ttl, votes = args
        replica.publish_approx(vector, guid, now, ttl, votes)
    elif kind == "unpublish":
        vector, guid, now, ttl = args
        replica.unpublish_approx(vector, guid, now, ttl)
    elif kind == "record":
        replica.put_record(args[0])
    else:
        replica.put_pointer(args[0])


class Replicas(RuleBasedStateMachine):
    """Operations go to a shared log; each replica receives any of them, any number of
    times, in any order; a sync delivers whatever each replica missed."""

    @initialize()
    def start(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.replicas = [
            ApproxIndex(cap=CAP, max_votes=MAX_VOTES),
            ApproxIndex(cap=CAP, max_votes=MAX_VOTES),
            Store(":memory:", cap=CAP, max_votes=MAX_VOTES),
            Store(Path(self.tmp.name) / "replica.sqlite3", cap=CAP, max_votes=MAX_VOTES),
        ]
        self.log = []
        self.delivered = [set() for _ in range(REPLICAS)]

    def teardown(self):
        for r in getattr(self, "replicas", []):
            if isinstance(r, Store):
                r.close()
        if hasattr(self, "tmp"):
            self.tmp.cleanup()

    @rule(vector=vectors, guid=guids, now=times, ttl=ttls, votes=records().map(lambda r: r.votes))
    def publish(self, vector, guid, now, ttl, votes):
        self.log.append(("publish", vector, guid, now, ttl, votes))

    @rule(vector=vectors, guid=guids, now=times, ttl=ttls)
    def unpublish(self, vector, guid, now, ttl):
        self.log.append(("unpublish", vector, guid, now, ttl))

    @rule(record=records())
    def put_record(self, record):
        self.log.append(("record", record))

    @rule(pointer=pointers())
    def put_pointer(self, pointer):
        self.log.append(("pointer", pointer))

    @precondition(lambda self: self.log)
    @rule(replica=st.integers(0, REPLICAS - 1), data=st.data())
    def deliver(self, replica, data):
        index = data.draw(st.integers(0, len(self.log) - 1))
        _apply(self.replicas[replica], self.log[index])
        self.delivered[replica].add(index)

    @rule(src=st.integers(0, REPLICAS - 1), dst=st.integers(0, REPLICAS - 1))
    def replicate(self, src, dst):
        objects, recs = self.replicas[src].snapshot()
        for key, obj in objects.items():
            self.replicas[dst].merge_feature_object(key, obj)
        for record in recs.values():
            self.replicas[dst].put_record(record)

    @rule(data=st.data())
    def sync_and_compare(self, data):
        for i, replica in enumerate(self.replicas):
            missing = [j for j in range(len(self.log)) if j not in self.delivered[i]]
            for j in data.draw(st.permutations(missing)):
                _apply(replica, self.log[j])
            self.delivered[i] = set(range(len(self.log)))
        self._assert_converged()

    @rule(data=st.data(), now=st.integers(0, 130))
    def sync_then_expire(self, data, now):
        self.sync_and_compare(data)
        drops = {r.expire(now) for r in self.replicas}
        assert len(drops) == 1
        self._assert_converged()
        # Expiry is local garbage collection: ops delivered before it are not replayed.
        self.log = []
        self.delivered = [set() for _ in range(REPLICAS)]

    def _assert_converged(self):
        first, *others = self.replicas
        reference = first.snapshot()
        for other in others:
            assert other.snapshot() == reference
        for ns in NAMESPACES:
            for thres in (1, 3):
                expected = first.route_approx(QUERY, ns, thres)
                for other in others:
                    assert other.route_approx(QUERY, ns, thres) == expected
        for key in GUIDS:
            expected = first.get_pointers(key)
            for other in others:
                assert other.get_pointers(key) == expected


Replicas.TestCase.settings = settings(max_examples=40, stateful_step_count=40, deadline=None)
TestReplicasConverge = Replicas.TestCase

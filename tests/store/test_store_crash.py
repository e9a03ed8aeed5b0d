"""A process that acknowledged writes and is then killed with SIGKILL loses none of them,
and no transaction is left half-applied."""

import os
import signal
import subprocess
import sys

from p2pspam.adolr.keys import feature_key
from p2pspam.peer.store import Store

NS = "ata/1/L=50"
ACKS_BEFORE_KILL = 150
BATCH = 5

# Writes publications in transactions of BATCH, printing "ack N" after each commit
# (N = number of publications committed so far), forever.
WRITER = f"""
import sys
from p2pspam.adolr.records import Vector
from p2pspam.peer.store import Store

store = Store(sys.argv[1])
i = 0
while True:
    with store.transaction():
        for _ in range({BATCH}):
            vector = Vector({NS!r}, (i, 10**6 + i, 2 * 10**6 + i))
            store.publish_approx(vector, i.to_bytes(20, "big"), 0, 10**12,
                                 votes={{"ann": (i, b"vote")}})
            i += 1
    print("ack", i, flush=True)
"""


def _features(i):
    return (i, 10**6 + i, 2 * 10**6 + i)


def _held(store, i):
    """Return how many of the parts of publication ``i`` the store holds (0 to 4)."""
    guid = i.to_bytes(20, "big")
    parts = [store.get_object(guid) is not None]
    for f in _features(i):
        obj = store.get_feature_object(feature_key(NS, f))
        parts.append(obj is not None and guid in obj.entries)
    return sum(parts)


def test_every_acknowledged_publication_survives_sigkill(tmp_path):
    path = tmp_path / "peer.sqlite3"
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    acked = 0
    try:
        for line in child.stdout:
            acked = int(line.split()[1])
            if acked >= ACKS_BEFORE_KILL * BATCH:
                break
        os.kill(child.pid, signal.SIGKILL)
        rest, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL, err
    for line in rest.splitlines():
        acked = max(acked, int(line.split()[1]))
    assert acked >= ACKS_BEFORE_KILL * BATCH

    with Store(path) as store:
        missing = [i for i in range(acked) if _held(store, i) != 4]
        assert missing == []
        assert [m.guid for m in store.route_approx(_features(acked - 1), NS, 3)] == [
            (acked - 1).to_bytes(20, "big")
        ]
        # The batch in flight at the kill is all there or not there at all.
        in_flight = [_held(store, i) for i in range(acked, acked + BATCH)]
        assert in_flight in ([4] * BATCH, [0] * BATCH)

"""The online line-block bulk detector (Verma & Dhar 2014) and ``agent bulk``."""

import json
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pspam.errors import InputError, ParameterError
from p2pspam.fingerprint.lineblock import (
    HEADER,
    BulkConfig,
    BulkDetector,
    BulkResult,
    bulk_header,
    message_blocks,
    text_blocks,
)

SMALL = BulkConfig(size=8192, hashes=10, slots=4, slot_ms=60_000)
CAMPAIGN = [
    "Exclusive offer for our valued customers",
    "Buy genuine designer watches at half price",
    "Free worldwide shipping on every order this week",
    "Visit our online store and enter code SAVE50",
    "Unsubscribe at any time from our mailing list",
]


def _near_copy(n: int) -> str:
    return "\n".join([f"Dear customer number {n}", *CAMPAIGN])


def _mail(body: str) -> bytes:
    return f"From: a@example.net\nSubject: offer\n\n{body}\n".encode()


def test_ten_near_copies_within_one_slot_are_flagged():
    detector = BulkDetector(SMALL)
    results = [detector.observe_blocks(text_blocks(_near_copy(n)), 1000 + n) for n in range(10)]
    assert results[0].percent == 0 and not results[0].alert
    assert all(r.alert and r.percent == 83 for r in results[1:])


def test_near_copies_after_every_slot_expired_are_not_flagged():
    detector = BulkDetector(SMALL)
    for n in range(10):
        detector.observe_blocks(text_blocks(_near_copy(n)), 1000 + n)
    later = SMALL.slots * SMALL.slot_ms + 1000
    result = detector.observe_blocks(text_blocks(_near_copy(99)), later)
    assert result.matched == 0 and not result.alert


def test_a_copy_is_still_flagged_while_its_slot_is_live():
    detector = BulkDetector(SMALL)
    detector.observe_blocks(text_blocks(_near_copy(1)), 0)
    last_live = (SMALL.slots - 1) * SMALL.slot_ms + 59_999
    assert detector.observe_blocks(text_blocks(_near_copy(2)), last_live).alert


def test_memory_stays_at_the_configured_size_under_100000_messages():
    config = BulkConfig(size=4096, hashes=10, slots=4, slot_ms=1000)
    detector = BulkDetector(config)
    expected = config.slots * config.size * 2 + config.slots * 8
    assert detector.memory_bytes == expected
    counters = detector.counters
    for n in range(95_000):
        detector.observe_blocks([f"unique line {n}", "shared footer line"], n * 7)
    tracemalloc.start()  # the last 5,000 under tracing: growth per message would show
    before, _ = tracemalloc.get_traced_memory()
    for n in range(95_000, 100_000):
        detector.observe_blocks([f"unique line {n}", "shared footer line"], n * 7)
    after, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert detector.memory_bytes == expected and detector.counters is counters
    assert after - before < 16 * 1024  # nothing is kept per message


_WORDS = [
    "buy",
    "cheap",
    "watch",
    "now",
    "best",
    "price",
    "web",
    "click",
    "here",
    "order",
    "dear",
    "john",
    "free",
]
lines = st.lists(
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6).map(" ".join),
    min_size=1,
    max_size=12,
)


@given(lines, lines, st.randoms(use_true_random=False))
def test_reordered_paragraphs_keep_their_match_percentage(history, message, rnd):
    shuffled = list(message)
    rnd.shuffle(shuffled)
    results = []
    for body in (message, shuffled):
        detector = BulkDetector(BulkConfig(size=4096, slots=2, slot_ms=1000))
        detector.observe_blocks(text_blocks("\n".join(history)), 0)
        results.append(detector.observe_blocks(text_blocks("\n".join(body)), 10))
    assert results[0] == results[1]


def test_blocks_come_from_the_decoded_body_lines_of_a_mime_message():
    raw = (
        b"Subject: x\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n"
        b"Content-Transfer-Encoding: quoted-printable\n\nFirst  LINE here\n\nsecond=20line\n"
    )
    assert message_blocks(raw) == ["first line here", "second line"]


def test_a_message_without_text_scores_zero():
    result = BulkDetector(SMALL).observe_message(b"Subject: empty\n\n", 0)
    assert result == BulkResult(0, 0, 0, False)


def test_bulk_header_carries_the_percentage():
    assert bulk_header(BulkResult(3, 2, 66, True)) == (HEADER, "66")
    assert HEADER == "X-P2PSpam-Bulk"


def test_state_round_trip_keeps_the_counts():
    detector = BulkDetector(SMALL)
    detector.observe_blocks(text_blocks(_near_copy(1)), 5)
    copy = BulkDetector.from_state(detector.state())
    assert copy.observe_blocks(text_blocks(_near_copy(2)), 6).alert


@pytest.mark.parametrize(
    "damage",
    [
        lambda s: s.pop("counters"),
        lambda s: s.__setitem__("counters", s["counters"][:1]),
        lambda s: s.__setitem__("version", np.array([9])),
        lambda s: s.__setitem__("config", np.array([1, 2, 3])),
        lambda s: s.__setitem__("counters", s["counters"].astype(np.int8)),
    ],
)
def test_a_damaged_state_is_refused_with_an_input_error(damage):
    state = BulkDetector(SMALL).state()
    damage(state)
    with pytest.raises(InputError):
        BulkDetector.from_state(state)


@pytest.mark.parametrize(
    "config", [{"size": 10}, {"hashes": 0}, {"slots": 0}, {"alert_pct": 101}, {"slot_ms": -1}]
)
def test_bad_configuration_is_refused(config):
    with pytest.raises(ParameterError):
        BulkConfig(**config)


def _bulk(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "p2pspam.cli", "agent", "bulk", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_agent_bulk_flags_copies_and_keeps_state_between_runs(tmp_path):
    for n in range(3):
        (tmp_path / f"m{n}.eml").write_bytes(_mail(_near_copy(n)))
    state = str(tmp_path / "bulk.npz")
    first = _bulk("--json", "--state", state, "--size", "4096", str(tmp_path / "m0.eml"))
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["percent"] == 0
    second = _bulk("--json", "--state", state, str(tmp_path / "m1.eml"), str(tmp_path / "m2.eml"))
    rows = [json.loads(line) for line in second.stdout.splitlines()]
    assert [(r["percent"], r["bulk"]) for r in rows] == [(83, True), (83, True)]


def test_agent_bulk_refuses_a_state_file_that_is_not_one(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not numpy")
    (tmp_path / "m.eml").write_bytes(_mail("hello"))
    done = _bulk("--state", str(bad), str(tmp_path / "m.eml"))
    assert done.returncode == 2
    assert "state" in done.stderr


def test_bulk_state_saves_the_counts_for_the_next_delivery(tmp_path):
    from agent.commands.bulk import bulk_state

    path = tmp_path / "bulk.npz"
    with bulk_state(path, {"size": 1024}) as detector:
        assert not detector.observe_message(_mail(_near_copy(1)), 0).alert
    with bulk_state(path) as detector:
        assert detector.observe_message(_mail(_near_copy(2)), 1000).alert
    assert detector.config.size == 1024

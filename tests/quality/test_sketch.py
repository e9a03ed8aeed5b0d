"""The agent's window sketch and ATA's exclusion predicate."""

from __future__ import annotations

import numpy as np
import pytest

from p2pspam.defences.sketch import WindowSketch
from p2pspam.errors import ParameterError
from p2pspam.fingerprint.ata import (
    ata_features,
    ata_features_batch,
    bit_reverse64,
    code_points,
    exact_features,
    window_checksums,
)

FOOTER = (
    "posted through the riverside gardening circle. meetings every first tuesday at the "
    "library hall, bring your own mug and a plant to swap with the other members."
)


def _message(i: int) -> str:
    words = " ".join(f"word{i}x{j}" for j in range(60))
    return f"{words} {FOOTER}"


def _footer_checksums(length: int = 50) -> set[int]:
    return {int(v) for v in window_checksums(code_points(FOOTER), length)}


def test_windows_seen_threshold_times_are_excluded() -> None:
    sketch = WindowSketch(3)
    for i in range(3):
        sketch.learn(_message(i))
    features = ata_features(_message(99), exclude=sketch.exclude)
    raw = {int(v) for v in bit_reverse64(np.array(features, dtype=np.uint64))}
    assert len(features) == 10
    assert not raw & _footer_checksums()


def test_windows_seen_fewer_times_are_still_selectable() -> None:
    sketch = WindowSketch(3)
    for i in range(2):
        sketch.learn(_message(i))
    assert ata_features(_message(99), exclude=sketch.exclude) == ata_features(_message(99))


def test_the_sketch_keeps_counters_only_and_stays_bounded() -> None:
    sketch = WindowSketch(2, width_bits=10, depth=2)
    for i in range(200):
        sketch.learn(_message(i))
    assert sketch.counts.shape == (2, 1024)
    assert sketch.inserted < 1024  # aging halved the counters on the way


def test_sketch_round_trips_through_bytes() -> None:
    sketch = WindowSketch(3)
    sketch.learn(_message(1))
    again = WindowSketch.from_bytes(sketch.to_bytes())
    assert np.array_equal(again.counts, sketch.counts)
    assert again.threshold == 3


@pytest.mark.parametrize("data", [b"", b"garbage", WindowSketch(3).to_bytes()[:-1]])
def test_malformed_sketch_bytes_are_refused(data: bytes) -> None:
    with pytest.raises(ParameterError):
        WindowSketch.from_bytes(data)


def test_ata_without_exclusion_is_unchanged() -> None:
    text = _message(5)
    assert ata_features(text, exclude=None) == exact_features(text)


def test_ata_exclusion_selects_the_top_of_the_remaining_windows() -> None:
    text = _message(5)
    checksums = window_checksums(code_points(text), 50)
    banned = set(np.sort(np.unique(checksums))[::-1][:7].tolist())

    def exclude(values: np.ndarray) -> np.ndarray:
        return np.isin(values, np.array(sorted(banned), dtype=np.uint64))

    rest = np.unique(checksums[~exclude(checksums)])[::-1][:10]
    expected = [int(v) for v in bit_reverse64(rest)]
    assert ata_features(text, exclude=exclude) == expected
    assert exact_features(text, exclude=exclude) == expected
    assert ata_features_batch([text, text], exclude=exclude) == [expected, expected]


def test_excluding_everything_leaves_no_features() -> None:
    text = _message(5)
    assert ata_features(text, exclude=lambda v: np.ones(len(v), dtype=bool)) == []

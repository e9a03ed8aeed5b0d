"""The numpy-free sketch path (``SketchView`` + ``reference_features``, what one-message
processes use) gives exactly the vectors of the numpy path (``WindowSketch`` + ATA)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pspam.defences.sketch import SketchView, WindowSketch
from p2pspam.errors import ParameterError
from p2pspam.fingerprint.ata import ata_features
from p2pspam.fingerprint.ata_scheme import single_features
from p2pspam.fingerprint.reference import reference_features

TEXT = st.text(alphabet="abcde fghij\u00e9\u4e2d", min_size=0, max_size=600)


def _sketch(learned: list[str], threshold: int) -> WindowSketch:
    sketch = WindowSketch(threshold, width_bits=10, depth=3, sample=16)
    for text in learned:
        sketch.learn(text)
    return sketch


@settings(max_examples=60, deadline=None)
@given(
    learned=st.lists(TEXT, max_size=6),
    text=TEXT,
    threshold=st.integers(1, 3),
    count=st.integers(1, 12),
)
def test_pure_and_numpy_exclusions_give_the_same_features(
    learned: list[str], text: str, threshold: int, count: int
) -> None:
    shared = "the footer every message of the list carries, " * 3
    sketch = _sketch([t + shared for t in learned], threshold)
    view = SketchView(sketch.to_bytes())
    body = text + shared
    numpy_path = ata_features(body, 50, count, sketch.exclude)
    assert reference_features(body, 50, count, view.exclude) == numpy_path
    assert single_features(body, 50, count, view.exclude) == numpy_path
    # the pure predicate is also accepted by the numpy ATA
    assert ata_features(body, 50, count, view.exclude) == numpy_path


@settings(max_examples=30, deadline=None)
@given(learned=st.lists(TEXT, max_size=4), probes=st.lists(st.integers(0, (1 << 64) - 1)))
def test_the_view_estimates_what_the_sketch_estimates(
    learned: list[str], probes: list[int]
) -> None:
    import numpy as np

    sketch = _sketch(learned, 2)
    view = SketchView(sketch.to_bytes())
    probes += [int(v) for v in sketch.candidates("".join(learned))[:50]]
    expected = sketch.estimate(np.array(probes, dtype=np.uint64)).tolist()
    assert [view.estimate(p) for p in probes] == expected


def test_unlearn_takes_a_learned_message_back() -> None:
    import numpy as np

    sketch = WindowSketch(2)
    sketch.learn("a list footer that keeps coming back " * 4)
    before = sketch.counts.copy()
    sketch.learn("one spam that was kept by mistake, then moved to junk " * 3)
    sketch.unlearn("one spam that was kept by mistake, then moved to junk " * 3)
    assert np.array_equal(sketch.counts, before)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_the_view_refuses_malformed_bytes_with_a_parameter_error(data: bytes) -> None:
    good = WindowSketch(2, width_bits=8, depth=1).to_bytes()
    for candidate in (data, good[: len(good) // 2] + data, good[:72] + data):
        if candidate == good:
            continue
        with pytest.raises(ParameterError):
            SketchView(candidate)

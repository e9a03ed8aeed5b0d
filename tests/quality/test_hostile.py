"""Hostile input: the defences never crash on arbitrary bytes or text."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pspam.defences.body import defended_body
from p2pspam.defences.sketch import SKETCH_FORMAT, WindowSketch
from p2pspam.defences.strip import StripOptions, strip_boilerplate
from p2pspam.errors import ParameterError

MAIL = (
    b"From: a@example.org\nContent-Type: multipart/alternative; boundary=b\n\n--b\n"
    b"Content-Type: text/html; charset=utf-8\n\n<p>hello</p><p>unsubscribe here</p>\n--b--\n"
)


@given(st.binary(max_size=2000))
def test_defended_body_accepts_any_bytes(raw: bytes) -> None:
    body = defended_body(raw, StripOptions())
    assert isinstance(body.text, str)


@given(st.integers(min_value=0, max_value=len(MAIL)))
def test_defended_body_accepts_truncated_mail(cut: int) -> None:
    assert isinstance(defended_body(MAIL[:cut], StripOptions()).text, str)


@given(st.text(max_size=3000))
def test_stripping_only_removes_lines(text: str) -> None:
    kept = [x for x in strip_boilerplate(text, StripOptions()).split("\n") if x]
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    it = iter(lines)
    assert all(any(line == other for other in it) for line in kept)  # an ordered subset


@given(st.binary(max_size=300))
def test_sketch_loading_refuses_garbage(data: bytes) -> None:
    with pytest.raises(ParameterError):
        WindowSketch.from_bytes(data.replace(SKETCH_FORMAT, b""))


@given(st.binary(min_size=48, max_size=400))
def test_sketch_loading_of_a_corrupt_body_fails_cleanly_or_loads(tail: bytes) -> None:
    with contextlib.suppress(ParameterError):
        sketch = WindowSketch.from_bytes(SKETCH_FORMAT + tail)
        assert sketch.counts.ndim == 2

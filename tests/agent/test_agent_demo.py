"""The full demo story: one vote protects the other users, with no false positive."""

from __future__ import annotations

import io

from rich.console import Console

from agent.demo import full_demo


def test_the_demo_detects_every_edited_copy_without_false_positives() -> None:
    output = io.StringIO()
    figures = full_demo(Console(file=output, width=120), peers=16)
    assert figures["spam"] == 4 and figures["detected"] == 4
    assert figures["ham"] == 2 and figures["false_positives"] == 0
    assert "self-test: PASSED" in output.getvalue()
    assert "What each user's filter decided" in output.getvalue()

"""The X-P2PSpam-* headers: one printable line each, inserted without touching the rest."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent.headers import add_headers, safe_value, verdict_headers
from agent.verdicts import Match, Verdict


@given(st.text())
def test_header_values_are_one_printable_ascii_line(text: str) -> None:
    value = safe_value(text)
    assert all(0x20 <= ord(c) <= 0x7E for c in value)
    assert len(value) <= 200


def test_a_failure_gives_only_the_status_header_with_the_reason() -> None:
    assert verdict_headers(None, "no peer\nanswered") == [
        ("X-P2PSpam-Status", "Unknown (no peer answered)")
    ]


def test_a_spam_verdict_names_its_match_and_votes() -> None:
    match = Match(bytes(range(20)), 7, 2, 1, 3, None, False)
    verdict = Verdict("m", "spam", scheme="ata", namespace="ata/1/L=50", features=10, thres=3,
                      match=match)  # fmt: skip
    headers = dict(verdict_headers(verdict))
    assert headers["X-P2PSpam-Status"] == "Yes"
    assert headers["X-P2PSpam-Score"] == "overlap=7/10 thres=3 spam=2 ham=1 scheme=ata/1/L=50"
    assert headers["X-P2PSpam-Match"] == bytes(range(20)).hex() + " (spam)"


def test_headers_go_after_an_mbox_from_line() -> None:
    out = add_headers(b"From a@b Thu\nSubject: x\n\nbody", [("X-A", "1")])
    assert out == b"From a@b Thu\nX-A: 1\nSubject: x\n\nbody"


def test_headers_use_the_message_line_ending() -> None:
    assert add_headers(b"Subject: x\r\n\r\nbody", [("X-A", "1")]).startswith(b"X-A: 1\r\n")
    assert add_headers(b"Subject: x\n\nbody", [("X-A", "1")]).startswith(b"X-A: 1\nSubject")

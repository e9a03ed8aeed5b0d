"""How we make sure no code path counts an unverified vote: a VerifiedVote is only made
by VoteVerifier (checked at run time, and here in the source tree), and tallies accept
nothing else (checked in test_tally)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    p
    for top in ("p2pspam", "agent", "simulations")
    if (ROOT / top).is_dir()
    for p in (ROOT / top).rglob("*.py")
]


def test_only_the_verifier_constructs_verified_votes():
    makers = [
        p.relative_to(ROOT).as_posix()
        for p in SOURCES
        if re.search(r"\bVerifiedVote\(", p.read_text(encoding="utf-8"))
    ]
    assert makers == ["p2pspam/auth/verify.py"]


def test_nothing_outside_the_verifier_touches_its_seal():
    users = [
        p.relative_to(ROOT).as_posix() for p in SOURCES if "_SEAL" in p.read_text(encoding="utf-8")
    ]
    assert users == ["p2pspam/auth/verify.py"]

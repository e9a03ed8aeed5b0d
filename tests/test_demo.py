"""The fingerprint part of ``p2pspam demo``."""

import io

from rich.console import Console

from p2pspam.demo import fingerprint_demo
from p2pspam.samples import DEMO_MESSAGES


def test_demo_campaign_copies_match_the_original_and_ham_does_not():
    matrix = fingerprint_demo(Console(file=io.StringIO()))
    kinds = [kind for _, kind, _ in DEMO_MESSAGES]
    for i, kind in enumerate(kinds[1:], start=1):
        if kind == "spam":
            assert matrix[0][i] >= 3
        else:
            assert matrix[0][i] == 0


def test_demo_command_with_fingerprints_only_exits_0(capsys):
    from p2pspam.cli import main

    assert main(["demo", "--fingerprints-only"]) == 0
    assert "shared features" in capsys.readouterr().out


def test_demo_command_refuses_an_absurd_peer_count(capsys):
    from p2pspam.cli import main

    assert main(["demo", "--peers", "1000"]) == 2
    assert "--peers must be 2..64" in capsys.readouterr().err

"""The Pyzor-compatible client: pyzor's output lines and exit codes, and SpamAssassin's
Pyzor plugin pointed at it with ``pyzor_path`` (a real ``spamassassin -t``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from agenthelpers import require_binary
from agentmail import campaign, ham

from agent.localpeers import LocalWorld

# The line SpamAssassin's Pyzor plugin parses (Plugin/Pyzor.pm, _check_result).
SA_LINE = re.compile(r"^\S+\t.*?\t(\d+)\t(\d+)\s*$")
PYZOR = str(Path(sys.executable).with_name("p2pspam-pyzor"))


def pyzor(*args: str, input: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    if not os.path.exists(PYZOR):
        pytest.fail(f"{PYZOR} missing: run .venv/bin/pip install -e .")
    return subprocess.run([PYZOR, *args], input=input, capture_output=True, timeout=60, check=False)  # type: ignore[return-value]


def test_check_of_unknown_mail_prints_zero_counts_and_exits_1(world: LocalWorld) -> None:
    config = world.add_user("pyzor-1")
    result = pyzor("--config", str(config), "check", input=ham("pyzor-1"))
    assert result.returncode == 1
    line = result.stdout.decode()
    assert re.fullmatch(r"127\.0\.0\.1:\d+\t\(200, 'OK'\)\t0\t0\n", line)


def test_report_then_check_of_an_edited_copy_counts_the_spam_vote(
    world: LocalWorld,
) -> None:
    config = str(world.add_user("pyzor-2"))
    original, edited = campaign("pyzor-2")
    reported = pyzor("--config", config, "report", input=original)
    assert reported.returncode == 0, reported.stderr
    assert re.fullmatch(rb"127\.0\.0\.1:\d+\t\(200, 'OK'\)\n", reported.stdout)
    checked = pyzor("--config", config, "check", input=edited)
    assert checked.returncode == 0
    match = SA_LINE.match(checked.stdout.decode())
    assert match is not None and match.groups() == ("1", "0")


def test_whitelisted_mail_is_not_a_hit(world: LocalWorld) -> None:
    spammer, defender = str(world.add_user("pyzor-3a")), str(world.add_user("pyzor-3b"))
    original, edited = campaign("pyzor-3")
    assert pyzor("--config", spammer, "report", input=original).returncode == 0
    assert pyzor("--config", defender, "whitelist", input=original).returncode == 0
    checked = pyzor("--config", spammer, "check", input=edited)
    assert checked.returncode == 1
    match = SA_LINE.match(checked.stdout.decode())
    assert match is not None and match.groups() == ("1", "1")


def test_the_self_test_message_is_a_hit_without_any_vote(world: LocalWorld) -> None:
    from p2pspam.selftest import SELFTEST_MESSAGE

    config = world.add_user("pyzor-4")
    checked = pyzor("--config", str(config), "check", input=SELFTEST_MESSAGE)
    assert checked.returncode == 0
    assert checked.stdout.decode().endswith("\t1\t0\n")


def test_no_peer_gives_an_error_line_and_exit_1(tmp_path: Path) -> None:
    config = tmp_path / "agent.toml"
    config.write_text('[agent]\npeers = ["127.0.0.1:1"]\nconnect_timeout = 0.5\n')
    result = pyzor("--config", str(config), "check", input=ham("pyzor-5"))
    assert result.returncode == 1
    assert result.stdout.startswith(b"127.0.0.1:1\t(503, ")
    assert SA_LINE.match(result.stdout.decode()) is None


def test_ping_and_digest_behave_like_pyzor(world: LocalWorld) -> None:
    config = str(world.add_user("pyzor-6"))
    ping = pyzor("--config", config, "ping")
    assert ping.returncode == 0
    assert ping.stdout.endswith(b"\t(200, 'OK')\n")
    digest = pyzor("--config", config, "digest", input=ham("pyzor-6"))
    assert re.fullmatch(rb"[0-9a-f]{40}\n", digest.stdout)


def test_version_and_no_command_exit_0_like_pyzor() -> None:
    assert pyzor("-V").returncode == 0
    assert pyzor().returncode == 0


def _spamassassin(site: Path, prefs: Path, message: bytes) -> str:
    binary = require_binary("spamassassin")
    result = subprocess.run(
        [binary, "-t", f"--siteconfigpath={site}", "-p", str(prefs)],
        input=message,
        capture_output=True,
        timeout=120,
    )
    return result.stdout.decode("utf-8", "replace")


def _sa_site(tmp_path: Path, config: Path) -> tuple[Path, Path]:
    site = tmp_path / "site"
    site.mkdir()
    for pre in Path("/etc/spamassassin").glob("*.pre"):  # plugin loading (Debian layout)
        shutil.copy(pre, site / pre.name)
    if not (site / "v310.pre").exists():
        (site / "init.pre").write_text(
            "loadplugin Mail::SpamAssassin::Plugin::Check\n"
            "loadplugin Mail::SpamAssassin::Plugin::Pyzor\n"
        )
    (site / "local.cf").write_text(
        "use_pyzor 1\n"
        f"pyzor_path {PYZOR}\n"
        f"pyzor_options --config {config}\n"
        "pyzor_count_min 1\n"
        "pyzor_fork 0\n"
        "pyzor_timeout 60\n"
        "use_bayes 0\n"
        "dns_available no\n"
    )
    prefs = tmp_path / "user_prefs"
    prefs.write_text("")
    return site, prefs


def test_spamassassin_flags_an_edited_copy_of_marked_spam_with_pyzor_check(
    world: LocalWorld, tmp_path: Path
) -> None:
    require_binary("spamassassin")
    config = world.add_user("sa-1")
    original, edited = campaign("spamassassin-1")
    assert pyzor("--config", str(config), "report", input=original).returncode == 0
    site, prefs = _sa_site(tmp_path, config)
    assert "PYZOR_CHECK" in _spamassassin(site, prefs, edited)


def test_spamassassin_does_not_flag_ham(world: LocalWorld, tmp_path: Path) -> None:
    require_binary("spamassassin")
    config = world.add_user("sa-2")
    site, prefs = _sa_site(tmp_path, config)
    output = _spamassassin(site, prefs, ham("spamassassin-2"))
    assert "X-Spam-Status:" in output  # SpamAssassin did run its tests
    assert "PYZOR_CHECK" not in output

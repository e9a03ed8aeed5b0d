"""The agent commands end to end as separate processes against real peers on loopback."""

from __future__ import annotations

import json
from pathlib import Path

from agenthelpers import run_agent
from agentmail import campaign, ham, message

from agent.localpeers import LocalWorld


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def test_check_reports_clean_mail_with_exit_code_0(world: LocalWorld, tmp_path: Path) -> None:
    config = world.add_user("check-clean")
    result = run_agent("check", "--json", "--config", str(config), write(tmp_path / "m", ham("a")))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["verdict"] == "clean"


def test_an_edited_copy_of_marked_spam_is_spam_with_exit_code_1(
    world: LocalWorld, tmp_path: Path
) -> None:
    config = str(world.add_user("marker-1"))
    original, edited = campaign("commands-1")
    marked = run_agent("mark", "--config", config, write(tmp_path / "o", original))
    assert marked.returncode == 0, marked.stderr
    assert b"1 spam vote(s) published" in marked.stdout
    checked = run_agent("check", "--json", "--config", config, write(tmp_path / "e", edited))
    assert checked.returncode == 1, checked.stderr
    row = json.loads(checked.stdout)
    assert row["verdict"] == "spam"
    assert row["match"]["spam"] == 1
    assert row["match"]["overlap"] >= 3


def test_unmark_votes_ham_and_the_message_is_no_longer_spam(
    world: LocalWorld, tmp_path: Path
) -> None:
    spammer, defender = world.add_user("unmark-a"), world.add_user("unmark-b")
    original, edited = campaign("commands-2")
    path = write(tmp_path / "o", original)
    assert run_agent("mark", "--config", str(spammer), path).returncode == 0
    unmarked = run_agent("unmark", "--config", str(defender), path)
    assert unmarked.returncode == 0, unmarked.stderr
    assert b"1 not-spam vote(s) published" in unmarked.stdout
    checked = run_agent("check", "--json", "--config", str(spammer), write(tmp_path / "e", edited))
    row = json.loads(checked.stdout)
    assert (row["match"]["spam"], row["match"]["ham"]) == (1, 1)
    assert row["verdict"] == "spam"  # policy: 1 of 2 meets ratio 0.5 and min_votes 1


def test_a_withdrawn_vote_no_longer_counts(world: LocalWorld, tmp_path: Path) -> None:
    config = str(world.add_user("withdrawer"))
    original, edited = campaign("commands-3")
    path = write(tmp_path / "o", original)
    assert run_agent("mark", "--config", config, path).returncode == 0
    assert run_agent("unmark", "--withdraw", "--config", config, path).returncode == 0
    checked = run_agent("check", "--json", "--config", config, write(tmp_path / "e", edited))
    assert checked.returncode == 0
    assert json.loads(checked.stdout)["verdict"] == "clean"


def test_mark_skips_messages_too_short_to_fingerprint(world: LocalWorld, tmp_path: Path) -> None:
    config = str(world.add_user("short"))
    result = run_agent("mark", "--config", config, write(tmp_path / "s", message("too short")))
    assert result.returncode == 0
    assert b"0 spam vote(s) published, 0 refused, 1 skipped" in result.stdout


def test_mark_without_a_credential_is_a_one_line_error(world: LocalWorld, tmp_path: Path) -> None:
    config = tmp_path / "agent.toml"
    config.write_text(f'[agent]\npeers = ["{world.api_addresses[0]}"]\ncredential = "nokey"\n')
    result = run_agent("mark", "--config", str(config), write(tmp_path / "m", ham("x")))
    assert result.returncode == 2
    assert result.stderr.count(b"\n") == 1
    assert b"credential" in result.stderr


def test_check_over_an_mbox_gives_one_verdict_per_message(
    world: LocalWorld, tmp_path: Path
) -> None:
    config = str(world.add_user("mbox"))
    mbox = tmp_path / "box.mbox"
    mbox.write_bytes(
        b"".join(b"From x@y Thu Jan  1 00:00:00 2026\n" + ham(str(i)) + b"\n" for i in range(7))
    )
    result = run_agent("check", "--json", "--config", config, str(mbox))
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 7


def test_check_with_no_peer_answering_exits_2_with_one_line(tmp_path: Path) -> None:
    config = tmp_path / "agent.toml"
    config.write_text('[agent]\npeers = ["127.0.0.1:1"]\nconnect_timeout = 0.5\n')
    result = run_agent("check", "--config", str(config), write(tmp_path / "m", ham("y")))
    assert result.returncode == 2
    assert b"no peer answered" in result.stderr


def test_check_fails_over_from_a_dead_peer_to_a_live_one(world: LocalWorld, tmp_path: Path) -> None:
    config = world.add_user("failover", peers=["127.0.0.1:1", world.api_addresses[1]])
    result = run_agent("check", "--json", "--config", str(config), write(tmp_path / "m", ham("z")))
    assert result.returncode == 0, result.stderr


def test_an_unreadable_input_exits_2_but_others_are_checked(
    world: LocalWorld, tmp_path: Path
) -> None:
    config = str(world.add_user("unreadable"))
    good = write(tmp_path / "m", ham("w"))
    result = run_agent("check", "--json", "--config", config, good, str(tmp_path / "missing"))
    assert result.returncode == 2
    assert len(result.stdout.splitlines()) == 1


def test_selftest_passes_through_every_configured_peer(world: LocalWorld) -> None:
    config = world.add_user("selftester")
    result = run_agent("selftest", "--config", str(config))
    assert result.returncode == 0, result.stdout
    assert result.stdout.count(b": OK (") == len(world.api_addresses)
    assert b"self-test: PASSED" in result.stdout


def test_selftest_says_which_peer_is_down(world: LocalWorld) -> None:
    config = world.add_user("selftester-2", peers=[world.api_addresses[0], "127.0.0.1:1"])
    result = run_agent("selftest", "--config", str(config))
    assert result.returncode == 1
    assert b"peer 127.0.0.1:1: FAIL" in result.stdout
    assert f"peer {world.api_addresses[0]}: OK".encode() in result.stdout

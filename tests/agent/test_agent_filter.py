"""``agent filter``: the message comes out byte for byte, with only our headers added,
whether the peers are up or down and whatever the message looks like."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from agenthelpers import run_agent
from agentmail import campaign
from hypothesis import given
from hypothesis import strategies as st

from agent.commands.filter import filter_bytes
from agent.localpeers import LocalWorld

OUR_HEADER = re.compile(rb"X-P2PSpam-(Status|Score|Match|Bulk): [\x20-\x7e]*\r?\n")

PLAIN = (
    b"From: a@example.org\nTo: b@example.org\nSubject: plain\n\n"
    + b"A plain message with enough words in it to have a full fingerprint vector. " * 3
    + b"\n"
)
MULTIPART = (
    b"From: a@example.org\r\nTo: b@example.org\r\nSubject: multipart\r\nMIME-Version: 1.0\r\n"
    b'Content-Type: multipart/alternative; boundary="XX"\r\n\r\npreamble\r\n--XX\r\n'
    b"Content-Type: text/plain; charset=utf-8\r\n\r\n"
    + "Grüße aus dem Büro, wir treffen uns morgen um zehn Uhr im großen Saal. ".encode() * 3
    + b"\r\n--XX\r\nContent-Type: text/html\r\n\r\n<p>Gr&uuml;&szlig;e</p>\r\n"
    + b"--XX--\r\nepilogue\r\n"
)
EIGHT_BIT = (
    b"From: a@example.org\nSubject: =?iso-8859-1?q?caf=E9?=\n"
    b"Content-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: 8bit\n\n"
    + b"Le caf\xe9 est ferm\xe9 le lundi; nous irons au march\xe9 \xe0 c\xf4t\xe9. " * 3
    + b"\xff\xfe\x00\x01\n"
)
MALFORMED = (
    b"this is not a header line\n: empty name\nContent-Type: multipart/mixed; boundary=\n"
    b"--\n\x00\x01\x02 garbage \xc3\x28 truncated base64 =?utf-8?b?AAA"
)
MBOX_FROM_LINE = b"From someone@example.org Thu Jan  1 00:00:00 2026\n" + PLAIN
NO_NEWLINE = b"Subject: nothing else"
EMPTY = b""

MESSAGES = {
    "plain": PLAIN,
    "multipart-crlf": MULTIPART,
    "8bit": EIGHT_BIT,
    "malformed": MALFORMED,
    "mbox-from-line": MBOX_FROM_LINE,
    "no-newline": NO_NEWLINE,
    "empty": EMPTY,
}


def split_added(original: bytes, output: bytes) -> list[bytes]:
    """Check ``output`` is ``original`` plus header lines; return the added lines."""
    prefix = b""
    if original.startswith(b"From ") and b"\n" in original:
        prefix = original[: original.index(b"\n") + 1]
        assert output.startswith(prefix)
    rest = output[len(prefix) :]
    body = original[len(prefix) :]
    assert rest.endswith(body)
    added = rest[: len(rest) - len(body)]
    lines = [m.group(0) for m in OUR_HEADER.finditer(added)]
    assert b"".join(lines) == added, f"unexpected bytes added: {added!r}"
    return lines


def status_of(lines: list[bytes]) -> bytes:
    return next(line for line in lines if line.startswith(b"X-P2PSpam-Status")).strip()


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_with_the_peers_down_the_message_passes_through_marked_unknown(
    name: str, tmp_path: Path
) -> None:
    config = tmp_path / "agent.toml"
    config.write_text('[agent]\npeers = ["127.0.0.1:1"]\nconnect_timeout = 0.5\n')
    result = run_agent("filter", "--config", str(config), input=MESSAGES[name])
    assert result.returncode == 0
    lines = split_added(MESSAGES[name], result.stdout)
    assert status_of(lines).startswith(b"X-P2PSpam-Status: Unknown (")


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_with_the_peers_up_the_message_passes_through_with_a_verdict(
    name: str, world: LocalWorld, tmp_path: Path
) -> None:
    config = world.add_user("filter-user")
    result = run_agent("filter", "--config", str(config), input=MESSAGES[name])
    assert result.returncode == 0
    lines = split_added(MESSAGES[name], result.stdout)
    fingerprintable = name in ("plain", "multipart-crlf", "8bit", "mbox-from-line", "malformed")
    if fingerprintable:
        assert status_of(lines) == b"X-P2PSpam-Status: No"
        assert len(lines) == 3
    else:
        assert status_of(lines).startswith(b"X-P2PSpam-Status: Unknown (")


def test_crlf_messages_get_crlf_headers(world: LocalWorld) -> None:
    config = world.add_user("filter-crlf")
    result = run_agent("filter", "--config", str(config), input=MULTIPART)
    lines = split_added(MULTIPART, result.stdout)
    assert all(line.endswith(b"\r\n") for line in lines)


def test_an_edited_copy_of_marked_spam_is_flagged_yes_with_its_match(
    world: LocalWorld, tmp_path: Path
) -> None:
    config = str(world.add_user("filter-marker"))
    original, edited = campaign("filter-1")
    (tmp_path / "o").write_bytes(original)
    assert run_agent("mark", "--config", config, str(tmp_path / "o")).returncode == 0
    result = run_agent("filter", "--config", config, input=edited)
    lines = split_added(edited, result.stdout)
    assert status_of(lines) == b"X-P2PSpam-Status: Yes"
    assert any(line.startswith(b"X-P2PSpam-Match: ") and b"(spam)" in line for line in lines)
    assert any(b"spam=1 ham=0" in line for line in lines)


def test_a_bad_config_passes_the_message_through_marked_unknown(tmp_path: Path) -> None:
    config = tmp_path / "agent.toml"
    config.write_text("[agent\nthis is not toml")
    result = run_agent("filter", "--config", str(config), input=PLAIN)
    assert result.returncode == 0
    assert status_of(split_added(PLAIN, result.stdout)).startswith(
        b"X-P2PSpam-Status: Unknown (config:"
    )


@given(st.binary(max_size=3000))
def test_any_bytes_come_out_unchanged_under_our_headers(data: bytes) -> None:
    output = filter_bytes(data, "/nonexistent/agent.toml")
    split_added(data, output)


def test_with_a_bulk_state_repeated_mail_gets_a_rising_bulk_score(
    world: LocalWorld, tmp_path: Path
) -> None:
    config = str(world.add_user("filter-bulk"))
    state = str(tmp_path / "bulk.npz")
    scores = []
    for _ in range(2):
        result = run_agent("filter", "--config", config, "--bulk-state", state, input=PLAIN)
        assert result.returncode == 0
        lines = split_added(PLAIN, result.stdout)
        bulk = [line for line in lines if line.startswith(b"X-P2PSpam-Bulk: ")]
        assert len(bulk) == 1
        scores.append(int(bulk[0].split(b": ")[1]))
    assert scores[0] < scores[1] == 100


def test_an_unusable_bulk_state_passes_the_message_through(tmp_path: Path) -> None:
    state = tmp_path / "bulk.npz"
    state.write_bytes(b"not a detector")
    result = run_agent("filter", "--config", "/nonexistent.toml", "--bulk-state", str(state),
                       input=PLAIN)  # fmt: skip
    assert result.returncode == 0
    lines = split_added(PLAIN, result.stdout)
    assert any(line.startswith(b"X-P2PSpam-Bulk: Unknown (") for line in lines)

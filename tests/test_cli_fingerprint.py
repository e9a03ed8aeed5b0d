"""``p2pspam fingerprint`` and the top-level command line."""

import io
import json
import mailbox
import subprocess
import sys

import pytest

from p2pspam.cli import main
from p2pspam.samples import DEMO_MESSAGES, SPAM_ORIGINAL

BODY = "This is a message body that is comfortably longer than fifty characters.\n"


def _message(subject: str, body: str = BODY) -> bytes:
    return f"From: a@example.org\nSubject: {subject}\n\n{body}".encode()


def _json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_json_output_has_the_documented_fields(tmp_path, capsys):
    path = tmp_path / "one.eml"
    path.write_bytes(SPAM_ORIGINAL.encode())
    assert main(["fingerprint", "--json", str(path)]) == 0
    (record,) = _json_lines(capsys.readouterr().out)
    assert set(record) == {"source", "scheme", "params", "guid", "features", "chars", "note"}
    assert record["scheme"] == "ata" and record["params"] == {"L": 50, "N": 10}
    assert len(record["guid"]) == 40 and len(record["features"]) == 10
    assert all(len(f) == 16 and int(f, 16) >= 0 for f in record["features"])


def test_length_and_count_options_change_the_vector(tmp_path, capsys):
    path = tmp_path / "one.eml"
    path.write_bytes(_message("x"))
    main(["fingerprint", "--json", "-L", "20", "-N", "4", str(path)])
    (record,) = _json_lines(capsys.readouterr().out)
    assert record["params"] == {"L": 20, "N": 4} and len(record["features"]) == 4


def test_directory_mbox_and_maildir_inputs_yield_every_message(tmp_path, capsys):
    folder = tmp_path / "dir"
    folder.mkdir()
    (folder / "a.eml").write_bytes(_message("a"))
    (folder / "b.eml").write_bytes(_message("b"))
    box = mailbox.mbox(tmp_path / "box.mbox")
    for _, _, raw in DEMO_MESSAGES:
        box.add(raw)
    box.flush()
    maildir = mailbox.Maildir(tmp_path / "md")
    maildir.add(_message("m"))
    maildir.flush()
    inputs = [str(folder), str(tmp_path / "box.mbox"), str(tmp_path / "md")]
    assert main(["fingerprint", "--json", *inputs]) == 0
    sources = [r["source"] for r in _json_lines(capsys.readouterr().out)]
    assert len(sources) == 2 + len(DEMO_MESSAGES) + 1
    assert sources[2].endswith("box.mbox:0")


def test_stdin_is_read_with_a_dash(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(_message("stdin"))))
    assert main(["fingerprint", "--json", "-"]) == 0
    (record,) = _json_lines(capsys.readouterr().out)
    assert record["source"] == "-" and len(record["features"]) == 10


def test_unreadable_input_is_one_line_on_stderr_and_exit_2_and_others_still_processed(
    tmp_path, capsys
):
    good = tmp_path / "good.eml"
    good.write_bytes(_message("ok"))
    missing = tmp_path / "missing.eml"
    assert main(["fingerprint", "--json", str(missing), str(good)]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == f"p2pspam: {missing}: no such file or directory"
    assert len(_json_lines(captured.out)) == 1


def test_short_and_empty_messages_carry_a_note(tmp_path, capsys):
    (tmp_path / "short.eml").write_bytes(_message("s", "tiny"))
    (tmp_path / "empty.eml").write_bytes(b"Subject: empty\n\n")
    main(["fingerprint", "--json", str(tmp_path / "short.eml"), str(tmp_path / "empty.eml")])
    notes = [r["note"] for r in _json_lines(capsys.readouterr().out)]
    assert notes == ["shorter than L=50 characters (4)", "no text body"]


def test_table_output_names_every_source(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "table.eml").write_bytes(_message("t"))
    assert main(["fingerprint", "table.eml"]) == 0
    assert "table.eml" in capsys.readouterr().out


def test_out_of_range_parameter_is_a_one_line_error(tmp_path, capsys):
    path = tmp_path / "x.eml"
    path.write_bytes(_message("x"))
    assert main(["fingerprint", "-L", "0", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "window length L must be 1..4096" in err


def test_unknown_scheme_is_a_one_line_error(tmp_path, capsys):
    path = tmp_path / "x.eml"
    path.write_bytes(_message("x"))
    assert main(["fingerprint", "--scheme", "nope", str(path)]) == 2
    assert "unknown scheme 'nope'" in capsys.readouterr().err


def test_unknown_command_prints_help_and_exits_2(capsys):
    assert main(["no-such-command"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'no-such-command'" in err and "fingerprint" in err


def test_no_arguments_prints_help_and_exits_0(capsys):
    assert main([]) == 0
    assert "fingerprint" in capsys.readouterr().out


def test_console_script_runs_as_a_process(tmp_path):
    path = tmp_path / "p.eml"
    path.write_bytes(_message("process"))
    done = subprocess.run(
        [sys.executable, "-m", "p2pspam.cli", "fingerprint", "--json", str(path)],
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["features"]) == 10


@pytest.mark.parametrize("raw", [b"", b"\x00\xff" * 100, b"Content-Type: multipart/mixed\n\n--"])
def test_malformed_mail_is_fingerprinted_without_crashing(tmp_path, capsys, raw):
    path = tmp_path / "bad.eml"
    path.write_bytes(raw)
    assert main(["fingerprint", "--json", str(path)]) == 0
    assert len(_json_lines(capsys.readouterr().out)) == 1

"""``p2pspam sim replay`` end to end on small corpora."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path

import pytest

from p2pspam.cli import main
from simulations.mailgen import generate, write_corpus

FOOTER = (
    "_______________________________________________\n"
    "Gardening mailing list\n"
    "Gardening@lists.example.org\n"
    "https://lists.example.org/mailman/listinfo/gardening\n"
    "For list rules, archives and subscription options see the list information page,\n"
    "and remember that digest mode can be turned on or off from the same page at any time."
)
PITCH = (
    "Luxury replica watches at a fraction of the retail price. Rolex, Omega and Breitling\n"
    "models in stock now, with swiss movement and sapphire crystal, indistinguishable\n"
    "from the original. Free express delivery on all orders this week only. Impress your\n"
    "friends and colleagues with a premium timepiece. Visit http://watches.example.top/{t}\n"
)
HAM = (
    "The seed swap moved to the library hall because of the rain. Bring labelled packets,\n"
    "and if you have spare tomato cuttings, Maria would love some for the school garden.\n"
)


def _write(path: Path, when: int, to: str, body: str) -> None:
    stamp = format_datetime(datetime.fromtimestamp(1_770_000_000 + when, UTC))
    head = (
        f"From: someone@example.org\nTo: {to}\nSubject: [gardening] x\nDate: {stamp}\n"
        "List-Id: <gardening.lists.example.org>\nContent-Type: text/plain\n\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(head + body + "\n\n" + FOOTER + "\n")


@pytest.fixture
def list_corpus(tmp_path: Path) -> Path:
    _write(tmp_path / "spam" / "1.eml", 0, "ann@example.org", PITCH.format(t="a1"))
    _write(tmp_path / "spam" / "2.eml", 60, "bob@example.org", PITCH.format(t="b2"))
    _write(tmp_path / "ham" / "3.eml", 120, "cem@example.org", HAM)
    return tmp_path


def _replay(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["sim", "replay", "--quick", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_report_has_the_agreed_shape(list_corpus: Path, capsys) -> None:
    report = _replay(capsys, "--mail", str(list_corpus))
    assert set(report["spam"]) >= {"total", "caught", "near_dup_total", "near_dup_caught"}
    assert set(report["ham"]) >= {"total", "flagged"}
    assert report["spam"]["total"] == 2 and report["ham"]["total"] == 1


def test_near_duplicate_of_a_marked_spam_is_caught(list_corpus: Path, capsys) -> None:
    report = _replay(capsys, "--mail", str(list_corpus), "--mark-rate", "1")
    assert report["spam"]["near_dup_total"] == 1
    assert report["spam"]["near_dup_caught"] == 1


def test_list_ham_with_the_marked_spams_footer_is_not_flagged(list_corpus: Path, capsys) -> None:
    report = _replay(capsys, "--mail", str(list_corpus), "--mark-rate", "1")
    assert report["ham"]["flagged"] == 0


def test_without_defences_the_same_list_ham_is_flagged(list_corpus: Path, capsys) -> None:
    assert main(["sim", "replay", "--json", "--mail", str(list_corpus), "--mark-rate", "1"]) == 0
    table = {row["config"]: row for row in json.loads(capsys.readouterr().out)["table"]}
    assert table["no defence"]["flagged"] == 1
    assert table["default"]["flagged"] == 0


def test_generated_corpus_replays_with_labels_and_writes_outputs(tmp_path: Path, capsys) -> None:
    write_corpus(generate(seed=3, messages=300), tmp_path / "mail")
    out = tmp_path / "out"
    args = ["--mail", str(tmp_path / "mail"), "--labels", str(tmp_path / "mail" / "labels.csv")]
    assert main(["sim", "replay", "--json", *args, "--out", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["spam"]["total"] + report["ham"]["total"] == 300
    assert (out / "quality.png").stat().st_size > 0
    assert (out / "table.csv").read_text().startswith("config,thres")


def test_a_directory_without_spam_or_ham_is_a_clear_error(tmp_path: Path, capsys) -> None:
    assert main(["sim", "replay", "--mail", str(tmp_path)]) == 2
    assert "spam/" in capsys.readouterr().err


def test_mark_rate_out_of_range_is_refused(list_corpus: Path, capsys) -> None:
    assert main(["sim", "replay", "--mail", str(list_corpus), "--mark-rate", "2"]) == 2


def test_mailgen_command_writes_a_corpus(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    assert main(["sim", "mailgen", "--out", str(out), "--seed", "4", "--messages", "50"]) == 0
    assert (out / "spam" / "spam.mbox").exists() and (out / "labels.csv").exists()
    assert main(["sim", "mailgen", "--out", str(out), "--messages", "50"]) == 2


def test_time_comes_from_the_mbox_from_line_when_there_is_no_date(tmp_path: Path, capsys) -> None:
    spam = tmp_path / "spam"
    spam.mkdir()
    body = PITCH.format(t="x") + "\n\n" + FOOTER
    lines = []
    for n, stamp in enumerate(("Mon Mar  2 08:00:00 2026", "Mon Mar  2 09:00:00 2026")):
        lines.append(f"From spammer@example.top {stamp}\nTo: u{n}@example.org\n\n{body}\n")
    (spam / "box.mbox").write_text("\n".join(lines))
    (tmp_path / "ham").mkdir()
    report = _replay(capsys, "--mail", str(tmp_path), "--mark-rate", "1")
    assert report["skipped"] == 0
    assert report["spam"] == {**report["spam"], "total": 2, "caught": 1, "near_dup_caught": 1}


def test_a_message_without_any_time_is_skipped_with_a_reason(tmp_path: Path, capsys) -> None:
    (tmp_path / "ham").mkdir()
    (tmp_path / "ham" / "1.eml").write_text("To: a@example.org\n\n" + HAM)
    report = _replay(capsys, "--mail", str(tmp_path))
    assert report["skipped"] == 1 and report["ham"]["total"] == 0

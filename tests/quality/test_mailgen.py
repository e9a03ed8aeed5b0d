"""The labelled mail generator: determinism, labels, realism of what it writes."""

from __future__ import annotations

import csv
import email
import mailbox
from pathlib import Path

import pytest

from simulations.mailgen import LABEL_FIELDS, generate, write_corpus


@pytest.fixture(scope="module")
def corpus() -> list:
    return generate(seed=7, messages=400)


def test_same_seed_gives_identical_mail(corpus: list) -> None:
    again = generate(seed=7, messages=400)
    assert [m.raw for m in again] == [m.raw for m in corpus]


def test_another_seed_gives_other_mail(corpus: list) -> None:
    other = generate(seed=8, messages=400)
    assert [m.raw for m in other] != [m.raw for m in corpus]


def test_messages_come_in_time_order_with_the_requested_count(corpus: list) -> None:
    assert len(corpus) == 400
    assert [m.time for m in corpus] == sorted(m.time for m in corpus)


def test_spam_fraction_is_respected(corpus: list) -> None:
    assert sum(m.label == "spam" for m in corpus) == 160


def test_every_ham_and_spam_kind_appears() -> None:
    kinds = {m.kind.split("-")[0] if m.label == "ham" else m.kind for m in generate(3, 3000)}
    assert {"personal", "list", "newsletter", "transactional"} <= kinds
    assert any(k.startswith("spam-list-") for k in kinds)
    assert "spam-phishing" in kinds


def test_list_mail_carries_the_list_footer_and_headers(corpus: list) -> None:
    post = next(m for m in corpus if m.kind == "list")
    message = email.message_from_bytes(post.raw)
    assert message["List-Id"]
    assert message["Date"] and message["Delivered-To"] == post.recipient


def test_mutated_spam_includes_html_obfuscation() -> None:
    raws = [m.raw for m in generate(5, 3000) if m.label == "spam"]
    assert any(b"<!-- -->" in r or b"<b></b>" in r or b"<span></span>" in r for r in raws)


def test_write_corpus_writes_mboxes_and_labels(tmp_path: Path, corpus: list) -> None:
    counts = write_corpus(corpus, tmp_path)
    assert counts == {"spam": 160, "ham": 240}
    spam = mailbox.mbox(tmp_path / "spam" / "spam.mbox")
    assert len(spam) == 160
    with (tmp_path / "labels.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == LABEL_FIELDS
    assert rows[0]["source"] in ("spam/spam.mbox:0", "ham/ham.mbox:0")
    assert sum(r["label"] == "ham" for r in rows) == 240

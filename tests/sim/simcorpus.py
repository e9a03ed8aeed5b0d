"""Small generated mail corpora for the ``sim corpus`` tests (nothing real is shipped)."""

from __future__ import annotations

import random
from pathlib import Path


def _words(rng: random.Random, count: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(count)]


def write_corpus(
    root: Path, seed: int = 7, campaigns: int = 4, copies: int = 6, singles: int = 8, ham: int = 20
) -> tuple[Path, Path]:
    """Write spam (campaigns of near-duplicate copies, each a mail merge with one word
    replaced, plus unrelated singles) and ham as one file per message; return the dirs."""
    rng = random.Random(seed)
    vocab = _words(rng, 3000)
    spam_dir, ham_dir = root / "spam", root / "ham"
    spam_dir.mkdir(parents=True)
    ham_dir.mkdir(parents=True)
    n = 0
    for c in range(campaigns):
        body = [rng.choice(vocab) for _ in range(250)]
        for _k in range(copies):
            copy = list(body)
            copy[5] = rng.choice(vocab)  # the recipient's name
            copy[rng.randrange(len(copy))] = rng.choice(vocab)
            _write(spam_dir / f"{n:04d}.eml", f"offer {c}", " ".join(copy))
            n += 1
    for _ in range(singles):
        _write(spam_dir / f"{n:04d}.eml", "single", " ".join(rng.choice(vocab) for _ in range(200)))
        n += 1
    for h in range(ham):
        _write(ham_dir / f"{h:04d}.eml", "hello", " ".join(rng.choice(vocab) for _ in range(200)))
    return spam_dir, ham_dir


def _write(path: Path, subject: str, body: str) -> None:
    path.write_text(f"From: a@example.org\nSubject: {subject}\n\n{body}\n", encoding="utf-8")

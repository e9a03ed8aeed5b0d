"""Test mail: campaigns of random text unique to each test, so tests sharing the peers
do not see each other's votes."""

from __future__ import annotations

import random


def random_words(seed: str, count: int = 120) -> list[str]:
    """``count`` random lowercase words, the same for the same seed."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(count)]


def message(body: str, subject: str = "hello", to: str = "user@example.org") -> bytes:
    """A plain-text RFC 5322 message."""
    return (
        f"From: sender@example.net\nTo: {to}\nSubject: {subject}\n"
        f"Content-Type: text/plain; charset=us-ascii\n\n{body}\n"
    ).encode()


def campaign(seed: str) -> tuple[bytes, bytes]:
    """An original spam and an edited copy (another name, a changed word, another
    subject) that shares most of its fingerprints."""
    words = random_words(seed)
    original = " ".join(["Dear", "Alice,", *words])
    edited_words = list(words)
    edited_words[60] = "zzzedited"
    edited = " ".join(["Dear", "Robert,", *edited_words])
    return message(original, "offer"), message(edited, "re: offer", "bob@example.org")


def ham(seed: str) -> bytes:
    """A legitimate message unrelated to any campaign."""
    return message(" ".join(random_words("ham-" + seed)), "minutes")

"""Generated cases of the thesis's five categories of redundant mail (Nguyen 2007,
section 2.3): identical content, subtle differences, rearranged paragraphs, a message
quoted inside another, and combinations of the first three with quoting."""

import random
from dataclasses import dataclass

from simulations.mailgen import Language, wrap

CATEGORIES = ("identical", "subtle", "rearranged", "quoted", "combination")


@dataclass(frozen=True)
class Case:
    """A generated mailbox: raw messages and the true redundant pairs (unordered)."""

    messages: list[bytes]
    pairs: set[frozenset[int]]
    categories: list[str]


def _raw(n: int, subject: str, body: str) -> bytes:
    return (
        f"From: user{n}@example.org\nTo: team@example.org\nSubject: {subject}\n"
        f"Message-ID: <{n}@example.org>\n\n{body}\n"
    ).encode()


def _subtle(rng: random.Random, lang: Language, paragraphs: list[str]) -> list[str]:
    edited = list(paragraphs)
    edited[0] = f"Dear {lang.rare_word().capitalize()}, {edited[0]}"
    edited[-1] = f"{edited[-1]} Thanks"
    return edited


def generate_cases(seed: int, per_category: int = 8, unrelated: int = 40) -> Case:
    """Return originals with one derivative each in every category, plus unrelated mail."""
    rng = random.Random(seed)
    lang = Language(rng)
    messages: list[bytes] = []
    pairs: set[frozenset[int]] = set()
    categories: list[str] = []

    def add(body: str, category: str) -> int:
        messages.append(_raw(len(messages), lang.title(), body))
        categories.append(category)
        return len(messages) - 1

    for category in CATEGORIES:
        for _ in range(per_category):
            paragraphs = [lang.paragraph(2, 4) for _ in range(rng.randint(2, 4))]
            original = add("\n\n".join(wrap(p) for p in paragraphs), "original")
            if category == "identical":
                variant = list(paragraphs)
            elif category == "subtle":
                variant = _subtle(rng, lang, paragraphs)
            elif category == "rearranged":
                variant = list(paragraphs)
                while variant == paragraphs:
                    rng.shuffle(variant)
            else:
                source = list(paragraphs)
                if category == "combination":
                    if rng.random() < 0.5:
                        source = _subtle(rng, lang, source)
                    else:
                        rng.shuffle(source)
                quote = "\n".join("> " + line for p in source for line in wrap(p).splitlines())
                reply = wrap(lang.paragraph(1, 3))
                variant = [f"{reply}\n\nOn Monday, someone wrote:\n{quote}"]
            derived = add("\n\n".join(v if "\n" in v else wrap(v) for v in variant), category)
            pairs.add(frozenset((original, derived)))
    for _ in range(unrelated):
        add("\n\n".join(wrap(lang.paragraph(2, 4)) for _ in range(rng.randint(1, 4))), "unrelated")
    return Case(messages, pairs, categories)

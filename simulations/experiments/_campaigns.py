"""A seeded generator of adversarial spam campaigns and of ham that shares boilerplate,
for ``sim schemes``, and of the redundant-mail categories of the winnowing thesis.

Campaign copies carry their mutations in ``kind`` ("merge", "edits", "shuffle",
"append", "synonyms", "html", joined by "+"): every copy is mail-merged (the recipient's
first name, full name or address, and a customer number); the others are drawn per copy.
Half of the campaigns copy a newsletter's footer, so spam and ham share boilerplate. Ham:
newsletters (fixed header and footer around new articles), mailing-list posts (list
footer), and replies quoting posts.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from simulations.mailgen import Language, wrap

# Spam vocabulary with substitutes a spammer swaps in (synonym swaps).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "cheap": ("inexpensive", "affordable", "discounted"),
    "buy": ("purchase", "order", "acquire"),
    "offer": ("deal", "promotion", "bargain"),
    "free": ("complimentary", "gratis", "bonus"),
    "money": ("cash", "funds", "income"),
    "now": ("today", "immediately", "instantly"),
    "best": ("finest", "greatest", "leading"),
    "price": ("cost", "rate", "charge"),
    "discount": ("reduction", "markdown", "rebate"),
    "guaranteed": ("assured", "certified", "warranted"),
    "amazing": ("incredible", "remarkable", "astonishing"),
    "quick": ("fast", "rapid", "speedy"),
    "customers": ("clients", "buyers", "members"),
    "products": ("goods", "items", "merchandise"),
    "save": ("keep", "retain", "preserve"),
    "exclusive": ("private", "special", "unique"),
    "winner": ("recipient", "beneficiary", "awardee"),
    "account": ("profile", "membership", "wallet"),
    "secure": ("safe", "protected", "trusted"),
    "click": ("tap", "press", "select"),
    "limited": ("restricted", "finite", "brief"),
    "medication": ("medicine", "pills", "tablets"),
    "investment": ("opportunity", "venture", "portfolio"),
    "approved": ("accepted", "confirmed", "validated"),
}
_KEYWORDS = tuple(SYNONYMS)
_SWAPPABLE = {w: alts for w, alts in SYNONYMS.items()}
MUTATIONS = ("merge", "edits", "shuffle", "append", "synonyms", "html")
_START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
_NAME_TEXT = """james mary robert patricia john jennifer michael linda david elizabeth
william barbara richard susan joseph jessica thomas sarah charles karen daniel lisa matthew
nancy"""
_SURNAME_TEXT = """smith johnson williams brown jones garcia miller davis rodriguez martinez
hernandez lopez gonzalez wilson anderson thomas taylor moore jackson martin lee perez"""
_NAMES = tuple(_NAME_TEXT.split())
_SURNAMES = tuple(_SURNAME_TEXT.split())


@dataclass(frozen=True, slots=True)
class Mail:
    """One generated message with its ground truth."""

    raw: bytes
    label: str  # "spam" | "ham"
    kind: str
    group: str  # campaign, newsletter or list it belongs to
    reported: bool  # in the database of reported messages (the campaign seed, ...)


class CorpusGenerator:
    """Builds campaigns and ham from one seed (see the module docstring)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.lang = Language(self.rng)
        self.serial = 0
        self.footers: list[str] = []

    # -- helpers ---------------------------------------------------------------------

    def _name(self) -> str:
        return f"{self.rng.choice(_NAMES).capitalize()} {self.rng.choice(_SURNAMES).capitalize()}"

    def _raw(self, subject: str, body: str, html: bool = False) -> bytes:
        self.serial += 1
        when = _START + timedelta(minutes=self.serial)
        ctype = "text/html" if html else "text/plain"
        head = (
            f"From: sender{self.serial}@example.net\nTo: user@example.org\n"
            f"Subject: {subject}\nDate: {format_datetime(when)}\n"
            f"Message-ID: <{self.serial}@example.net>\nMIME-Version: 1.0\n"
            f"Content-Type: {ctype}; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n"
        )
        return (head + body + "\n").encode("utf-8")

    def _greeting(self) -> str:
        """The recipient's mail-merge field: a first name, a full name or an address."""
        roll = self.rng.random()
        first = self.rng.choice(_NAMES).capitalize()
        if roll < 0.5:
            return f"Dear {first},"
        if roll < 0.8:
            return f"Dear {self._name()},"
        return f"Hello {first.lower()}{self.rng.randint(1, 99)}@example.org,"

    def _spam_sentence(self) -> str:
        words = [
            self.rng.choice(_KEYWORDS) if self.rng.random() < 0.25 else self.lang.word()
            for _ in range(self.rng.randint(8, 16))
        ]
        text = " ".join(words)
        return text[0].upper() + text[1:] + self.rng.choice("..!")

    def footer(self, family: str) -> str:
        """Return a newsletter-style footer of about 60-100 words for ``family``."""
        rng = self.rng
        parts = [
            f"You are receiving this email because you subscribed to {family}.",
            "To unsubscribe or change your preferences, click the link below.",
            " ".join(self.lang.word() for _ in range(rng.randint(20, 40))) + ".",
            f"{family} Inc., {rng.randint(10, 999)} {self.lang.title()} Street, "
            f"Springfield {rng.randint(10000, 99999)}.",
            "Privacy policy | Terms of use | Manage subscription | View in browser",
            " ".join(self.lang.word() for _ in range(rng.randint(10, 25))) + ".",
        ]
        return "\n".join(wrap(p) for p in parts)

    # -- spam ------------------------------------------------------------------------

    def campaign(self, cid: str, copies: int) -> list[Mail]:
        """Return ``copies`` copies of a new campaign; copy 0 (merge only) is reported."""
        rng = self.rng
        paragraphs = [
            [self._spam_sentence() for _ in range(rng.randint(2, 4))]
            for _ in range(rng.randint(3, 5))
        ]
        footer = rng.choice(self.footers) if self.footers and rng.random() < 0.5 else None
        subject = " ".join(rng.choice(_KEYWORDS) for _ in range(3)).capitalize()
        signature = f"Sincerely,\n{self._name()}\nCustomer care"
        mails = []
        for n in range(copies):
            mutations = ["merge"]
            if n > 0:
                mutations += [m for m, p in _MUTATION_ODDS if rng.random() < p]
            body, html = self._copy(paragraphs, footer, signature, mutations)
            raw = self._raw(subject, body, html)
            mails.append(Mail(raw, "spam", "+".join(mutations), cid, n == 0))
        return mails

    def _copy(
        self,
        paragraphs: list[list[str]],
        footer: str | None,
        signature: str,
        mutations: list[str],
    ) -> tuple[str, bool]:
        rng = self.rng
        words = [[s.split() for s in p] for p in paragraphs]
        if "synonyms" in mutations:
            spots = [
                (i, j, k)
                for i, p in enumerate(words)
                for j, s in enumerate(p)
                for k, w in enumerate(s)
                if w.lower().strip(".!") in _SWAPPABLE
            ]
            for i, j, k in rng.sample(spots, min(len(spots), rng.randint(1, 6))):
                word = words[i][j][k]
                core = word.lower().strip(".!")
                words[i][j][k] = word.replace(core, rng.choice(_SWAPPABLE[core]))
        if "edits" in mutations:
            flat = [(i, j) for i, p in enumerate(words) for j in range(len(p))]
            for _ in range(rng.randint(2, 12)):
                i, j = rng.choice(flat)
                sentence = words[i][j]
                pos = rng.randrange(len(sentence))
                if rng.random() < 0.5 and len(sentence) > 3:
                    del sentence[pos]
                else:
                    sentence.insert(pos, self.lang.word())
        texts = [" ".join(" ".join(s) for s in p) for p in words]
        if "shuffle" in mutations:
            rng.shuffle(texts)
        greeting = self._greeting()
        texts[0] = (
            f"Your customer number {rng.randint(100000, 999999)} has been selected. " + texts[0]
        )
        closing = signature
        if "append" in mutations:
            closing += "\n\n" + " ".join(self.lang.rare_word() for _ in range(rng.randint(20, 60)))
        blocks = [greeting, *texts, closing]
        if footer:
            blocks.append(footer)
        if "html" in mutations:
            return self._html(blocks), True
        return "\n\n".join(wrap(b) if "\n" not in b else b for b in blocks), False

    def _html(self, blocks: Sequence[str]) -> str:
        rng = self.rng
        out = []
        for block in blocks:
            words = []
            for word in block.split():
                roll = rng.random()
                if len(word) > 3 and roll < 0.15:
                    cut = rng.randrange(1, len(word))
                    tag = rng.choice(("<!-- x -->", "<b></b>", "<span></span>"))
                    word = word[:cut] + tag + word[cut:]
                elif len(word) > 1 and roll < 0.25:
                    word = f"&#{ord(word[0])};{word[1:]}"
                words.append(word)
            out.append("<p>" + " ".join(words) + "</p>")
        if rng.random() < 0.5:
            hidden = " ".join(self.lang.rare_word() for _ in range(rng.randint(10, 30)))
            out.insert(rng.randrange(len(out) + 1), f'<div style="display:none">{hidden}</div>')
        return "<html><body>\n" + "\n".join(out) + "\n</body></html>"

    # -- ham -------------------------------------------------------------------------

    def newsletter(self, family: str, issues: int) -> list[Mail]:
        """Return ``issues`` issues of a newsletter (fixed header and footer); the first
        one is reported (someone marked it as spam: boilerplate must not match)."""
        footer = self.footer(family)
        self.footers.append(footer)
        header = f"{family} weekly digest\n{self.lang.title()}"
        mails = []
        for n in range(issues):
            articles = [
                f"{self.lang.title()}\n{wrap(self.lang.paragraph(3, 6))}"
                for _ in range(self.rng.randint(2, 4))
            ]
            body = "\n\n".join([header, f"Issue {n + 1}", *articles, footer])
            raw = self._raw(f"{family} issue {n + 1}", body)
            mails.append(Mail(raw, "ham", "newsletter", family, n == 0))
        return mails

    def mailing_list(self, name: str, posts: int, replies: int) -> list[Mail]:
        """Return list posts and replies quoting them; the first post is reported."""
        rule = "_" * 47
        footer = (
            f"{rule}\n{name} mailing list\n{name}@lists.example.org\n"
            f"https://lists.example.org/mailman/listinfo/{name}"
        )
        mails = []
        bodies = []
        for n in range(posts):
            text = "\n\n".join(
                wrap(self.lang.paragraph(2, 5)) for _ in range(self.rng.randint(1, 3))
            )
            signed = f"{text}\n\n-- \n{self._name()}"
            bodies.append(signed)
            raw = self._raw(f"[{name}] {self.lang.title()}", f"{signed}\n{footer}")
            mails.append(Mail(raw, "ham", "list post", name, n == 0))
        for _ in range(replies):
            quoted = self.rng.choice(bodies[1:] or bodies)
            quote = "\n".join("> " + line for line in quoted.splitlines())
            text = wrap(self.lang.paragraph(1, 3))
            body = f"{text}\n\nOn Monday, {self._name()} wrote:\n{quote}\n{footer}"
            raw = self._raw(f"Re: [{name}] {self.lang.title()}", body)
            mails.append(Mail(raw, "ham", "quoted reply", name, False))
        return mails


_MUTATION_ODDS = (
    ("edits", 0.5),
    ("shuffle", 0.35),
    ("append", 0.3),
    ("synonyms", 0.4),
    ("html", 0.3),
)


def generate(
    seed: int,
    campaigns: int = 60,
    copies: int = 20,
    newsletters: int = 10,
    issues: int = 12,
    lists: int = 8,
    posts: int = 20,
    replies: int = 15,
) -> list[Mail]:
    """Return the corpus: ham first (newsletters, lists), then the campaigns."""
    gen = CorpusGenerator(seed)
    mails: list[Mail] = []
    for f in range(newsletters):
        mails.extend(gen.newsletter(f"{gen.lang.title()} News {f}", issues))
    for n in range(lists):
        mails.extend(gen.mailing_list(f"list{n}", posts, replies))
    for c in range(campaigns):
        mails.extend(gen.campaign(f"campaign{c}", copies))
    return mails

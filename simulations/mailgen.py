"""A seeded generator of realistic, labelled RFC 5322 mail with timestamps.

It exists to measure detection quality where the SpamWatch paper's false-positive figure
does not hold: legitimate mail that shares long, fixed text with spam. The corpus has

- ham: personal mail (signatures after ``-- `` or without it, replies quoting earlier mails
  with ``>`` lines or Outlook ``-----Original Message-----`` blocks, forwarded mail),
  mailing-list traffic (per-list footers in Mailman, ezmlm, Google Groups and custom styles,
  sponsor banners, ``____`` separators, quoted replies), newsletters from templates,
  transactional mail from templates, corporate disclaimers;
- spam: campaigns of many copies with mutations (mail merge, inserted random words and
  sentences, paragraph shuffles, HTML obfuscation such as ``Vi<!-- -->agra``, appended
  random text), spam posted to mailing lists (it carries the list's footer), phishing
  built on a real sender's transactional template, spam from compromised corporate
  accounts (it carries the company's disclaimer).

Every message is one delivery to one recipient (``To:`` / ``Delivered-To:``), with a
``Date:`` header; :func:`write_corpus` writes ``spam/`` and ``ham/`` mboxes (the mbox
``From `` line carries the time) and a ``labels.csv``. Same seed, same bytes.
"""

from __future__ import annotations

import bisect
import csv
import itertools
import random
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path

START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
DEFAULT_DAYS = 30
DEFAULT_SPAM_FRACTION = 0.4
LABELS_FILE = "labels.csv"
MAX_CAMPAIGN = 400  # deliveries of one spam campaign
LABEL_FIELDS = ("source", "label", "kind", "recipient", "time", "campaign", "list")


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_FIRST = _words(
    "james mary robert patricia john jennifer michael linda david elizabeth william barbara "
    "richard susan joseph jessica thomas sarah charles karen chris nancy daniel lisa matthew "
    "betty anthony helen mark sandra donald ashley steven kimberly paul emily andrew donna "
    "joshua michelle kenneth carol kevin amanda brian melissa george deborah timothy stephanie "
    "ronald rebecca edward laura jason sharon jeffrey cynthia ryan kathleen jacob amy gary "
    "anna nicholas shirley eric angela jonathan ruth stephen brenda larry pamela justin nicole"
)
_LAST = _words(
    "smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez "
    "lopez gonzalez wilson anderson thomas taylor moore jackson martin lee perez thompson "
    "white harris sanchez clark ramirez lewis robinson walker young allen king wright scott "
    "torres nguyen hill flores green adams nelson baker hall rivera campbell mitchell carter "
    "roberts gomez phillips evans turner diaz parker cruz edwards collins reyes stewart morris"
)
_TITLES = (
    "Senior Engineer",
    "Project Manager",
    "Research Associate",
    "Sales Director",
    "Office Manager",
    "Professor of Physics",
    "Graduate Student",
    "Systems Administrator",
    "Account Executive",
    "Head of Operations",
)
_PERSONAL_DOMAINS = ("gmail.com", "yahoo.com", "outlook.com", "fastmail.fm", "posteo.de")
_LIST_TOPICS = _words(
    "gardening astronomy python-users linux-kernel cycling birdwatching jazz-fans "
    "homebrew chess photography sailing woodworking rust-lang debian-devel postgres "
    "haskell-cafe knitting marathon vintage-radio beekeeping climbing ubuntu-users "
    "r-help emacs-devel mycology opera choir-singers"
)
_COMPANY_WORDS = _words(
    "acme globex initech umbrella hooli vandelay stark wayne cyberdyne soylent "
    "tyrell wonka oscorp massive dynamic aperture"
)

_SPAM_TOPICS: dict[str, tuple[str, ...]] = {
    "pharma": (
        "Buy Viagra and Cialis online without prescription",
        "Discreet worldwide shipping and lowest prices guaranteed",
        "Our licensed pharmacy offers generic medications at 80% off",
        "Order now and get 10 free pills with every purchase",
        "Satisfaction guaranteed or your money back",
    ),
    "loans": (
        "You have been pre-approved for a personal loan of up to $50,000",
        "No credit check required, funds in your account within 24 hours",
        "Consolidate your debt and lower your monthly payments today",
        "Our financial advisors are standing by to help you",
        "Apply online in less than five minutes",
    ),
    "casino": (
        "Claim your 500% welcome bonus at the best online casino",
        "Play slots, poker and blackjack from the comfort of your home",
        "Thousands of players win jackpots every single day",
        "Deposit now and receive 200 free spins instantly",
        "Fast withdrawals and 24/7 customer support",
    ),
    "crypto": (
        "This new cryptocurrency is set to explode in the coming weeks",
        "Early investors have already made returns of 4000%",
        "Join our exclusive trading group and never miss a signal",
        "Our automated trading robot works while you sleep",
        "Limited spots available, secure your place now",
    ),
    "watches": (
        "Luxury replica watches at a fraction of the retail price",
        "Rolex, Omega and Breitling models in stock now",
        "Swiss movement, sapphire crystal, indistinguishable from the original",
        "Free express delivery on all orders this week",
        "Impress your friends and colleagues with a premium timepiece",
    ),
    "inheritance": (
        "I am contacting you regarding an unclaimed inheritance of 12.5 million dollars",
        "The deceased shared your surname and left no next of kin",
        "I need a trustworthy foreign partner to help transfer the funds",
        "You will receive forty percent of the total sum for your assistance",
        "Please reply with your full name, address and telephone number",
    ),
    "stock": (
        "Hot stock alert: this company is about to announce a major contract",
        "Analysts expect the share price to triple before the end of the month",
        "Get in before the news breaks and the price takes off",
        "Volume is already climbing as insiders buy up shares",
        "Do your own research but do not wait too long",
    ),
    "dating": (
        "Lonely singles in your area are waiting to meet you",
        "Create your free profile and start chatting tonight",
        "Thousands of verified members join every day",
        "Find your perfect match in just a few clicks",
        "No hidden fees, cancel any time",
    ),
    "software": (
        "Cheap OEM software: Windows, Office and Adobe at 90% off",
        "Instant download after payment, genuine license keys",
        "Save hundreds of dollars on the programs you use every day",
        "All products come with lifetime updates and support",
        "Buy two programs and get the third one free",
    ),
    "weightloss": (
        "Lose 20 pounds in 30 days without diet or exercise",
        "This natural supplement melts fat while you sleep",
        "Doctors are amazed by the results of this breakthrough formula",
        "Order a free trial bottle today, just pay shipping",
        "Join thousands of happy customers who changed their lives",
    ),
}
_TRIGGER_WORDS = _words(
    "viagra cialis pharmacy prescription loan credit casino bonus jackpot bitcoin crypto "
    "replica rolex inheritance million stock shares singles profile software license pills"
)
_CALLS = (
    "Click here to order",
    "Visit our website now",
    "Follow this link to claim your offer",
    "Reply today to get started",
    "Act now, this offer expires soon",
)
_LEGAL = (
    "This e-mail and any attachments are confidential and intended solely for the use of "
    "the individual or entity to whom they are addressed. If you have received this e-mail "
    "in error please notify the sender immediately and delete it from your system. Any "
    "unauthorised copying, disclosure or distribution of the material in this e-mail is "
    "strictly forbidden. {company} accepts no liability for any damage caused by any virus "
    "transmitted by this e-mail. {company} Ltd is registered in England and Wales under "
    "company number {number}, registered office {street}.",
    "CONFIDENTIALITY NOTICE: The information contained in this message may be privileged "
    "and confidential and protected from disclosure. If the reader of this message is not "
    "the intended recipient, or an employee or agent responsible for delivering this "
    "message to the intended recipient, you are hereby notified that any dissemination, "
    "distribution or copying of this communication is strictly prohibited. Views expressed "
    "are those of the author and not necessarily those of {company} Inc., {street}, "
    "reference {number}.",
    "Please consider the environment before printing this email. The content of this "
    "message is confidential. If you have received it by mistake, please inform us by an "
    "email reply and then delete the message. It is forbidden to copy, forward, or in any "
    "way reveal the contents of this message to anyone. The integrity and security of this "
    "email cannot be guaranteed over the Internet. {company} GmbH, {street}, HRB {number}.",
)


class Language:
    """Random English-looking text: words drawn by their frequency in real English."""

    def __init__(self, rng: random.Random, size: int = 6000) -> None:
        import wordfreq

        words = [w for w in wordfreq.top_n_list("en", size * 2) if w.isalpha() and len(w) > 1]
        words = ["i", "a", *words][:size]
        weights = [wordfreq.word_frequency(w, "en") ** 0.75 for w in words]
        self.words = words
        self.cum = list(itertools.accumulate(weights))
        self.rare = words[len(words) // 3 :]
        self.rng = rng

    def word(self) -> str:
        """Return one word, drawn by frequency."""
        return self.words[bisect.bisect(self.cum, self.rng.random() * self.cum[-1])]

    def rare_word(self) -> str:
        """Return one word from the less frequent part of the vocabulary."""
        return self.rng.choice(self.rare)

    def sentence(self, low: int = 6, high: int = 18) -> str:
        """Return a sentence of low..high words."""
        words = [self.word() for _ in range(self.rng.randint(low, high))]
        text = " ".join(words)
        return text[0].upper() + text[1:] + self.rng.choice("....?!")

    def paragraph(self, low: int = 2, high: int = 5) -> str:
        """Return a paragraph of low..high sentences."""
        return " ".join(self.sentence() for _ in range(self.rng.randint(low, high)))

    def title(self) -> str:
        """Return a short title-cased phrase."""
        return " ".join(self.rare_word().capitalize() for _ in range(self.rng.randint(2, 5)))


def wrap(text: str, width: int = 72) -> str:
    """Fill a paragraph to lines of at most ``width`` characters."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Person:
    """A mail user: a name, an address, and an organisation's disclaimer if any."""

    name: str
    address: str
    signature: str | None
    disclaimer: str | None


@dataclass(frozen=True, slots=True)
class MailingList:
    """A mailing list and the text its server appends to every post."""

    name: str
    address: str
    footer: str
    sponsors: tuple[str, ...]
    prefix: str


@dataclass(frozen=True, slots=True)
class Template:
    """A newsletter or transactional sender: fixed header and footer around variable text."""

    sender: str
    address: str
    header: str
    footer: str
    html: bool


@dataclass(frozen=True, slots=True)
class Message:
    """One delivered message with its ground truth."""

    time: float  # seconds since the Unix epoch
    label: str  # "spam" | "ham"
    kind: str
    recipient: str
    raw: bytes
    campaign: str = ""
    list_name: str = ""


@dataclass
class _World:
    users: list[Person]
    contacts: dict[str, list[Person]]
    lists: list[MailingList]
    subscribers: dict[str, list[tuple[Person, float]]]  # list -> (user, joined at)
    newsletters: list[Template]
    services: list[Template]
    customers: dict[str, list[Person]]
    companies: dict[str, str]  # company -> disclaimer
    news_subscribers: dict[str, list[Person]] = field(default_factory=dict)


class MailGenerator:
    """Builds a labelled corpus from a seed (see the module docstring)."""

    def __init__(
        self,
        seed: int,
        days: int = DEFAULT_DAYS,
        users: int = 120,
        lists: int = 24,
    ) -> None:
        self.rng = random.Random(seed)
        self.lang = Language(self.rng)
        self.span = days * 86400.0
        self.start = START.timestamp()
        self.serial = 0
        self.world = self._world(users, lists)

    # -- the world -------------------------------------------------------------------

    def _person(self, domain: str | None = None, disclaimer: str | None = None) -> Person:
        rng = self.rng
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        domain = domain or rng.choice(_PERSONAL_DOMAINS)
        address = f"{first}.{last}{rng.randint(1, 99)}@{domain}"
        name = f"{first.capitalize()} {last.capitalize()}"
        signature = None
        style = rng.random()
        if style < 0.55:
            org = domain.split(".")[0].capitalize()
            signature = (
                f"-- \n{name}\n{rng.choice(_TITLES)}, {org}\n"
                f"Tel. +{rng.randint(1, 49)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}"
            )
        elif style < 0.8:
            signature = f"Best regards,\n{name}\n{self.lang.title()}"
        return Person(name, address, signature, disclaimer)

    def _footer(self, name: str, address: str, domain: str) -> str:
        rng = self.rng
        style = rng.randrange(7)
        if style == 0:
            return (
                "_______________________________________________\n"
                f"{name} mailing list\n{address}\n"
                f"https://{domain}/mailman/listinfo/{name}"
            )
        if style == 1:
            return (
                "---------------------------------------------------------------------\n"
                f"To unsubscribe, e-mail: {name}-unsubscribe@{domain}\n"
                f"For additional commands, e-mail: {name}-help@{domain}"
            )
        if style == 2:
            return (
                "-- \nYou received this message because you are subscribed to the Google "
                f'Groups "{name}" group.\nTo unsubscribe from this group and stop receiving '
                f"emails from it, send an email to {name}+unsubscribe@googlegroups.com.\n"
                f"To view this discussion on the web visit https://groups.google.com/d/{name}."
            )
        if style == 3:
            return (
                "_______________________________________________\n"
                f"{name.capitalize()} mailing list -- {address}\n"
                f"To unsubscribe send an email to {name}-leave@{domain}\n"
                f"List archives and subscription information: https://{domain}/archives/{name}"
            )
        # A custom footer in plain words: no keyword a text rule could recognise.
        return wrap(
            f"Posted through the {name.capitalize()} circle. "
            + " ".join(self.lang.sentence(10, 16) for _ in range(rng.randint(2, 4)))
            + f" Meetings at {rng.randint(1, 200)} {self.lang.rare_word().capitalize()} Street."
        )

    def _sponsor(self) -> str:
        body = wrap(self.lang.sentence(10, 18) + " " + self.rng.choice(_CALLS) + ".")
        return (
            "------------------------ Sponsor ---------------------~-->\n"
            f"{body}\nhttp://ads.example.net/{self._token(8)}\n"
            "---------------------------------------------------------------------~->"
        )

    def _template(self, transactional: bool) -> Template:
        rng, lang = self.rng, self.lang
        brand = f"{lang.rare_word().capitalize()}{rng.choice(('ly', 'hub', 'mart', 'box', 'io'))}"
        domain = f"{brand.lower()}.com"
        if transactional:
            header = f"{brand}\n{lang.sentence(5, 9)}"
            footer = wrap(
                f"This is an automated message from {brand}. Please do not reply to this "
                f"email. {lang.sentence(10, 16)} {brand} Inc., {rng.randint(1, 999)} "
                f"{lang.rare_word().capitalize()} Avenue, {lang.rare_word().capitalize()}. "
                f"Privacy policy: https://{domain}/privacy Terms: https://{domain}/terms"
            )
            address = f"no-reply@{domain}"
        else:
            header = f"View this email in your browser\n{brand.upper()} WEEKLY\n" + wrap(
                lang.sentence(8, 14) + " " + lang.sentence(8, 14)
            )
            footer = wrap(
                f"Copyright (c) 2026 {brand}, All rights reserved. You are receiving this "
                f"email because you opted in via our website. {lang.sentence(8, 14)} Our "
                f"mailing address is: {brand}, {rng.randint(1, 999)} "
                f"{lang.rare_word().capitalize()} Road. Want to change how you receive these "
                "emails? You can update your preferences or unsubscribe from this list."
            )
            address = f"news@{domain}"
        return Template(brand, address, header, footer, html=rng.random() < 0.6)

    def _world(self, n_users: int, n_lists: int) -> _World:
        rng = self.rng
        companies: dict[str, str] = {}
        for word in _COMPANY_WORDS[:12]:
            if rng.random() < 0.5:
                text = rng.choice(_LEGAL).format(
                    company=word.capitalize(),
                    number=rng.randint(1000000, 9999999),
                    street=f"{rng.randint(1, 300)} {self.lang.rare_word().capitalize()} Street",
                )
            else:  # a corporate banner with no legal keyword
                text = (
                    f"{word.capitalize()}: "
                    + " ".join(self.lang.sentence(8, 14) for _ in range(rng.randint(2, 4)))
                    + f" Visit us at www.{word}.com."
                )
            companies[word] = wrap(text)
        users: list[Person] = []
        for _ in range(n_users):
            if rng.random() < 0.35:
                company = rng.choice(list(companies))
                users.append(self._person(f"{company}.com", companies[company]))
            else:
                users.append(self._person("example.org"))
        contacts: dict[str, list[Person]] = {}
        for user in users:
            mine: list[Person] = []
            for _ in range(rng.randint(3, 10)):
                if rng.random() < 0.3:
                    mine.append(rng.choice(users))
                elif rng.random() < 0.4:
                    company = rng.choice(list(companies))
                    mine.append(self._person(f"{company}.com", companies[company]))
                else:
                    mine.append(self._person())
            contacts[user.address] = [c for c in mine if c.address != user.address]
        lists: list[MailingList] = []
        subscribers: dict[str, list[tuple[Person, float]]] = {}
        for topic in rng.sample(_LIST_TOPICS, min(n_lists, len(_LIST_TOPICS))):
            domain = rng.choice(
                ("lists.example.org", "mail.python.example", "lists.debian.example")
            )
            address = f"{topic}@{domain}"
            sponsors = tuple(self._sponsor() for _ in range(3)) if rng.random() < 0.3 else ()
            prefix = ""
            if rng.random() < 0.3:  # a banner the list puts above every post
                prefix = wrap(
                    f"[{topic}] " + self.lang.sentence(8, 14) + " " + self.lang.sentence()
                )
            footer = self._footer(topic, address, domain)
            lists.append(MailingList(topic, address, footer, sponsors, prefix))
            members = rng.sample(users, rng.randint(4, max(5, n_users // 5)))
            subscribers[topic] = [
                (m, 0.0 if rng.random() < 0.7 else rng.random() * self.span * 0.8) for m in members
            ]
        newsletters = [self._template(False) for _ in range(12)]
        services = [self._template(True) for _ in range(10)]
        news_subscribers = {
            t.sender: rng.sample(users, rng.randint(5, n_users // 3)) for t in newsletters
        }
        customers = {t.sender: rng.sample(users, rng.randint(10, n_users // 2)) for t in services}
        return _World(
            users,
            contacts,
            lists,
            subscribers,
            newsletters,
            services,
            customers,
            companies,
            news_subscribers,
        )

    # -- helpers ---------------------------------------------------------------------

    def _token(self, n: int) -> str:
        return "".join(self.rng.choice(string.ascii_lowercase + string.digits) for _ in range(n))

    def _time(self) -> float:
        return self.start + self.rng.random() * self.span

    def _message_id(self, domain: str) -> str:
        self.serial += 1
        return f"<{self.serial}.{self._token(10)}@{domain}>"

    def _envelope(
        self,
        when: float,
        sender: str,
        recipient: str,
        subject: str,
        extra: Sequence[tuple[str, str]] = (),
    ) -> list[str]:
        domain = sender.rsplit("@", 1)[-1].rstrip(">")
        lines = [
            f"Delivered-To: {recipient}",
            f"From: {sender}",
            f"To: {recipient}",
            f"Subject: {subject}",
            f"Date: {format_datetime(datetime.fromtimestamp(when, UTC))}",
            f"Message-ID: {self._message_id(domain)}",
            "MIME-Version: 1.0",
        ]
        lines.extend(f"{k}: {v}" for k, v in extra)
        return lines

    def _plain(self, headers: list[str], body: str) -> bytes:
        head = "\n".join([*headers, "Content-Type: text/plain; charset=utf-8"])
        return (head + "\n\n" + body.rstrip("\n") + "\n").encode("utf-8")

    def _html(self, headers: list[str], html: str, plain: str | None) -> bytes:
        if plain is None:
            head = "\n".join([*headers, "Content-Type: text/html; charset=utf-8"])
            return (head + "\n\n" + html + "\n").encode("utf-8")
        boundary = f"=_{self._token(16)}"
        head = "\n".join([*headers, f'Content-Type: multipart/alternative; boundary="{boundary}"'])
        body = (
            f"--{boundary}\nContent-Type: text/plain; charset=utf-8\n\n{plain}\n"
            f"--{boundary}\nContent-Type: text/html; charset=utf-8\n\n{html}\n"
            f"--{boundary}--\n"
        )
        return (head + "\n\n" + body).encode("utf-8")

    @staticmethod
    def _to_html(blocks: Sequence[str]) -> str:
        inner = "".join(f"<p>{b.replace(chr(10), '<br>')}</p>\n" for b in blocks)
        return f"<html><body>\n{inner}</body></html>"

    def _quote(self, who: Person, when: float, text: str) -> str:
        rng = self.rng
        stamp = format_datetime(datetime.fromtimestamp(when, UTC))
        if rng.random() < 0.25:
            return (
                "-----Original Message-----\n"
                f"From: {who.name} <{who.address}>\nSent: {stamp}\nSubject: Re: update\n\n" + text
            )
        quoted = "\n".join(f"> {line}" if line else ">" for line in text.splitlines())
        return f"On {stamp}, {who.name} <{who.address}> wrote:\n{quoted}"

    # -- ham -------------------------------------------------------------------------

    def _personal(
        self, when: float, threads: dict[tuple[str, str], tuple[float, Person, str]]
    ) -> Message:
        rng, lang = self.rng, self.lang
        user = rng.choice(self.world.users)
        sender = rng.choice(self.world.contacts[user.address])
        first = user.name.split()[0]
        paras = [f"{rng.choice(('Hi', 'Hello', 'Dear', 'Hey'))} {first},"]
        paras += [wrap(lang.paragraph()) for _ in range(rng.randint(1, 4))]
        own = "\n\n".join(paras)
        body = own
        if sender.signature:
            body += "\n\n" + sender.signature
        if sender.disclaimer:
            body += "\n\n" + sender.disclaimer
        key = (user.address, sender.address)
        previous = threads.get(key)
        kind = "personal"
        if previous is not None and rng.random() < 0.5:
            before, author, text = previous
            body += "\n\n" + self._quote(author, before, text)
            kind = "personal-reply"
        threads[key] = (when, sender, body)
        subject = ("Re: " if kind == "personal-reply" else "") + lang.title()
        headers = self._envelope(when, f"{sender.name} <{sender.address}>", user.address, subject)
        return Message(when, "ham", kind, user.address, self._plain(headers, body))

    def _list_post(
        self, when: float, ml: MailingList, body: str, sender: str, subject: str
    ) -> list[tuple[Person, bytes]]:
        """Return the post as delivered to the subscribers who receive it (at most 3,
        sampled: every message of the corpus is one delivery)."""
        rng = self.rng
        members = [
            p for p, joined in self.world.subscribers[ml.name] if joined <= when - self.start
        ]
        if not members:
            return []
        text = f"{ml.prefix}\n\n{body}" if ml.prefix else body
        if ml.sponsors:
            text += "\n\n" + rng.choice(ml.sponsors)
        text += "\n\n" + ml.footer
        extra = [
            ("List-Id", f"<{ml.address.replace('@', '.')}>"),
            ("List-Unsubscribe", f"<mailto:{ml.name}-unsubscribe@{ml.address.split('@')[1]}>"),
            ("Precedence", "list"),
        ]
        out = []
        for member in rng.sample(members, min(len(members), rng.randint(1, 3))):
            headers = self._envelope(when, sender, member.address, f"[{ml.name}] {subject}", extra)
            out.append((member, self._plain(headers, text)))
        return out

    def _list_ham(
        self, when: float, archive: dict[str, list[tuple[float, Person, str]]]
    ) -> list[Message]:
        rng, lang = self.rng, self.lang
        ml = rng.choice(self.world.lists)
        poster = rng.choice(self.world.subscribers[ml.name])[0]
        own = "\n\n".join(wrap(lang.paragraph()) for _ in range(rng.randint(1, 4)))
        body = own
        if poster.signature and rng.random() < 0.7:
            body += "\n\n" + poster.signature
        history = archive.setdefault(ml.name, [])
        kind = "list"
        if history and rng.random() < 0.4:
            before, who, text = rng.choice(history[-20:])
            body = own + "\n\n" + self._quote(who, before, text)
            if poster.signature:
                body += "\n\n" + poster.signature
            kind = "list-reply"
        history.append((when, poster, own))
        sender = f"{poster.name} <{poster.address}>"
        return [
            Message(when, "ham", kind, m.address, raw, list_name=ml.name)
            for m, raw in self._list_post(when, ml, body, sender, lang.title())
        ]

    def _newsletter(self, when: float) -> list[Message]:
        rng, lang = self.rng, self.lang
        template = rng.choice(self.world.newsletters)
        items = []
        for _ in range(rng.randint(2, 5)):
            items.append(
                f"{lang.title()}\n{wrap(lang.paragraph(2, 4))}\nRead more: https://"
                f"{template.address.split('@')[1]}/p/{self._token(6)}"
            )
        out = []
        readers = self.world.news_subscribers[template.sender]
        for reader in rng.sample(readers, min(len(readers), rng.randint(1, 4))):
            blocks = [template.header, f"Hi {reader.name.split()[0]},", *items, template.footer]
            headers = self._envelope(
                when,
                f"{template.sender} <{template.address}>",
                reader.address,
                f"{template.sender}: {lang.title()}",
                [
                    (
                        "List-Unsubscribe",
                        f"<https://{template.address.split('@')[1]}/u/{self._token(12)}>",
                    )
                ],
            )
            plain = "\n\n".join(blocks)
            raw = (
                self._html(headers, self._to_html(blocks), plain if rng.random() < 0.5 else None)
                if template.html
                else self._plain(headers, plain)
            )
            out.append(Message(when, "ham", "newsletter", reader.address, raw))
        return out

    def _transactional_body(self, template: Template, customer: Person) -> list[str]:
        rng, lang = self.rng, self.lang
        what = rng.randrange(3)
        first = customer.name.split()[0]
        if what == 0:
            lines = [
                f"{rng.randint(1, 4)} x {lang.title()} ${rng.randint(3, 400)}.{rng.randint(10, 99)}"
                for _ in range(rng.randint(1, 4))
            ]
            middle = (
                f"Thank you for your order, {first}. Order number "
                f"{rng.randint(10**7, 10**8)}.\n" + "\n".join(lines)
            )
        elif what == 1:
            middle = (
                f"Hello {first}, your package is on its way. Tracking number "
                f"{self._token(12).upper()}. Expected delivery in {rng.randint(2, 6)} days."
            )
        else:
            middle = (
                f"Hi {first}, we received a request to reset your password. Use code "
                f"{rng.randint(100000, 999999)} within 15 minutes. If you did not request "
                "this, you can ignore this message."
            )
        return [template.header, middle, template.footer]

    def _transactional(self, when: float) -> Message:
        template = self.rng.choice(self.world.services)
        customer = self.rng.choice(self.world.customers[template.sender])
        blocks = self._transactional_body(template, customer)
        headers = self._envelope(
            when, f"{template.sender} <{template.address}>", customer.address, self.lang.title()
        )
        plain = "\n\n".join(blocks)
        raw = (
            self._html(headers, self._to_html(blocks), plain)
            if template.html
            else self._plain(headers, plain)
        )
        return Message(when, "ham", "transactional", customer.address, raw)

    # -- spam ------------------------------------------------------------------------

    def _campaign_base(self) -> tuple[str, list[str]]:
        rng, lang = self.rng, self.lang
        topic = rng.choice(list(_SPAM_TOPICS))
        pitch = list(_SPAM_TOPICS[topic])
        rng.shuffle(pitch)
        paras = []
        for i in range(rng.randint(2, 5)):
            parts = [pitch[i % len(pitch)] + "."]
            parts += [lang.sentence() for _ in range(rng.randint(1, 3))]
            paras.append(" ".join(parts))
        paras.append(f"{rng.choice(_CALLS)}: http://{{domain}}/{{token}}")
        return topic, paras

    def _mutations(self) -> dict[str, float]:
        rng = self.rng
        level = rng.random()
        if level < 0.25:
            return {}
        return {
            "merge": 1.0 if rng.random() < 0.6 else 0.0,
            "words": rng.choice((0.0, 0.01, 0.03, 0.06)),
            "sentences": rng.choice((0, 1, 2, 3)),
            "shuffle": 1.0 if rng.random() < 0.3 else 0.0,
            "html": 1.0 if rng.random() < 0.35 else 0.0,
            "append": rng.choice((0, 0, 20, 60, 150)),
        }

    def _obfuscate(self, text: str) -> str:
        rng = self.rng
        words = text.split(" ")
        out = []
        for word in words:
            bare = word.strip(".,:;!?").lower()
            if bare in _TRIGGER_WORDS or (len(word) > 5 and rng.random() < 0.08):
                cut = rng.randint(1, len(word) - 1)
                glue = rng.choice(("<!-- -->", "<b></b>", "<span></span>", "<!--x-->"))
                word = word[:cut] + glue + word[cut:]
            out.append(word)
        return " ".join(out)

    def _spam_copy(
        self, paras: list[str], mutations: dict[str, float], recipient: Person, domain: str
    ) -> tuple[list[str], bool]:
        rng, lang = self.rng, self.lang
        copy = [p.replace("{domain}", domain).replace("{token}", self._token(8)) for p in paras]
        if mutations.get("shuffle"):
            head, tail = copy[:-1], copy[-1:]
            rng.shuffle(head)
            copy = head + tail
        rate = mutations.get("words", 0.0)
        if rate:
            mutated = []
            for p in copy:
                words = p.split(" ")
                for _ in range(max(0, round(len(words) * rate * rng.uniform(0.5, 1.5)))):
                    words.insert(rng.randrange(len(words) + 1), lang.rare_word())
                mutated.append(" ".join(words))
            copy = mutated
        for _ in range(int(mutations.get("sentences", 0))):
            i = rng.randrange(len(copy))
            copy[i] = copy[i] + " " + lang.sentence()
        if mutations.get("merge"):
            first = recipient.name.split()[0]
            copy.insert(0, f"Dear {first},")
            copy.append(
                f"Your personal reference: {rng.randint(10**6, 10**7)}-{self._token(4).upper()}"
            )
        append = int(mutations.get("append", 0))
        if append:
            copy.append(" ".join(lang.rare_word() for _ in range(rng.randint(append // 2, append))))
        return [wrap(p) for p in copy], bool(mutations.get("html"))

    def _spam_raw(
        self,
        when: float,
        blocks: list[str],
        html: bool,
        recipient: str,
        subject: str,
        sender: str,
        extra: Sequence[tuple[str, str]] = (),
    ) -> bytes:
        headers = self._envelope(when, sender, recipient, subject, extra)
        if html:
            return self._html(headers, self._to_html([self._obfuscate(b) for b in blocks]), None)
        return self._plain(headers, "\n\n".join(blocks))

    def _spammer(self) -> str:
        rng = self.rng
        tld = rng.choice(("ru", "cn", "biz", "info", "top"))
        return f"{rng.choice(_FIRST).capitalize()} <{self._token(7)}@{self._token(6)}.{tld}>"

    def _campaign(self, budget: int) -> list[Message]:
        """Return the deliveries of one spam campaign (at most ``budget``)."""
        rng = self.rng
        size = min(budget, MAX_CAMPAIGN, max(1, int(rng.paretovariate(1.1) * 4)))
        start = self._time()
        burst = rng.choice((3600.0, 6 * 3600.0, 86400.0, 3 * 86400.0))
        cid = f"c{self.serial}-{self._token(4)}"
        domain = f"{self._token(8)}.{rng.choice(('ru', 'cn', 'biz', 'info', 'top'))}"
        subject = self.lang.title()
        style = rng.random()
        if style < 0.08:
            return self._phishing(cid, size, start, burst)
        if style < 0.13:
            return self._compromised(cid, size, start, burst)
        topic, paras = self._campaign_base()
        mutations = self._mutations()
        via_lists = style < 0.38
        targets = rng.sample(self.world.lists, rng.randint(1, 3)) if via_lists else []
        out: list[Message] = []
        while len(out) < size:
            when = start + rng.expovariate(1.0 / burst)
            if targets:
                ml = rng.choice(targets)
                blocks, html = self._spam_copy(
                    paras, mutations, Person("Member", "", None, None), domain
                )
                body = "\n\n".join(blocks)
                for member, raw in self._list_post(when, ml, body, self._spammer(), subject):
                    out.append(
                        Message(
                            when, "spam", f"spam-list-{topic}", member.address, raw, cid, ml.name
                        )
                    )
                continue
            recipient = rng.choice(self.world.users)
            blocks, html = self._spam_copy(paras, mutations, recipient, domain)
            raw = self._spam_raw(when, blocks, html, recipient.address, subject, self._spammer())
            out.append(Message(when, "spam", f"spam-{topic}", recipient.address, raw, cid))
        return out[:size]

    def _phishing(self, cid: str, size: int, start: float, burst: float) -> list[Message]:
        """Phishing built on a real sender's template: its header and footer are those of
        the sender's legitimate transactional mail."""
        rng = self.rng
        template = rng.choice(self.world.services)
        bait = (
            f"We detected unusual activity on your {template.sender} account. Your account "
            "has been temporarily suspended. To restore access, verify your identity within "
            f"24 hours at http://{template.sender.lower()}-secure.{self._token(5)}.top/verify"
        )
        out = []
        for _ in range(size):
            when = start + rng.expovariate(1.0 / burst)
            victim = rng.choice(self.world.users)
            blocks = [template.header, f"Dear {victim.name.split()[0]},", bait, template.footer]
            headers = self._envelope(
                when,
                f"{template.sender} <security@{self._token(6)}.top>",
                victim.address,
                "Action required: account suspended",
            )
            out.append(
                Message(
                    when,
                    "spam",
                    "spam-phishing",
                    victim.address,
                    self._plain(headers, "\n\n".join(blocks)),
                    cid,
                )
            )
        return out

    def _compromised(self, cid: str, size: int, start: float, burst: float) -> list[Message]:
        """Spam sent from a hijacked corporate account: it carries the company's disclaimer."""
        rng = self.rng
        company = rng.choice(list(self.world.companies))
        victim_sender = self._person(f"{company}.com", self.world.companies[company])
        # A hijacked account mostly writes to the people who correspond with its company.
        domain = f"@{company}.com"
        contacts = [
            u
            for u in self.world.users
            if u.address.endswith(domain)
            or any(c.address.endswith(domain) for c in self.world.contacts[u.address])
        ]
        topic, paras = self._campaign_base()
        out = []
        for _ in range(size):
            when = start + rng.expovariate(1.0 / burst)
            pool = contacts if contacts and rng.random() < 0.7 else self.world.users
            recipient = rng.choice(pool)
            blocks, _ = self._spam_copy(paras, {"merge": 1.0}, recipient, "bit.example")
            body = "\n\n".join(blocks) + "\n\n" + self.world.companies[company]
            headers = self._envelope(
                when,
                f"{victim_sender.name} <{victim_sender.address}>",
                recipient.address,
                self.lang.title(),
            )
            out.append(
                Message(
                    when,
                    "spam",
                    f"spam-compromised-{topic}",
                    recipient.address,
                    self._plain(headers, body),
                    cid,
                )
            )
        return out

    # -- the corpus ------------------------------------------------------------------

    def generate(
        self, messages: int, spam_fraction: float = DEFAULT_SPAM_FRACTION
    ) -> list[Message]:
        """Return ``messages`` deliveries in time order, about ``spam_fraction`` spam."""
        rng = self.rng
        n_spam = round(messages * spam_fraction)
        n_ham = messages - n_spam
        ham_times = sorted(self._time() for _ in range(n_ham * 2))
        ham: list[Message] = []
        threads: dict[tuple[str, str], tuple[float, Person, str]] = {}
        archive: dict[str, list[tuple[float, Person, str]]] = {}
        for when in ham_times:
            if len(ham) >= n_ham:
                break
            pick = rng.random()
            if pick < 0.33:
                ham.append(self._personal(when, threads))
            elif pick < 0.68:
                ham.extend(self._list_ham(when, archive))
            elif pick < 0.85:
                ham.extend(self._newsletter(when))
            else:
                ham.append(self._transactional(when))
        spam: list[Message] = []
        while len(spam) < n_spam:
            spam.extend(self._campaign(n_spam - len(spam)))
        corpus = ham[:n_ham] + spam[:n_spam]
        corpus.sort(key=lambda m: (m.time, m.label, m.recipient))
        return corpus


def generate(
    seed: int,
    messages: int,
    spam_fraction: float = DEFAULT_SPAM_FRACTION,
    days: int = DEFAULT_DAYS,
    users: int = 120,
) -> list[Message]:
    """Return a seeded labelled corpus of ``messages`` deliveries in time order."""
    return MailGenerator(seed, days=days, users=users).generate(messages, spam_fraction)


def _mbox_from_line(message: Message) -> bytes:
    stamp = datetime.fromtimestamp(message.time, UTC).strftime("%a %b %d %H:%M:%S %Y")
    return f"From mailgen@localhost {stamp}\n".encode("ascii")


def _mbox_body(raw: bytes) -> bytes:
    # mboxrd quoting: a body line starting with ">*From " gains one more ">".
    lines = raw.split(b"\n")
    quoted = [b">" + line if line.lstrip(b">").startswith(b"From ") else line for line in lines]
    return b"\n".join(quoted)


def write_corpus(messages: Sequence[Message], out: Path, labels: bool = True) -> dict[str, int]:
    """Write ``spam/spam.mbox``, ``ham/ham.mbox`` and (optionally) ``labels.csv`` under
    ``out``; return the number of messages per label."""
    counts = {"spam": 0, "ham": 0}
    handles = {}
    rows = []
    try:
        for label in counts:
            (out / label).mkdir(parents=True, exist_ok=True)
            handles[label] = (out / label / f"{label}.mbox").open("wb")
        for message in messages:
            handle = handles[message.label]
            handle.write(_mbox_from_line(message))
            handle.write(_mbox_body(message.raw).rstrip(b"\n") + b"\n\n")
            rows.append(
                {
                    "source": f"{message.label}/{message.label}.mbox:{counts[message.label]}",
                    "label": message.label,
                    "kind": message.kind,
                    "recipient": message.recipient,
                    "time": f"{message.time:.3f}",
                    "campaign": message.campaign,
                    "list": message.list_name,
                }
            )
            counts[message.label] += 1
    finally:
        for handle in handles.values():
            handle.close()
    if labels:
        with (out / LABELS_FILE).open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=LABEL_FIELDS)
            writer.writeheader()
            writer.writerows(rows)
    return counts

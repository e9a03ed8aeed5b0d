"""The engine of ``p2pspam sim replay``: load a labelled corpus, replay it in time order
through the shared decision pipeline (``p2pspam.defences.pipeline``), count what was
caught and what was flagged.

The replay has two passes. The agent pass fingerprints every message as its recipient's
agent would at arrival: normalisation defences, then ATA with the recipient's window
sketch, which learns each legitimate message after it was fingerprinted (the sketch
learns from the mail the user keeps; it never sees spam). The network pass then goes
through the vectors in time order: every message is checked first; a spam that was not
caught is marked by its recipient with probability ``mark_rate`` (a signed spam vote); a
ham that was flagged is rescued with probability ``rescue_rate`` (a signed ham vote).
Because the agent pass does not depend on network decisions, one agent pass serves every
THRES and every network configuration.

Near duplicates follow the reference measure of the I-Match paper (Kołcz & Chowdhury):
two spam messages are near duplicates when the cosine of their unique word sets is at
least 0.9. ``near_dup_total`` counts the spam that arrives after a near duplicate of it
was marked; ``near_dup_caught`` those of them that were caught.
"""

from __future__ import annotations

import calendar
import csv
import mailbox
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate, parsedate_to_datetime
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from p2pspam.defences.body import defended_body
from p2pspam.defences.pipeline import (
    AgentDefences,
    Fingerprinter,
    Network,
    Settings,
    ham_vote_vector,
    window_texts,
)
from p2pspam.defences.strip import StripOptions
from p2pspam.errors import InputError
from p2pspam.fingerprint.normalize import NOTE_NO_TEXT_BODY, CanonicalBody, canonical_body
from p2pspam.fingerprint.schemes import Scheme
from p2pspam.fingerprint.vector import FeatureVector
from p2pspam.mailio import RawMessage, iter_messages

NEAR_DUP_COSINE = 0.9
LABELS = ("spam", "ham")
_WORD = re.compile(r"\w+")
_HEADER_END = re.compile(rb"\r?\n\r?\n")


@dataclass(frozen=True, slots=True)
class Item:
    """One delivery of the corpus."""

    source: str
    raw: bytes
    label: str
    time_ms: int
    recipient: str
    kind: str


# --------------------------------------------------------------------------- loading


def _header(raw: bytes, name: bytes) -> str | None:
    end = _HEADER_END.search(raw)
    head = raw[: end.start() if end else len(raw)]
    found = re.search(rb"(?im)^" + name + rb":[ \t]*(.*)$", head)
    return None if found is None else found.group(1).decode("utf-8", "replace").strip()


def _date_ms(raw: bytes) -> int | None:
    value = _header(raw, b"Date")
    if not value:
        return None
    try:
        return int(parsedate_to_datetime(value).timestamp() * 1000)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _mbox_from_ms(source: str, cache: dict[str, list[int | None]]) -> int | None:
    """The time of the mbox ``From `` line of ``path:N`` sources."""
    path, _, index = source.rpartition(":")
    if not path or not index.isdigit():
        return None
    if path not in cache:
        box = mailbox.mbox(path, create=False)
        times: list[int | None] = []
        for key in box.keys():  # noqa: SIM118 (iterating a mailbox yields messages)
            line = box.get_file(key, from_=True).readline().decode("ascii", "replace")
            parts = line.split(None, 2)
            parsed = parsedate(parts[2]) if len(parts) == 3 else None
            times.append(None if parsed is None else calendar.timegm(parsed) * 1000)
        cache[path] = times
    times = cache[path]
    i = int(index)
    return times[i] if i < len(times) else None


def _recipient(raw: bytes) -> str:
    for name in (b"Delivered-To", b"X-Original-To", b"To"):
        value = _header(raw, name)
        if value:
            found = re.search(r"[\w.+-]+@[\w.-]+", value)
            return found.group(0).lower() if found else value.lower()
    return "user"


def _relative(source: str, mail: Path) -> str:
    """``source`` relative to the corpus directory (``spam/spam.mbox:17``)."""
    path, sep, index = source.rpartition(":")
    if sep and index.isdigit() and Path(path).is_file():
        return f"{Path(path).relative_to(mail).as_posix()}:{index}"
    return Path(source).relative_to(mail).as_posix()


def _read_labels(path: Path) -> dict[str, dict[str, str]]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"cannot read labels file {path}: {exc}") from None
    out = {}
    for n, row in enumerate(rows, start=2):
        source, label = row.get("source"), row.get("label")
        if not source or label not in LABELS:
            raise InputError(
                f"{path}:{n}: each row needs a source and a label of spam or ham "
                f"(got {source!r}, {label!r})"
            )
        out[source] = row
    return out


def load_corpus(mail: Path, labels: Path | None = None) -> tuple[list[Item], list[str]]:
    """Return the corpus in time order and the sources that could not be used (with the
    reason). Without ``labels``, ``mail/spam`` and ``mail/ham`` give the labels."""
    if not mail.is_dir():
        raise InputError(f"{mail}: not a directory (expected spam/ and ham/ inside)")
    rows = _read_labels(labels) if labels is not None else None
    if rows is None and not any((mail / label).exists() for label in LABELS):
        raise InputError(f"{mail}: no spam/ or ham/ inside, and no --labels file")
    items: list[Item] = []
    skipped: list[str] = []
    mbox_times: dict[str, list[int | None]] = {}
    inputs = [str(mail / label) for label in LABELS if (mail / label).exists()]
    if rows is not None:
        inputs = [str(mail)]
    for got in iter_messages(inputs):
        if not isinstance(got, RawMessage):
            skipped.append(f"{got.source}: {got.reason}")
            continue
        relative = _relative(got.source, mail)
        row = rows.get(relative) if rows is not None else None
        if rows is not None and row is None:
            continue  # not labelled: not part of the corpus (labels.csv itself, say)
        label = row["label"] if row else relative.split("/", 1)[0]
        if label not in LABELS:
            continue
        time_ms: int | None = None
        if row and row.get("time"):
            try:
                time_ms = int(float(row["time"]) * 1000)
            except ValueError:
                time_ms = None
        if time_ms is None:
            time_ms = _date_ms(got.data)
        if time_ms is None:
            try:
                time_ms = _mbox_from_ms(got.source, mbox_times)
            except (OSError, ValueError):
                time_ms = None
        if time_ms is None:
            skipped.append(f"{got.source}: no time (no Date: header or mbox From line)")
            continue
        recipient = (row or {}).get("recipient") or _recipient(got.data)
        kind = (row or {}).get("kind") or label
        items.append(Item(relative, got.data, label, time_ms, recipient, kind))
    items.sort(key=lambda it: (it.time_ms, it.source))
    return items, skipped


# --------------------------------------------------------------------------- near dups


def near_duplicate_pairs(
    items: Sequence[Item],
    threshold: float = NEAR_DUP_COSINE,
    texts: Sequence[str] | None = None,
) -> list[list[int]]:
    """For each item, the earlier spam items whose unique word set has cosine >= threshold
    with its own (empty lists for ham). ``texts``: the canonical bodies, when known."""
    spam = [i for i, it in enumerate(items) if it.label == "spam"]
    vocabulary: dict[str, int] = {}
    rows, cols = [], []
    for r, i in enumerate(spam):
        text = canonical_body(items[i].raw).text if texts is None else texts[i]
        words = set(_WORD.findall(text))
        for w in words:
            rows.append(r)
            cols.append(vocabulary.setdefault(w, len(vocabulary)))
    out: list[list[int]] = [[] for _ in items]
    if not spam:
        return out
    matrix = sparse.csr_matrix(
        (np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(len(spam), len(vocabulary))
    )
    sizes = np.asarray(matrix.sum(axis=1)).ravel()
    norms = np.sqrt(np.maximum(sizes, 1))
    block = 512
    for start in range(0, len(spam), block):
        stop = min(start + block, len(spam))
        shared = (matrix[start:stop] @ matrix[:stop].T).toarray()
        cosine = shared / norms[start:stop, None] / norms[None, :stop]
        for r in range(stop - start):
            j = start + r
            earlier = np.flatnonzero(cosine[r, :j] >= threshold)
            out[spam[j]] = [spam[k] for k in earlier.tolist()]
    return out


# --------------------------------------------------------------------------- passes


@dataclass
class AgentPass:
    """The vectors (and defended texts) of every item under one agent configuration."""

    vectors: list[FeatureVector]
    texts: list[str]
    vote_vectors: list[FeatureVector] | None = None  # when a spam vote differs (sketch)


def agent_pass(
    items: Sequence[Item],
    defences: AgentDefences,
    bodies: Sequence[CanonicalBody] | None = None,
) -> AgentPass:
    """Fingerprint every item as its recipient's agent would, in time order (``bodies``:
    the defended bodies under ``defences.strip``, when already computed)."""
    agent = Fingerprinter(defences)
    vectors, texts, votes = [], [], []
    for i, it in enumerate(items):
        body = agent.body(it.raw) if bodies is None else bodies[i]
        vectors.append(agent.vector(body, it.recipient))
        votes.append(
            agent.vector(body, it.recipient, vote=True) if it.label == "spam" else vectors[-1]
        )
        texts.append(body.text)
        if it.label == "ham":
            agent.learn(body, it.recipient)
    return AgentPass(vectors, texts, votes)


def defended_bodies(items: Sequence[Item], strip: StripOptions) -> list[CanonicalBody]:
    """The canonical bodies of every item after the normalisation defences ``strip``."""
    return [defended_body(it.raw, strip) for it in items]


def scheme_pass(base: AgentPass, scheme: Scheme) -> AgentPass:
    """The vectors of another scheme over the same defended bodies (no window sketch:
    only ATA selects windows)."""
    bodies = [CanonicalBody(t) if t else CanonicalBody("", NOTE_NO_TEXT_BODY) for t in base.texts]
    return AgentPass(scheme.vectors(bodies), base.texts)


@dataclass
class Flagged:
    """A ham message decided spam, and the features that made it so."""

    index: int
    source: str
    kind: str
    features: tuple[int, ...]
    guids: tuple[bytes, ...]


@dataclass
class RunResult:
    """What one replay under one configuration found."""

    spam_total: int = 0
    caught: int = 0
    near_dup_total: int = 0
    near_dup_caught: int = 0
    ham_total: int = 0
    flagged: list[Flagged] = field(default_factory=list)
    marked: int = 0
    rescued: int = 0
    discounted_matches: int = 0
    caught_by_kind: Counter = field(default_factory=Counter)
    spam_by_kind: Counter = field(default_factory=Counter)

    def summary(self) -> dict[str, Any]:
        """The JSON shape of ``sim replay --json``."""
        return {
            "spam": {
                "total": self.spam_total,
                "caught": self.caught,
                "near_dup_total": self.near_dup_total,
                "near_dup_caught": self.near_dup_caught,
                "marked": self.marked,
            },
            "ham": {
                "total": self.ham_total,
                "flagged": len(self.flagged),
                "rescued": self.rescued,
            },
            "matches_with_discounted_features": self.discounted_matches,
        }


def network_pass(
    items: Sequence[Item],
    agent: AgentPass,
    settings: Settings,
    near_dups: Sequence[Sequence[int]],
    mark_rate: float,
    rescue_rate: float,
    seed: int,
    network_factory: Callable[[Settings], Network] = Network,
) -> RunResult:
    """Replay the agent pass's vectors in time order through one network (see the module
    docstring)."""
    vectors, texts = agent.vectors, agent.texts
    votes = agent.vote_vectors or vectors
    rng = random.Random(seed)
    net = network_factory(settings)
    result = RunResult()
    marked = [False] * len(items)
    for i, (it, vector) in enumerate(zip(items, vectors, strict=True)):
        chance = rng.random()  # one draw per message: runs of one seed are paired
        decision = net.check(vector, it.time_ms)
        is_spam = decision.status == "spam"
        if any(m.discounted_features for m, _, _ in decision.matches):
            result.discounted_matches += 1
        if it.label == "spam":
            result.spam_total += 1
            result.spam_by_kind[it.kind] += 1
            after_mark = any(marked[j] for j in near_dups[i])
            result.near_dup_total += after_mark
            if is_spam:
                result.caught += 1
                result.caught_by_kind[it.kind] += 1
                result.near_dup_caught += after_mark
            elif chance < mark_rate and net.vote(it.recipient, votes[i], "spam", it.time_ms):
                marked[i] = True
                result.marked += 1
        else:
            result.ham_total += 1
            if is_spam:
                spam = decision.spam_matches
                features = tuple(sorted({f for m in spam for f in m.matched_features}))
                result.flagged.append(
                    Flagged(i, it.source, it.kind, features, tuple(m.guid for m in spam))
                )
                if chance < rescue_rate:
                    ham = vector
                    if vector.scheme == "ata":
                        ham = ham_vote_vector(vector, texts[i], spam, vector.params["L"])
                    result.rescued += net.vote(it.recipient, ham, "ham", it.time_ms)
    return result


def flagged_reasons(flagged: Sequence[Flagged], texts: Sequence[str], length: int) -> Counter[str]:
    """Count the window texts of the features that flagged ham (the boilerplate that
    caused false positives)."""
    reasons: Counter[str] = Counter()
    for f in flagged:
        for window in window_texts(texts[f.index], f.features, length).values():
            reasons[window] += 1
    return reasons

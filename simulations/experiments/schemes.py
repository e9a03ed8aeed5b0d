"""``p2pspam sim schemes``: every fingerprint scheme, and TLSH and pyzor's digest as
baselines, on seeded adversarial campaigns and ham that shares boilerplate.

The database holds the reported messages: the first (merge-only) copy of every campaign,
and the first issue of every newsletter and first post of every list (reported by
mistake: their boilerplate must not pull in the other issues and posts). Every other
message is a query; a scheme catches a query when some reported vector shares at least
THRES features with it (TLSH: distance <= 50; pyzor: equal digest). Reported: recall of
campaign copies, false positives among ham, the same at the strictest THRES that gives
zero false positives (``thres0``), bytes published per message, CPU per message; plus
the union of ATA and I-Match (caught by either, each at its own THRES). The line-block
detector is local, not a database lookup: every message is streamed through one filter
and a message at >= 66 % is caught (newsletters are bulk too: its ham hits are expected).

This is no figure of the papers: it is the comparison that section 5.2 of the SpamWatch
paper calls for (several schemes, so a spammer cannot tune against one), with the
mutations each related-work paper claims robustness to.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from simulations.common import add_common_options, announce, out_dir, print_table, pyplot

FIGURE = "SpamWatch section 5.2 (several schemes); I-Match Tables 2-3 protocol (no ham hits)"
TLSH_THRES = 50


@dataclass
class Outcome:
    """One row of the table."""

    scheme: str
    thres: str
    recall: float
    false_pos: int
    thres0: str
    recall0: float
    bytes_per_msg: float
    cpu_us: float
    caught: list[bool]  # per spam query at THRES
    caught0: list[bool]  # per spam query at thres0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sim schemes``."""
    parser = sub.add_parser(
        "schemes",
        help="recall on adversarial campaigns and false positives on ham, every scheme",
        description=__doc__.split("\n\n")[0],
    )
    add_common_options(parser)
    parser.set_defaults(func=run)


def _overlaps(db: Sequence[frozenset[int]], queries: Sequence[frozenset[int]]) -> list[int]:
    """The largest overlap of each query with any database vector."""
    index: dict[int, list[int]] = {}
    for n, features in enumerate(db):
        for f in features:
            index.setdefault(f, []).append(n)
    best = []
    for features in queries:
        counts: dict[int, int] = {}
        for f in features:
            for n in index.get(f, ()):
                counts[n] = counts.get(n, 0) + 1
        best.append(max(counts.values(), default=0))
    return best


def _outcome(
    name: str,
    scores: Sequence[float],
    is_spam: Sequence[bool],
    thres: float,
    label: Callable[[float], str],
    bytes_per_msg: float,
    cpu_us: float,
) -> Outcome:
    """Score rule: caught when score >= thres; thres0 = just above the best ham score."""
    spam_scores = [s for s, y in zip(scores, is_spam, strict=True) if y]
    ham_scores = [s for s, y in zip(scores, is_spam, strict=True) if not y]
    caught = [s >= thres for s in spam_scores]
    worst_ham = max(ham_scores, default=float("-inf"))
    thres0 = max(thres, worst_ham + 1) if worst_ham >= thres else thres
    caught0 = [s >= thres0 for s in spam_scores]
    return Outcome(
        name,
        label(thres),
        sum(caught) / len(caught),
        sum(s >= thres for s in ham_scores),
        label(thres0),
        sum(caught0) / len(caught0),
        bytes_per_msg,
        cpu_us,
        caught,
        caught0,
    )


def run(args: argparse.Namespace) -> int:
    """Run the comparison, write CSV and PNG, print the table."""
    import email
    from email import policy

    import pyzor.digest
    import tlsh

    from p2pspam.fingerprint.lineblock import BulkConfig, BulkDetector
    from p2pspam.fingerprint.normalize import canonical_body
    from p2pspam.fingerprint.schemes import get_scheme
    from simulations.common import write_csv
    from simulations.experiments._campaigns import generate

    sizes = (
        dict(campaigns=12, copies=10, newsletters=4, issues=5, lists=3, posts=6, replies=4)
        if args.quick
        else {}
    )
    mails = generate(args.seed, **sizes)
    bodies = [canonical_body(m.raw) for m in mails]
    reported = [n for n, m in enumerate(mails) if m.reported]
    queries = [n for n, m in enumerate(mails) if not m.reported]
    is_spam = [mails[n].label == "spam" for n in queries]
    outcomes: list[Outcome] = []

    for name in ("ata", "imatch", "winnow", "lsh"):
        scheme = get_scheme(name)
        scheme.vectors(bodies[:1])  # load lexicons and tables outside the timing
        start = time.process_time()
        vectors = scheme.vectors(bodies)
        cpu = (time.process_time() - start) / len(mails) * 1e6
        sets = [frozenset(v.features) for v in vectors]
        scores = _overlaps([sets[n] for n in reported], [sets[n] for n in queries])
        size = sum(8 * len(v.features) for v in vectors) / len(vectors)
        outcomes.append(
            _outcome(name, scores, is_spam, scheme.default_thres, lambda t: str(int(t)), size, cpu)
        )

    start = time.process_time()
    digests = [tlsh.hash(b.text.encode("utf-8")) for b in bodies]
    cpu = (time.process_time() - start) / len(mails) * 1e6
    db = [digests[n] for n in reported if digests[n] not in ("", "TNULL")]
    scores = []
    for n in queries:
        if digests[n] in ("", "TNULL") or not db:
            scores.append(float("-inf"))
        else:
            scores.append(-min(tlsh.diff(digests[n], d) for d in db))
    size = sum(35 for d in digests if d not in ("", "TNULL")) / len(digests)
    outcomes.append(
        _outcome("tlsh", scores, is_spam, -TLSH_THRES, lambda t: f"d<={int(-t)}", size, cpu)
    )

    start = time.process_time()
    pyzor_digests = [
        pyzor.digest.DataDigester(email.message_from_bytes(m.raw, policy=policy.compat32)).value
        for m in mails
    ]
    cpu = (time.process_time() - start) / len(mails) * 1e6
    known = {pyzor_digests[n] for n in reported}
    scores = [1.0 if pyzor_digests[n] in known else 0.0 for n in queries]
    outcomes.append(_outcome("pyzor", scores, is_spam, 1, lambda t: "equal", 20.0, cpu))

    ata, imatch = outcomes[0], outcomes[1]
    either = [a or b for a, b in zip(ata.caught, imatch.caught, strict=True)]
    either0 = [a or b for a, b in zip(ata.caught0, imatch.caught0, strict=True)]
    union_fp = _union_false_positives(outcomes, mails, queries, bodies, reported)
    outcomes.append(
        Outcome(
            "ata+imatch",
            f"{ata.thres}|{imatch.thres}",
            sum(either) / len(either),
            union_fp,
            f"{ata.thres0}|{imatch.thres0}",
            sum(either0) / len(either0),
            ata.bytes_per_msg + imatch.bytes_per_msg,
            ata.cpu_us + imatch.cpu_us,
            either,
            either0,
        )
    )

    detector = BulkDetector(BulkConfig())
    order = list(range(len(mails)))
    import random

    random.Random(args.seed).shuffle(order)
    start = time.process_time()
    flagged = {n: detector.observe_message(mails[n].raw, 0).alert for n in order}
    cpu = (time.process_time() - start) / len(mails) * 1e6
    spam_flags = [flagged[n] for n in queries if mails[n].label == "spam"]
    ham_hits = sum(flagged[n] for n in queries if mails[n].label != "spam")
    outcomes.append(
        Outcome(
            "lineblock (local)",
            ">=66%",
            sum(spam_flags) / len(spam_flags),
            ham_hits,
            "-",
            float("nan"),
            0.0,
            cpu,
            spam_flags,
            spam_flags,
        )
    )

    ham_queries = sum(1 for y in is_spam if not y)
    spam_queries = len(is_spam) - ham_queries
    out = out_dir(args, "schemes")
    rows = [
        {
            "scheme": o.scheme,
            "thres": o.thres,
            "recall": o.recall,
            "ham_false_positives": o.false_pos,
            "ham_queries": ham_queries,
            "spam_queries": spam_queries,
            "thres_zero_fp": o.thres0,
            "recall_zero_fp": o.recall0,
            "bytes_per_msg": o.bytes_per_msg,
            "cpu_us_per_msg": o.cpu_us,
        }
        for o in outcomes
    ]
    csv_path = write_csv(out / "schemes.csv", rows)
    kinds = _by_mutation(outcomes, [mails[n] for n in queries if mails[n].label == "spam"])
    kinds_path = write_csv(out / "schemes_by_mutation.csv", kinds)
    png_path = _plot(outcomes, out / "schemes.png")
    print_table(
        f"Schemes on {spam_queries} campaign copies ({len(reported)} reported messages) "
        f"and {ham_queries} ham, seed {args.seed}",
        ["scheme", "THRES", "recall", "ham FP", "THRES@0FP", "recall@0FP", "bytes", "CPU us"],
        [
            (
                o.scheme,
                o.thres,
                round(o.recall, 4),
                o.false_pos,
                o.thres0,
                round(o.recall0, 4),
                round(o.bytes_per_msg, 1),
                round(o.cpu_us, 1),
            )
            for o in outcomes
        ],
        caption="recall: share of campaign copies caught; ham FP: ham queries caught",
    )
    announce(FIGURE, [csv_path, kinds_path, png_path])
    return 0


def _union_false_positives(outcomes, mails, queries, bodies, reported) -> int:
    """Ham caught by ATA or I-Match at their default THRES."""
    from p2pspam.fingerprint.schemes import get_scheme

    ham = [n for n in queries if mails[n].label != "spam"]
    hit = set()
    for name in ("ata", "imatch"):
        scheme = get_scheme(name)
        vectors = scheme.vectors(bodies)
        sets = [frozenset(v.features) for v in vectors]
        scores = _overlaps([sets[n] for n in reported], [sets[n] for n in ham])
        hit |= {n for n, s in zip(ham, scores, strict=True) if s >= scheme.default_thres}
    return len(hit)


def _by_mutation(outcomes: Sequence[Outcome], spam) -> list[dict]:
    """Recall of each scheme among the copies that carry each mutation."""
    from simulations.experiments._campaigns import MUTATIONS

    rows = []
    for mutation in MUTATIONS:
        picked = [i for i, m in enumerate(spam) if mutation in m.kind.split("+")]
        row: dict = {"mutation": mutation, "copies": len(picked)}
        for o in outcomes:
            row[o.scheme] = sum(o.caught[i] for i in picked) / len(picked) if picked else 0.0
        rows.append(row)
    return rows


def _plot(outcomes: Sequence[Outcome], path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 4.5))
    names = [o.scheme for o in outcomes]
    xs = range(len(names))
    ax.bar([x - 0.2 for x in xs], [o.recall for o in outcomes], 0.4, label="recall at THRES")
    ax.bar(
        [x + 0.2 for x in xs],
        [0 if o.recall0 != o.recall0 else o.recall0 for o in outcomes],
        0.4,
        label="recall at zero ham FP",
    )
    for x, o in zip(xs, outcomes, strict=True):
        ax.annotate(f"FP {o.false_pos}", (x - 0.2, o.recall), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(list(xs), names, rotation=20)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("campaign copies caught")
    ax.set_title("Fingerprint schemes on adversarial campaigns (FP: ham caught at THRES)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path

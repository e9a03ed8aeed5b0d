"""``p2pspam sim imatch``: stability of the extended I-Match signature (Kołcz & Chowdhury
2008, eq. 1 and Table 4).

A document of random primary-lexicon and stop-band terms is perturbed by n changes, each
adding a primary term it lacks or removing one it has (so the signature of the original
lexicon always changes). The extended signature is stable when one of the K auxiliary
signatures is unchanged; eq. 1 predicts 1 - (1 - p^n)^K. Also measured: the share q of
auxiliary lexicons whose signature survives, and the expected number of lexicons to
generate until one survives, 1/q, next to the paper's Table 4.

About Table 4: its values (2.23, 7.41, 54.9, 3012 for n = 2, 5, 10, 20) are 1/(1 - p)^n
with p = 0.33, i.e. the chance that all n perturbed terms are *kept* by a lexicon; a
signature survives only when all n are *dropped* (probability p^n, the paper's own eq. 1
and its derivation), so 1/q = 1/p^n: 9.2 for n = 2. We print both; the measurement
follows p^n.
"""

from __future__ import annotations

import argparse
import random

from simulations.common import add_common_options, announce, out_dir, print_table, pyplot

FIGURE = "I-Match paper eq. 1 (stability vs K) and Table 4 (expected lexicons)"
PAPER_TABLE4 = {2: 2.23, 5: 7.41, 10: 54.87, 20: 3012.39}  # L = 100,000 row


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sim imatch``."""
    parser = sub.add_parser(
        "imatch",
        help="I-Match eq. 1 / Table 4: extended-signature stability vs K and perturbations n",
        description=__doc__.split("\n\n")[0],
    )
    add_common_options(parser)
    parser.add_argument("--trials", type=int, default=None, help="documents per n")
    parser.add_argument("--p", type=int, default=33, help="dropped fraction in percent (33)")
    parser.set_defaults(func=run)


def trial(
    rng: random.Random, primary: list[str], stop: list[str], n: int, p_pct: int, lexicons: int
) -> list[bool]:
    """Perturb one random document by n changes; return, per auxiliary lexicon 1..K,
    whether its signature survived."""
    from p2pspam.fingerprint.imatch import imatch_features

    present = rng.sample(primary, 60)
    words = present[:40] + rng.sample(stop, 30)
    absent = present[40:]
    changed = list(words)
    removable = list(present[:40])
    for _ in range(n):
        if rng.random() < 0.5 and len(removable) > 10:
            term = removable.pop(rng.randrange(len(removable)))
            changed.remove(term)
        else:
            changed.append(absent.pop())
    rng.shuffle(words)
    rng.shuffle(changed)
    kwargs = {"lexicons_count": lexicons, "p_pct": p_pct, "min_terms": 1, "min_ratio_pct": 0}
    before, _ = imatch_features(" ".join(words), **kwargs)
    after, _ = imatch_features(" ".join(changed), **kwargs)
    assert before[0] != after[0], "a change of a primary term must change signature 0"
    return [b == a for b, a in zip(before[1:], after[1:], strict=True)]


def run(args: argparse.Namespace) -> int:
    """Run the experiment, write CSV and PNG, print the summary."""
    from p2pspam.errors import ParameterError
    from p2pspam.fingerprint.imatch import MAX_K
    from p2pspam.fingerprint.lexicon import lexicons
    from simulations.common import write_csv

    trials = args.trials or (150 if args.quick else 1500)
    if trials < 1 or not 1 <= args.p <= 99:
        raise ParameterError("--trials must be >= 1 and --p 1..99")
    p = args.p / 100
    rng = random.Random(args.seed)
    lex = lexicons()
    primary = sorted(lex.primary)
    stop = sorted(lex.stop)
    ns = (1, 2, 3, 4, 5) if args.quick else (1, 2, 3, 4, 5, 6)
    ks = range(1, 11)
    rows = []
    summary = []
    curves = {}
    for n in ns:
        results = [trial(rng, primary, stop, n, args.p, MAX_K) for _ in range(trials)]
        survive_share = sum(sum(r) for r in results) / (trials * MAX_K)
        measured = [sum(any(r[:k]) for r in results) / trials for k in ks]
        model = [1 - (1 - p**n) ** k for k in ks]
        curves[n] = (measured, model)
        for k, m, e in zip(ks, measured, model, strict=True):
            rows.append({"n": n, "K": k, "trials": trials, "measured": m, "model_eq1": e})
        summary.append(
            (
                n,
                measured[-1],
                model[-1],
                survive_share,
                p**n,
                1 / survive_share if survive_share else float("inf"),
                1 / p**n,
                PAPER_TABLE4.get(n, 1 / (1 - p) ** n),
            )
        )
    out = out_dir(args, "imatch")
    csv_path = write_csv(out / "imatch.csv", rows)
    png_path = _plot(curves, p, out / "imatch.png")
    print_table(
        f"Extended I-Match stability, p = {p}, {trials} documents per n",
        ["n", "K=10 meas", "K=10 eq.1", "q meas", "q=p^n", "1/q meas", "1/p^n", "Table 4"],
        summary,
        caption="Table 4 column: the paper's value (or 1/(1-p)^n where it has none)",
    )
    announce(FIGURE, [csv_path, png_path])
    return 0


def _plot(curves: dict, p: float, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for n, (measured, model) in curves.items():
        ks = list(range(1, len(measured) + 1))
        line = ax.plot(ks, model, "-", label=f"eq. 1, n={n}")[0]
        ax.plot(ks, measured, "o", color=line.get_color(), label=f"measured, n={n}")
    ax.set_xlabel("auxiliary lexicons K")
    ax.set_ylabel("P(some auxiliary signature unchanged)")
    ax.set_title(f"Extended I-Match stability (p = {p})")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path

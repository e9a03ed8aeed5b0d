"""``p2pspam sim robustness``: Fig. 7 and Appendix A of the SpamWatch paper.

Random texts of 1 KB and 5 KB are modified by (a) 10 consecutive characters, (b) 50
consecutive characters, (c) 5 randomly placed 5-character words (every modified
character is replaced by a different one: these are the paper's "update" operations).
For THRES = 1..|FV| we measure, with the shipping ATA code
(``p2pspam.fingerprint.ata.ata_features_batch``), the probability that at least THRES of
the |FV| = 10 features survive, and compare with the Appendix A model
(``simulations.ata_model``) in two forms:

* ``model``: the paper's plug-in, |X| = |Y| = L - 1 + d for one update and the expected
  union size for several (positions uniform, document ends included);
* ``model_exact_xy``: the same equations averaged over each trial's exact |X| = |Y|
  (what the model predicts when the only approximation left is its own independence
  assumption).

``measured_interior`` restricts the measurement to trials where the paper's sizes are
exact (every update at least L - 1 characters from both ends, no two updates touching a
common window), compared with ``model_interior`` (|X| = |Y| = ops * (L - 1 + d)).

Where the model does not hold: it treats x = |FP(A) ∩ X| and y = |FP(B) ∩ Y| as
independent, but they are positively correlated (when X took many of A's top values,
A - X has fewer high values left and Y fills more of FP(B)), so z = max(x, y) is smaller
than modelled and the model is pessimistic at high THRES. The error grows with |X|/|A|:
below 0.01 at 6-10 % (one edit of 1 KB), about 0.05 at 24 % (five words in 1 KB).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

from simulations.common import (
    announce,
    experiment_parser,
    out_dir,
    print_table,
    pyplot,
    save_figure,
    sized,
)

FIGURE = "Fig. 7 (robustness to modification) and Appendix A (analytic model)"
SIZES = (1024, 5120)
MODIFICATIONS = {
    "10 consecutive": (10, 1),
    "50 consecutive": (50, 1),
    "5 words x 5 chars": (5, 5),
}


@dataclass(frozen=True, slots=True)
class Scenario:
    """Measured and modelled survival curves of one (size, modification)."""

    size: int
    modification: str
    trials: int
    interior_trials: int
    measured: np.ndarray
    measured_interior: np.ndarray
    model: np.ndarray
    model_exact_xy: np.ndarray
    model_interior: np.ndarray
    mean_x: float


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sim robustness``."""
    parser = experiment_parser(
        sub,
        "robustness",
        __doc__,
        help="Fig. 7 + Appendix A: feature survival after small edits, measured vs model",
    )
    parser.add_argument("--trials", type=int, default=None, help="documents per scenario")
    parser.add_argument("--length", type=int, default=50, help="ATA window length L")
    parser.add_argument("--count", type=int, default=10, help="features per vector |FV|")
    parser.set_defaults(func=run)


def run_scenario(
    rng: np.random.Generator, size: int, modification: str, trials: int, length: int, count: int
) -> Scenario:
    """Measure and model one scenario."""
    from p2pspam.fingerprint.ata import ata_features_batch
    from simulations import ata_model
    from simulations.randtext import different_symbols, random_symbols, to_texts

    d, ops = MODIFICATIONS[modification]
    docs = random_symbols(rng, (trials, size))
    modified = docs.copy()
    starts = rng.integers(0, size - d + 1, size=(trials, ops))
    for t in range(trials):
        for s in starts[t]:
            modified[t, s : s + d] = different_symbols(rng, docs[t, s : s + d])
    before = ata_features_batch(to_texts(docs), length, count)
    after = ata_features_batch(to_texts(modified), length, count)
    overlap = np.array([len(set(a) & set(b)) for a, b in zip(before, after, strict=True)])
    thres = np.arange(1, count + 1)
    measured = (overlap[:, None] >= thres[None, :]).mean(axis=0)

    windows = size - length + 1
    touched = np.array(
        [ata_model.touched_windows(size, length, [(s, s + d) for s in row]) for row in starts]
    )
    paper_x = ops * ata_model.update_sizes(length, d)[0]
    interior = (touched == paper_x) & np.all(
        (starts >= length - 1) & (starts + d <= size - length + 1), axis=1
    )
    measured_interior = (
        (overlap[interior, None] >= thres[None, :]).mean(axis=0)
        if interior.any()
        else np.full(count, np.nan)
    )
    if ops == 1:
        x_size = ata_model.update_sizes(length, d)[0]
    else:
        x_size = round(ata_model.expected_union_size(size, length, d, ops))
    model = ata_model.survival(windows, x_size, x_size, count)
    values, counts = np.unique(touched, return_counts=True)
    model_exact = sum(
        c * ata_model.survival(windows, int(v), int(v), count)
        for v, c in zip(values, counts, strict=True)
    ) / len(touched)
    return Scenario(
        size=size,
        modification=modification,
        trials=trials,
        interior_trials=int(interior.sum()),
        measured=measured,
        measured_interior=measured_interior,
        model=model,
        model_exact_xy=np.asarray(model_exact),
        model_interior=ata_model.survival(windows, paper_x, paper_x, count),
        mean_x=float(touched.mean()),
    )


def run(args: argparse.Namespace) -> int:
    """Run the experiment, write CSV and PNG, print the summary."""
    from p2pspam.errors import ParameterError
    from simulations.common import write_csv

    trials = sized(args.trials, 300, 20000, args.quick)
    if trials < 1:
        raise ParameterError(f"--trials must be at least 1, got {trials}")
    if not 1 <= args.count <= 50 or not 2 <= args.length <= 500:
        raise ParameterError("--count must be 1..50 and --length 2..500")
    rng = np.random.default_rng(args.seed)
    out = out_dir(args, "robustness")
    scenarios = [
        run_scenario(rng, size, mod, trials, args.length, args.count)
        for size in SIZES
        for mod in MODIFICATIONS
    ]
    rows = []
    for sc in scenarios:
        for k in range(args.count):
            rows.append(
                {
                    "size": sc.size,
                    "modification": sc.modification,
                    "thres": k + 1,
                    "trials": sc.trials,
                    "measured": float(sc.measured[k]),
                    "model": float(sc.model[k]),
                    "model_exact_xy": float(sc.model_exact_xy[k]),
                    "interior_trials": sc.interior_trials,
                    "measured_interior": float(sc.measured_interior[k]),
                    "model_interior": float(sc.model_interior[k]),
                    "abs_err": float(abs(sc.model[k] - sc.measured[k])),
                    "abs_err_interior": float(abs(sc.model_interior[k] - sc.measured_interior[k])),
                    "mean_x": sc.mean_x,
                }
            )
    csv_path = write_csv(out / "robustness.csv", rows)
    png_path = _plot(scenarios, args.count, out / "robustness.png")
    print_table(
        f"Robustness (|FV|={args.count}, L={args.length}, {trials} documents per scenario)",
        [
            "size",
            "modification",
            "E|X|",
            "P(>=3)",
            "P(>=5)",
            "P(>=7)",
            "max|model-meas|",
            "max|model-interior|",
            "max|exact_xy-meas|",
        ],
        [
            (
                sc.size,
                sc.modification,
                round(sc.mean_x, 1),
                float(sc.measured[2]),
                float(sc.measured[4]),
                float(sc.measured[6]),
                float(np.max(np.abs(sc.model - sc.measured))),
                float(np.nanmax(np.abs(sc.model_interior - sc.measured_interior))),
                float(np.max(np.abs(sc.model_exact_xy - sc.measured))),
            )
            for sc in scenarios
        ],
        caption="P(>=t): measured probability that at least t features survive",
    )
    announce(FIGURE, [csv_path, png_path])
    return 0


def _plot(scenarios: list[Scenario], count: int, path):
    plt = pyplot()
    fig, axes = plt.subplots(1, len(MODIFICATIONS), figsize=(15, 4.5), sharey=True)
    thres = np.arange(1, count + 1)
    for ax, mod in zip(axes, MODIFICATIONS, strict=True):
        for sc, color in zip(
            [s for s in scenarios if s.modification == mod], ["tab:blue", "tab:red"], strict=True
        ):
            label = f"{sc.size // 1024} KB"
            ax.plot(thres, sc.measured, "o", color=color, label=f"{label} measured")
            ax.plot(thres, sc.model, "-", color=color, label=f"{label} model (App. A)")
        ax.set_title(f"modified: {mod}")
        ax.set_xlabel("THRES")
        ax.set_xticks(thres)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"P(at least THRES of {count} features match)")
    axes[0].legend(loc="lower left")
    fig.suptitle("Fig. 7 reproduction: robustness of ATA fingerprints (random text)")
    return save_figure(fig, path)

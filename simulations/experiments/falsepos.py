"""``p2pspam sim falsepos``: Fig. 8 of the SpamWatch paper (false positives on random text).

For each size (1 KB .. 64 KB, doubling) we generate ``--docs`` random texts (100,000 in
the paper), compute their ATA vectors (|FV| = 10, L = 50) and count, through an inverted
index of features, the pairs of texts sharing exactly 1, exactly 2 and more than 2
features, out of docs * (docs - 1) / 2 pairs.

The fingerprint code is the shipping one, fed directly with code points:
``window_checksums`` over a batch of texts laid end to end (windows that straddle two
texts are dropped), then ``top_distinct`` and ``bit_reverse64`` per text; a test checks
this equals ``ata_features_batch``.

``--bits``: our checksums are 64-bit, so two random texts share a feature only by a
64-bit collision (expected count ~1e-4 pairs at 64 KB: the measurement is zero). The
paper's Java prototype used shorter checksums; ``--bits 32`` keeps the top 32 bits of
each window checksum before the top-N selection, which models a 32-bit checksum and
gives the paper's curve shape (the rate grows with document size, as the N highest of W
checksums lie in the top N/W of the range).
"""

from __future__ import annotations

import argparse
import time

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

FIGURE = "Fig. 8 (false positives on random text)"
FULL_SIZES = tuple(1024 << i for i in range(7))  # 1 KB .. 64 KB
QUICK_SIZES = (1024, 4096)
BATCH_CHARS = 1 << 22


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sim falsepos``."""
    parser = experiment_parser(
        sub,
        "falsepos",
        __doc__,
        help="Fig. 8: pairs of random texts sharing 1 or 2 of 10 features, per size",
    )
    parser.add_argument("--docs", type=int, default=None, help="texts per size (100000)")
    parser.add_argument(
        "--sizes", default=None, help="comma-separated sizes in KB (default 1,2,4,...,64)"
    )
    parser.add_argument(
        "--bits", default="64,32", help="checksum widths to evaluate (default %(default)s)"
    )
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--length", type=int, default=50, help="ATA window length L")
    parser.add_argument("--count", type=int, default=10, help="features per vector |FV|")
    parser.set_defaults(func=run)


def batch_features(
    seed: np.random.SeedSequence, docs: int, size: int, length: int, count: int, bits: tuple
) -> dict[int, np.ndarray]:
    """ATA features of ``docs`` random texts of ``size`` characters, for each checksum
    width in ``bits``: arrays of shape (docs, count)."""
    from p2pspam.fingerprint.ata import bit_reverse64, top_distinct, window_checksums
    from simulations.randtext import random_points

    rng = np.random.default_rng(seed)
    points = random_points(rng, (docs, size)).reshape(-1)
    hashes = window_checksums(points, length)
    padded = np.zeros(docs * size, dtype=np.uint64)
    padded[: len(hashes)] = hashes
    rows = padded.reshape(docs, size)[:, : size - length + 1]
    out = {}
    for b in bits:
        shift = np.uint64(64 - b)
        feats = np.zeros((docs, count), dtype=np.uint64)
        for i in range(docs):
            row = rows[i] if b == 64 else rows[i] >> shift
            top = top_distinct(row, count)
            feats[i, : len(top)] = bit_reverse64(top)
        out[b] = feats
    return out


def _work(job: tuple) -> dict[int, np.ndarray]:
    return batch_features(*job)


def measure_size(
    seed: int, docs: int, size: int, length: int, count: int, bits: tuple, workers: int
) -> dict[int, np.ndarray]:
    """Features of ``docs`` random texts of one size (deterministic in ``seed``)."""
    per_batch = max(1, BATCH_CHARS // size)
    seeds = np.random.SeedSequence([seed, size]).spawn((docs + per_batch - 1) // per_batch)
    jobs = [
        (s, min(per_batch, docs - i * per_batch), size, length, count, bits)
        for i, s in enumerate(seeds)
    ]
    if workers > 1 and len(jobs) > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_work, jobs, chunksize=1)
    else:
        parts = [_work(j) for j in jobs]
    return {b: np.concatenate([p[b] for p in parts]) for b in bits}


def count_pairs(features: np.ndarray) -> dict[str, int]:
    """Pairs of rows sharing exactly 1, exactly 2, and more than 2 features."""
    from simulations.invindex import overlap_histogram, shared_feature_pairs

    docs, count = features.shape
    ids = np.repeat(np.arange(docs), count)
    _, _, shared = shared_feature_pairs(ids, features.reshape(-1))
    return overlap_histogram(shared, 2)


def run(args: argparse.Namespace) -> int:
    """Run the experiment, write CSV and PNG, print the summary."""
    from p2pspam.errors import ParameterError
    from p2pspam.fingerprint.ata import check_params
    from simulations.common import write_csv

    check_params(args.length, args.count)
    docs = sized(args.docs, 1500, 100_000, args.quick)
    try:
        sizes = (
            tuple(int(s) * 1024 for s in args.sizes.split(","))
            if args.sizes
            else (QUICK_SIZES if args.quick else FULL_SIZES)
        )
        bits = tuple(sorted({int(b) for b in args.bits.split(",")}, reverse=True))
    except ValueError as exc:
        raise ParameterError(f"--sizes and --bits take comma-separated integers: {exc}") from exc
    if docs < 2 or any(s <= args.length + args.count for s in sizes) or not sizes:
        raise ParameterError("need at least 2 docs and sizes larger than L + |FV| characters")
    if any(not 8 <= b <= 64 for b in bits) or args.workers < 1:
        raise ParameterError("--bits must be within 8..64 and --workers at least 1")
    out = out_dir(args, "falsepos")
    pairs_total = docs * (docs - 1) // 2
    rows = []
    for size in sizes:
        start = time.perf_counter()
        feats = measure_size(args.seed, docs, size, args.length, args.count, bits, args.workers)
        fp_seconds = time.perf_counter() - start
        for b in bits:
            hist = count_pairs(feats[b])
            rows.append(
                {
                    "size": size,
                    "bits": b,
                    "docs": docs,
                    "pairs": pairs_total,
                    "pairs_1": hist["1"],
                    "rate_1": hist["1"] / pairs_total,
                    "pairs_2": hist["2"],
                    "rate_2": hist["2"] / pairs_total,
                    "pairs_gt2": hist[">2"],
                    "rate_1_upper95": max(hist["1"], 3.0) / pairs_total,
                    "seconds": fp_seconds,
                }
            )
    csv_path = write_csv(out / "falsepos.csv", rows)
    png_path = _plot(rows, bits, out / "falsepos.png")
    print_table(
        f"False positives on random text ({docs} texts per size, {pairs_total:.3g} pairs)",
        ["size KB", "bits", "pairs 1", "rate 1", "pairs 2", "rate 2", "pairs >2", "seconds"],
        [
            (
                r["size"] // 1024,
                r["bits"],
                r["pairs_1"],
                r["rate_1"],
                r["pairs_2"],
                r["rate_2"],
                r["pairs_gt2"],
                round(r["seconds"], 1),
            )
            for r in rows
        ],
        caption="rate = pairs / all pairs; with 0 pairs the 95% upper bound is 3 / pairs",
    )
    announce(FIGURE, [csv_path, png_path])
    return 0


def _plot(rows: list[dict], bits: tuple, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for b, color in zip(bits, ["tab:blue", "tab:red", "tab:green", "tab:purple"], strict=False):
        sel = [r for r in rows if r["bits"] == b]
        kb = [r["size"] // 1024 for r in sel]
        for key, style in (("rate_1", "o-"), ("rate_2", "s--")):
            vals = [r[key] if r[key] > 0 else np.nan for r in sel]
            ax.plot(kb, vals, style, color=color, label=f"{b}-bit, {key[-1]} shared")
        if all(r["pairs_1"] == 0 for r in sel):
            ax.plot(
                kb,
                [r["rate_1_upper95"] for r in sel],
                "v:",
                color=color,
                label=f"{b}-bit: none found (95% upper bound)",
            )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("file size (KB)")
    ax.set_ylabel("probability a pair shares i of 10 features")
    ax.set_title("Fig. 8 reproduction: false positives on random text")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return save_figure(fig, path)

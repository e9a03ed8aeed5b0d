"""``p2pspam sim scale``: Kademlia lookup cost from 1,000 to 100,000 nodes (beyond the
paper).

For each network size, random queriers look up random keys with the peer's sans-IO
``Lookup`` (``simulations.kademlia``: k-buckets of 20, alpha 3, 8 replicas). We report
the rounds until the first node holding the record (one of the 8 closest) answers, the
rounds and the messages (requests sent) of the full lookup, and how often it found the
true 8 closest nodes. Rounds grow with log2(N); the slope per doubling is fitted.
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

FIGURE = "beyond the paper: Kademlia hops and messages vs network size (log growth)"
FULL_SIZES = (1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000)
QUICK_SIZES = (200, 800, 3200)


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sim scale``."""
    parser = experiment_parser(
        sub,
        "scale",
        __doc__,
        help="Kademlia rounds and messages per lookup from 1,000 to 100,000 nodes",
    )
    parser.add_argument("--sizes", default=None, help="comma-separated node counts")
    parser.add_argument("--lookups", type=int, default=None, help="lookups per size (400)")
    parser.set_defaults(func=run)


def measure(n: int, lookups: int, rng: np.random.Generator) -> dict:
    """Run ``lookups`` random lookups on a random ``n``-node network."""
    from simulations.kademlia import Kademlia

    start = time.perf_counter()
    net = Kademlia(n, rng)
    hit_rounds, rounds, messages, exact = [], [], [], 0
    for _ in range(lookups):
        q = int(rng.integers(n))
        key = net.random_key(rng)
        truth = net.true_closest(key, net.replicas + 1)
        truth = truth[truth != q][: net.replicas]
        holders = np.zeros(n, dtype=bool)
        holders[truth] = True
        trace = net.lookup(q, key)
        hits = trace.rounds[holders[trace.nodes]]
        hit_rounds.append(int(hits.min()) if len(hits) else np.nan)
        rounds.append(int(trace.rounds.max()) if len(trace.rounds) else 0)
        messages.append(trace.messages)
        exact += set(trace.closest.tolist()) == set(truth.tolist())
        net.forget_replies()
    return {
        "nodes": n,
        "lookups": lookups,
        "rounds_to_record": float(np.nanmean(hit_rounds)),
        "rounds_to_record_std": float(np.nanstd(hit_rounds)),
        "rounds_full": float(np.mean(rounds)),
        "messages": float(np.mean(messages)),
        "messages_std": float(np.std(messages)),
        "found_true_closest": exact / lookups,
        "seconds": time.perf_counter() - start,
    }


def run(args: argparse.Namespace) -> int:
    """Run the experiment, write CSV and PNG, print the summary."""
    from p2pspam.errors import ParameterError
    from simulations.common import write_csv

    try:
        sizes = (
            tuple(int(s) for s in args.sizes.split(","))
            if args.sizes
            else (QUICK_SIZES if args.quick else FULL_SIZES)
        )
    except ValueError as exc:
        raise ParameterError(f"--sizes takes comma-separated integers: {exc}") from exc
    lookups = sized(args.lookups, 60, 400, args.quick)
    if not sizes or any(not 30 <= s <= 1_000_000 for s in sizes) or lookups < 1:
        raise ParameterError("sizes must be 30..1000000 nodes and --lookups at least 1")
    rng = np.random.default_rng(args.seed)
    out = out_dir(args, "scale")
    rows = [measure(n, lookups, rng) for n in sizes]
    logn = np.log2([r["nodes"] for r in rows])
    slope_rec, icpt_rec = np.polyfit(logn, [r["rounds_to_record"] for r in rows], 1)
    slope_msg, icpt_msg = np.polyfit(logn, [r["messages"] for r in rows], 1)
    for r in rows:
        r["fit_rounds"] = slope_rec * np.log2(r["nodes"]) + icpt_rec
        r["fit_messages"] = slope_msg * np.log2(r["nodes"]) + icpt_msg
    csv_path = write_csv(out / "scale.csv", rows)
    png_path = _plot(rows, out / "scale.png")
    print_table(
        f"Kademlia lookups vs network size ({lookups} lookups each)",
        ["nodes", "rounds to record", "rounds (full)", "messages", "true 8 closest", "seconds"],
        [
            (
                r["nodes"],
                round(r["rounds_to_record"], 2),
                round(r["rounds_full"], 2),
                round(r["messages"], 1),
                r["found_true_closest"],
                round(r["seconds"], 1),
            )
            for r in rows
        ],
        caption=f"per doubling of N: +{slope_rec:.3f} rounds to the record, "
        f"+{slope_msg:.2f} messages (least-squares fit on log2 N)",
    )
    announce(FIGURE, [csv_path, png_path])
    return 0


def _plot(rows: list[dict], path):
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    n = [r["nodes"] for r in rows]
    a.errorbar(
        n,
        [r["rounds_to_record"] for r in rows],
        yerr=[r["rounds_to_record_std"] for r in rows],
        fmt="o",
        label="rounds until a replica answers",
    )
    a.plot(n, [r["fit_rounds"] for r in rows], "-", label="fit a + b log2 N")
    a.plot(n, [r["rounds_full"] for r in rows], "s--", label="rounds of the full lookup")
    a.set_xscale("log")
    a.set_xlabel("nodes")
    a.set_ylabel("lookup rounds")
    a.legend()
    b.errorbar(n, [r["messages"] for r in rows], yerr=[r["messages_std"] for r in rows], fmt="o")
    b.plot(n, [r["fit_messages"] for r in rows], "-")
    b.set_xscale("log")
    b.set_xlabel("nodes")
    b.set_ylabel("messages per lookup")
    fig.suptitle("Kademlia (the peer's Lookup): cost grows with log N")
    return save_figure(fig, path)

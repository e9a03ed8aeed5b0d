"""``p2pspam sim churn``: query success when a fraction of the nodes has failed (beyond
the paper).

A document is published on a healthy 4,096-node Kademlia network (the peer's sans-IO
``Lookup``, ``simulations.kademlia``) by ``mark rate`` x N publishers; then a random
fraction of the nodes fails without the survivors noticing (their routing tables still
list the dead: each request to one times out and the lookup carries on, as the peer's
does), and nothing is re-replicated. A live node then queries (exhaustive lookup, no
TTL). It succeeds when a live node holding the record, or a live publisher (which serves
its own copy), or a live node with a path pointer to a live publisher, answers.

Variants: one replica without path pointers (a plain DHT), ``replicas`` (8) replicas
without pointers, and 8 replicas with the path pointers the peer leaves.
"""

from __future__ import annotations

import argparse

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

FIGURE = "beyond the paper: success vs failed nodes, with and without replication/pointers"
FAILED = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
VARIANTS = (("1 replica", 1, False), ("8 replicas", 8, False), ("8 replicas + pointers", 8, True))


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sim churn``."""
    parser = experiment_parser(
        sub,
        "churn",
        __doc__,
        help="query success vs fraction of failed nodes (replication, path pointers)",
    )
    parser.add_argument("--nodes", type=int, default=None, help="network size (4096)")
    parser.add_argument("--keys", type=int, default=None, help="documents (40)")
    parser.add_argument("--queries", type=int, default=None, help="queriers per key and rate (10)")
    parser.add_argument("--mark-rate", type=float, default=0.01, help="publishers / N (0.01)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the experiment, write CSV and PNG, print the summary."""
    from p2pspam.errors import ParameterError
    from simulations.common import write_csv
    from simulations.kademlia import Kademlia

    n = sized(args.nodes, 400, 4096, args.quick)
    keys = sized(args.keys, 6, 40, args.quick)
    queries = sized(args.queries, 5, 10, args.quick)
    if not 50 <= n <= 50_000 or keys < 1 or queries < 1 or not 0 < args.mark_rate <= 1:
        raise ParameterError("--nodes 50..50000, --keys/--queries >= 1, --mark-rate in (0, 1]")
    rng = np.random.default_rng(args.seed)
    out = out_dir(args, "churn")
    net = Kademlia(n, rng)
    ok = {(v[0], f): [] for v in VARIANTS for f in FAILED}
    msgs = {(v[0], f): [] for v in VARIANTS for f in FAILED}
    for _ in range(keys):
        key = net.random_key(rng)
        publishers = rng.choice(n, max(1, round(args.mark_rate * n)), replace=False)
        held = {}
        for name, replicas, pointers in VARIANTS:
            records = np.zeros(n, dtype=bool)
            path = np.zeros(n, dtype=bool)
            for p in publishers:
                trace = net.lookup(int(p), key, k=replicas)
                records[trace.closest] = True
                if pointers:
                    path[trace.nodes] = True
            path &= ~records
            held[name] = (records, path)
        for f in FAILED:
            dead = rng.random(n) < f
            alive_publisher = np.zeros(n, dtype=bool)
            alive_publisher[publishers[~dead[publishers]]] = True
            live = np.flatnonzero(~dead)
            for q in rng.choice(live, min(queries, len(live)), replace=False):
                for name, replicas, _ in VARIANTS:
                    records, path = held[name]
                    answers = (records | alive_publisher | (path & alive_publisher.any())) & ~dead
                    if answers[q]:
                        ok[(name, f)].append(1.0)
                        msgs[(name, f)].append(0)
                        continue
                    trace = net.lookup(int(q), key, failed=dead, answer=answers, k=replicas)
                    found = bool(answers[trace.nodes].any())
                    ok[(name, f)].append(float(found))
                    msgs[(name, f)].append(trace.messages)
        net.forget_replies()
    rows = [
        {
            "variant": name,
            "failed": f,
            "success": float(np.mean(ok[(name, f)])),
            "messages": float(np.mean(msgs[(name, f)])),
            "queries": len(ok[(name, f)]),
            "nodes": n,
        }
        for name, _, _ in VARIANTS
        for f in FAILED
    ]
    csv_path = write_csv(out / "churn.csv", rows)
    png_path = _plot(rows, out / "churn.png")
    print_table(
        f"Query success vs failed nodes ({n} nodes, {keys} documents, "
        f"mark rate {args.mark_rate:.0%})",
        ["failed", *(v[0] for v in VARIANTS)],
        [(f"{f:.0%}", *(r["success"] for r in rows if r["failed"] == f)) for f in FAILED],
    )
    announce(FIGURE, [csv_path, png_path])
    return 0


def _plot(rows: list[dict], path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, _, _ in VARIANTS:
        sel = [r for r in rows if r["variant"] == name]
        ax.plot([100 * r["failed"] for r in sel], [r["success"] for r in sel], "o-", label=name)
    ax.set_xlabel("failed nodes (%)")
    ax.set_ylabel("P(query finds the marked document)")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("Kademlia under failures: replication and path pointers")
    return save_figure(fig, path)

"""``p2pspam sim ttl``: Fig. 10 of the SpamWatch paper (finding an ideal TTL).

On ``--topologies`` GT-ITM-style transit-stub topologies (5,050 routers, 400 ms
diameter) with ``--placements`` random placements of ``--nodes`` overlay nodes each,
a document is marked by a random ``mark rate`` share of the nodes (each publishes it,
leaving path pointers; the marker sets of one document are nested across mark rates);
every other node queries for it. We report the probability that
the query succeeds within the TTL and the network distance it travelled, for

* **Tapestry** (``simulations.tapestry``): hex digits, proximity neighbour maps,
  surrogate routing, a pointer on every hop of each publication path; a query walks
  toward the root and stops at the first node holding a pointer. One TTL unit = one
  overlay hop; distance = sum of the hop latencies (one way).
* **Kademlia** (``simulations.kademlia``, the peer's sans-IO ``Lookup``): a record on
  the ``replicas`` closest nodes, path pointers on every other node that answered the
  publication lookup; a query succeeds in the first round in which a node holding the
  record or a pointer answers. One TTL unit = one lookup round; distance = the sum over
  rounds of the round's longest round trip (an iterative lookup waits for its replies).

Two TTL conventions (the paper does not say which it used):

* ``hops``: TTL t allows t overlay hops / lookup rounds after the querier's own check;
* ``nodes``: TTL t counts the nodes visited, the querier included (t - 1 hops / rounds).

Distances are reported per TTL for queries that stop when they succeed
(``dist_ms``) and for the full TTL regardless of success (``reach_ms``: how far t hops
take you; this is the x-axis twin of the paper's plot).
"""

from __future__ import annotations

import argparse
import time
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

FIGURE = "Fig. 10 (finding an ideal TTL: success vs TTL and mark rate, distance in ms)"
MARK_RATES = (0.01, 0.02, 0.05, 0.10, 0.20, 0.50)
CONVENTIONS = ("hops", "nodes")
OVERLAYS = ("tapestry", "kademlia")


@dataclass(frozen=True, slots=True)
class Config:
    """Sizes and parameters of one TTL experiment."""

    topologies: int
    placements: int
    nodes: int
    tapestry_keys: int
    kademlia_keys: int
    max_ttl: int
    mark_rates: tuple[float, ...]
    base: int
    proximity: bool
    overlays: tuple[str, ...]
    topo: dict


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sim ttl``."""
    parser = experiment_parser(
        sub,
        "ttl",
        __doc__,
        help="Fig. 10: query success and distance vs TTL and mark rate (Tapestry, Kademlia)",
    )
    parser.add_argument("--topologies", type=int, default=None, help="topologies (8)")
    parser.add_argument("--placements", type=int, default=None, help="placements each (3)")
    parser.add_argument("--nodes", type=int, default=None, help="overlay nodes (4096)")
    parser.add_argument("--tapestry-keys", type=int, default=None, help="keys per run (64)")
    parser.add_argument("--kademlia-keys", type=int, default=None, help="keys per run (6)")
    parser.add_argument("--max-ttl", type=int, default=8, help="largest TTL (8)")
    parser.add_argument("--base", type=int, default=16, help="Tapestry digit base (16)")
    parser.add_argument(
        "--neighbours",
        choices=("closest", "random"),
        default="closest",
        help="Tapestry neighbour map entries: closest in latency (default) or random",
    )
    parser.add_argument(
        "--overlays", default="tapestry,kademlia", help="overlays to run (%(default)s)"
    )
    parser.add_argument("--workers", type=int, default=2, help="processes (2)")
    parser.add_argument(
        "--routers-per-stub", type=int, default=None, help="topology: routers per stub (25)"
    )
    parser.add_argument(
        "--stubs-per-transit", type=int, default=None, help="topology: stubs per transit (4)"
    )
    parser.set_defaults(func=run)


def _topo_params(cfg: Config):
    from simulations.topology import TransitStubParams

    return TransitStubParams(**cfg.topo)


def run_topology(job: tuple[int, int, Config]) -> list[dict]:
    """All placements of one topology: a list of per-run result dicts."""
    seed, index, cfg = job
    from simulations.topology import generate

    ss = np.random.SeedSequence([seed, index])
    topo_seed, *placement_seeds = ss.spawn(1 + cfg.placements)
    topo = generate(int(topo_seed.generate_state(1)[0]), _topo_params(cfg), keep_distances=True)
    results = []
    for p, pseed in enumerate(placement_seeds):
        rng = np.random.default_rng(pseed)
        hosts = rng.choice(topo.routers, cfg.nodes, replace=topo.routers < cfg.nodes)
        latency = topo.host_latencies(hosts)
        if "tapestry" in cfg.overlays:
            results.append(_tapestry_run(latency, rng, cfg) | {"topology": index, "placement": p})
        if "kademlia" in cfg.overlays:
            results.append(_kademlia_run(latency, rng, cfg) | {"topology": index, "placement": p})
    return results


def _empty(cfg: Config) -> dict:
    rates, ttls = len(cfg.mark_rates), cfg.max_ttl
    return {
        "success": {c: np.zeros((rates, ttls)) for c in CONVENTIONS},
        "dist": {c: np.zeros((rates, ttls)) for c in CONVENTIONS},
    }


def _accumulate(acc: dict, r: int, found: np.ndarray, cum: np.ndarray, cfg: Config) -> None:
    """Add one key's queries: ``found`` hops/rounds to success (large = never),
    ``cum[q, h]`` distance after h hops/rounds."""
    last = cum.shape[1] - 1
    for t in range(1, cfg.max_ttl + 1):
        for conv, allowed in (("hops", t), ("nodes", t - 1)):
            ok = found <= allowed
            acc["success"][conv][r, t - 1] += ok.sum()
            stop = np.minimum(np.minimum(found, allowed), last)
            acc["dist"][conv][r, t - 1] += cum[np.arange(len(found)), stop].sum()


def _reach(cum: np.ndarray, cfg: Config) -> dict:
    last = cum.shape[1] - 1
    out = {}
    for conv, shift in (("hops", 0), ("nodes", 1)):
        out[conv] = np.array(
            [cum[:, min(max(t - shift, 0), last)].mean() for t in range(1, cfg.max_ttl + 1)]
        )
    return out


def _tapestry_run(latency: np.ndarray, rng: np.random.Generator, cfg: Config) -> dict:
    from simulations.tapestry import Tapestry, pointer_holders, walk

    digits = max(1, int(np.ceil(np.log(cfg.nodes) / np.log(cfg.base))) + 4)
    overlay = Tapestry(latency, rng, base=cfg.base, digits=digits, proximity=cfg.proximity)
    n = cfg.nodes
    acc = _empty(cfg)
    reach_sum = {c: np.zeros(cfg.max_ttl) for c in CONVENTIONS}
    for _ in range(cfg.tapestry_keys):
        routes = overlay.next_hops(overlay.random_key(rng))
        nobody = np.zeros(n, dtype=bool)
        _, cum = walk(routes, nobody, cfg.max_ttl)
        for c, v in _reach(cum, cfg).items():
            reach_sum[c] += v
        order = rng.permutation(n)  # nested marker sets: higher rates add markers
        for r, rate in enumerate(cfg.mark_rates):
            markers = order[: max(1, round(rate * n))]
            holders = pointer_holders(routes, markers)
            found, cum = walk(routes, holders, cfg.max_ttl)
            queriers = np.ones(n, dtype=bool)
            queriers[markers] = False
            _accumulate(acc, r, found[queriers], cum[queriers], cfg)
    return _result(acc, "tapestry", cfg, cfg.tapestry_keys, reach_sum)


def _result(acc: dict, overlay: str, cfg: Config, keys: int, reach_sum: dict) -> dict:
    """Per-run means: every key had N - markers queriers at each mark rate."""
    n = cfg.nodes
    queries = np.array([keys * (n - max(1, round(r * n))) for r in cfg.mark_rates])[:, None]
    return {
        "overlay": overlay,
        "success": {c: acc["success"][c] / queries for c in CONVENTIONS},
        "dist": {c: acc["dist"][c] / queries for c in CONVENTIONS},
        "reach": {c: v / keys for c, v in reach_sum.items()},
    }


def _kademlia_run(latency: np.ndarray, rng: np.random.Generator, cfg: Config) -> dict:
    from simulations.kademlia import Kademlia

    n = cfg.nodes
    overlay = Kademlia(n, rng, latency=latency)
    acc = _empty(cfg)
    reach_sum = {c: np.zeros(cfg.max_ttl) for c in CONVENTIONS}
    for _ in range(cfg.kademlia_keys):
        key = overlay.random_key(rng)
        traces = [overlay.lookup(q, key) for q in range(n)]
        overlay.forget_replies()
        owner = np.concatenate([np.full(len(t.nodes), t.querier) for t in traces])
        visited = np.concatenate([t.nodes for t in traces])
        rounds = np.concatenate([t.rounds for t in traces])
        width = max(len(t.round_ms) for t in traces) + 1
        cum = np.zeros((n, max(width, cfg.max_ttl + 1)))
        for t in traces:
            c = np.cumsum(t.round_ms)
            cum[t.querier, 1 : len(c) + 1] = c
            cum[t.querier, len(c) + 1 :] = c[-1] if len(c) else 0.0
        for c, v in _reach(cum, cfg).items():
            reach_sum[c] += v
        starts = np.searchsorted(owner, np.arange(n + 1))
        order = rng.permutation(n)
        for r, rate in enumerate(cfg.mark_rates):
            markers = order[: max(1, round(rate * n))]
            holders = np.zeros(n, dtype=bool)
            holders[markers] = True  # a publisher serves its own copy
            for m in markers:
                holders[visited[starts[m] : starts[m + 1]]] = True
            found = np.full(n, 10**6, dtype=np.int64)
            hit = holders[visited]
            np.minimum.at(found, owner[hit], rounds[hit])
            found[holders] = 0
            queriers = np.ones(n, dtype=bool)
            queriers[markers] = False
            _accumulate(acc, r, found[queriers], cum[queriers], cfg)
    return _result(acc, "kademlia", cfg, cfg.kademlia_keys, reach_sum)


def config_from_args(args: argparse.Namespace) -> Config:
    """The experiment size from the options (``--quick``: a seconds-long run)."""
    from p2pspam.errors import ParameterError

    quick = args.quick
    topo = {"diameter_ms": 400.0}
    if quick:
        topo |= {
            "transit_domains": 2,
            "routers_per_transit": 4,
            "stubs_per_transit_router": 3,
            "routers_per_stub": 10,
        }
    if args.routers_per_stub is not None:
        topo["routers_per_stub"] = args.routers_per_stub
    if args.stubs_per_transit is not None:
        topo["stubs_per_transit_router"] = args.stubs_per_transit
    overlays = tuple(o.strip() for o in args.overlays.split(",") if o.strip())
    cfg = Config(
        topologies=sized(args.topologies, 1, 8, quick),
        placements=sized(args.placements, 2, 3, quick),
        nodes=sized(args.nodes, 256, 4096, quick),
        tapestry_keys=sized(args.tapestry_keys, 8, 64, quick),
        kademlia_keys=sized(args.kademlia_keys, 2, 6, quick),
        max_ttl=args.max_ttl,
        mark_rates=MARK_RATES,
        base=args.base,
        proximity=args.neighbours == "closest",
        overlays=overlays,
        topo=topo,
    )
    if not overlays or any(o not in OVERLAYS for o in overlays):
        raise ParameterError(f"--overlays takes a comma-separated subset of {OVERLAYS}")
    if min(cfg.topologies, cfg.placements, cfg.tapestry_keys, cfg.kademlia_keys) < 1:
        raise ParameterError("topologies, placements and keys must be at least 1")
    if not 64 <= cfg.nodes <= 20000 or not 1 <= cfg.max_ttl <= 32 or not 2 <= cfg.base <= 64:
        raise ParameterError("--nodes must be 64..20000, --max-ttl 1..32, --base 2..64")
    _topo_params(cfg).check()
    return cfg


def run(args: argparse.Namespace) -> int:
    """Run the experiment, write CSV and PNG, print the summary."""
    from simulations.common import write_csv

    cfg = config_from_args(args)
    out = out_dir(args, "ttl")
    start = time.perf_counter()
    jobs = [(args.seed, i, cfg) for i in range(cfg.topologies)]
    if args.workers > 1 and len(jobs) > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(min(args.workers, len(jobs))) as pool:
            runs = [r for part in pool.imap(run_topology, jobs) for r in part]
    else:
        runs = [r for job in jobs for r in run_topology(job)]
    elapsed = time.perf_counter() - start
    rows = summarize(runs, cfg)
    csv_path = write_csv(out / "ttl.csv", rows)
    png_path = _plot(rows, cfg, out / "ttl.png")
    _print(rows, cfg, elapsed)
    announce(FIGURE, [csv_path, png_path])
    return 0


def summarize(runs: list[dict], cfg: Config) -> list[dict]:
    """Mean and standard deviation across runs, one row per overlay, convention, mark
    rate and TTL."""
    rows = []
    for overlay in cfg.overlays:
        mine = [r for r in runs if r["overlay"] == overlay]
        for conv in CONVENTIONS:
            succ = np.stack([r["success"][conv] for r in mine])
            dist = np.stack([r["dist"][conv] for r in mine])
            reach = np.stack([r["reach"][conv] for r in mine])
            for i, rate in enumerate(cfg.mark_rates):
                for t in range(cfg.max_ttl):
                    rows.append(
                        {
                            "overlay": overlay,
                            "convention": conv,
                            "mark_rate": rate,
                            "ttl": t + 1,
                            "success": float(succ[:, i, t].mean()),
                            "success_std": float(succ[:, i, t].std(ddof=1))
                            if len(mine) > 1
                            else 0.0,
                            "dist_ms": float(dist[:, i, t].mean()),
                            "dist_ms_std": float(dist[:, i, t].std(ddof=1))
                            if len(mine) > 1
                            else 0.0,
                            "reach_ms": float(reach[:, t].mean()),
                            "runs": len(mine),
                        }
                    )
    return rows


def _print(rows: list[dict], cfg: Config, elapsed: float) -> None:
    runs = rows[0]["runs"] if rows else 0
    for conv in CONVENTIONS:
        sel = [r for r in rows if r["convention"] == conv and r["ttl"] <= 4]
        table = []
        for overlay in cfg.overlays:
            for rate in cfg.mark_rates:
                cells = [r for r in sel if r["overlay"] == overlay and r["mark_rate"] == rate]
                succ = [f"{c['success']:.3f}±{c['success_std']:.3f}" for c in cells]
                table.append((overlay, f"{rate:.0%}", *succ))
            reach = [r["reach_ms"] for r in sel if r["overlay"] == overlay][: min(4, cfg.max_ttl)]
            table.append((overlay, "reach ms", *(f"{v:.0f}" for v in reach)))
        print_table(
            f"TTL convention '{conv}': success (mean±std over {runs} runs)",
            ["overlay", "mark rate"] + [f"TTL {t}" for t in range(1, min(4, cfg.max_ttl) + 1)],
            table,
            caption=f"{cfg.topologies} topologies x {cfg.placements} placements, "
            f"{cfg.nodes} nodes, {elapsed:.0f} s",
        )
    worst = max(r["success_std"] for r in rows)
    print(f"largest standard deviation of success across runs: {worst:.4f}")
    for conv in CONVENTIONS:
        for overlay in cfg.overlays:
            p2 = _pick(rows, overlay, conv, 0.10, 2)
            p3 = [_pick(rows, overlay, conv, m, 3) for m in (0.02, 0.05)]
            if p2 and all(p3):
                print(
                    f"paper check [{overlay}, TTL counts {conv}]: TTL 2 @10% = "
                    f"{p2['success']:.3f} (paper ~0.75) after {p2['reach_ms']:.0f} ms "
                    f"(paper ~60 ms); TTL 3 @2% = {p3[0]['success']:.3f}, "
                    f"@5% = {p3[1]['success']:.3f} (paper: high)"
                )


def _pick(rows: list[dict], overlay: str, conv: str, rate: float, ttl: int) -> dict | None:
    for r in rows:
        if (r["overlay"], r["convention"], r["mark_rate"], r["ttl"]) == (overlay, conv, rate, ttl):
            return r
    return None


def _plot(rows: list[dict], cfg: Config, path):
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(17, 5))
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(cfg.mark_rates)))
    styles = {"tapestry": "-o", "kademlia": "--s"}
    for ax, conv in zip(axes[:2], CONVENTIONS, strict=True):
        for overlay in cfg.overlays:
            for rate, color in zip(cfg.mark_rates, colors, strict=True):
                sel = [
                    r
                    for r in rows
                    if (r["overlay"], r["convention"], r["mark_rate"]) == (overlay, conv, rate)
                ]
                ax.errorbar(
                    [r["ttl"] for r in sel],
                    [r["success"] for r in sel],
                    yerr=[r["success_std"] for r in sel],
                    fmt=styles[overlay],
                    color=color,
                    ms=4,
                    label=f"{overlay} {rate:.0%}",
                )
        ax.set_title(f"TTL = {'overlay hops / rounds' if conv == 'hops' else 'nodes visited'}")
        ax.set_xlabel("TTL")
        ax.set_ylabel("P(query finds the marked document)")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, ncol=2, loc="lower right")
    ax = axes[2]
    for overlay in cfg.overlays:
        for conv, ls in (("hops", "-"), ("nodes", ":")):
            sel = [
                r
                for r in rows
                if (r["overlay"], r["convention"], r["mark_rate"]) == (overlay, conv, 0.01)
            ]
            ax.plot(
                [r["ttl"] for r in sel],
                [r["reach_ms"] for r in sel],
                {"tapestry": "o", "kademlia": "s"}[overlay] + ls,
                label=f"{overlay}, TTL counts {conv}",
            )
    ax.set_xlabel("TTL")
    ax.set_ylabel("network distance of TTL hops / rounds (ms)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle(
        "Fig. 10 reproduction: success vs TTL and mark rate (solid Tapestry, dashed Kademlia)"
    )
    return save_figure(fig, path)

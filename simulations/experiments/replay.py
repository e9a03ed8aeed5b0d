"""``p2pspam sim replay``: replay a labelled corpus through the decision pipeline and
measure detection quality (spam caught, near-duplicates caught, ham flagged).

Reproduces the real-mail evaluation of the SpamWatch paper (section 4.3: THRES 3/4/5 on
modified spam copies, ham x spam false positives) on a corpus of the user's choice, with
the boilerplate defences of ``p2pspam.defences`` each switched on and off, and the
caught-vs-flagged trade-off for THRES = 1..N (the PNG written with ``--out``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

DEFAULT_MARK_RATE = 0.5
DEFAULT_RESCUE_RATE = 0.5


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sim replay``."""
    parser = sub.add_parser(
        "replay",
        help="replay a labelled corpus in time order and measure caught spam / flagged ham",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--mail", required=True, help="corpus directory with spam/ and ham/")
    parser.add_argument(
        "--labels", help="CSV with source,label[,time,recipient,kind] (sources relative to --mail)"
    )
    parser.add_argument(
        "--mark-rate",
        type=float,
        default=DEFAULT_MARK_RATE,
        help=f"chance a spam reaching the inbox is marked (default {DEFAULT_MARK_RATE})",
    )
    parser.add_argument(
        "--rescue-rate",
        type=float,
        default=DEFAULT_RESCUE_RATE,
        help=f"chance a flagged ham is rescued with a ham vote (default {DEFAULT_RESCUE_RATE})",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the marking draws")
    parser.add_argument("--thres", type=int, default=None, help="THRES of the default setup")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--out", help="write table.csv, sweep.csv, flagged.csv, quality.png here")
    parser.add_argument(
        "--scheme",
        action="append",
        default=None,
        metavar="NAME",
        help="also replay under this scheme at its default THRES (repeatable; 'all' for "
        "every registered scheme); ATA with the defaults is always replayed",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="only the default configuration (no defence table, no THRES sweep)",
    )
    parser.set_defaults(func=run)


def _check_rate(name: str, value: float) -> None:
    from p2pspam.errors import ParameterError

    if not 0.0 <= value <= 1.0:
        raise ParameterError(f"{name} must be between 0 and 1, got {value}")


def _configurations(base: Any) -> dict[str, Any]:
    """The default, each defence off in turn, no defence, and each defence alone."""
    from p2pspam.defences.pipeline import AgentDefences, NetworkDefences
    from p2pspam.defences.strip import NO_STRIP

    none = replace(
        base,
        agent=AgentDefences(strip=NO_STRIP, sketch=False),
        network=NetworkDefences(max_guids=None, ham_guids=None),
    )
    return {
        "default": base,
        "no normalisation": replace(base, agent=replace(base.agent, strip=NO_STRIP)),
        "no window sketch": replace(base, agent=replace(base.agent, sketch=False)),
        "no GUID discount": replace(base, network=replace(base.network, max_guids=None)),
        "no ham-vote discount": replace(base, network=replace(base.network, ham_guids=None)),
        "no defence": none,
        "only normalisation": replace(none, agent=replace(none.agent, strip=base.agent.strip)),
        "only window sketch": replace(none, agent=replace(none.agent, sketch=True)),
        "only GUID discount": replace(
            none, network=replace(none.network, max_guids=base.network.max_guids)
        ),
        "only ham-vote discount": replace(
            none, network=replace(none.network, ham_guids=base.network.ham_guids)
        ),
    }


SWEPT = (
    "default",
    "no defence",
    "only normalisation",
    "only window sketch",
    "only GUID discount",
    "only ham-vote discount",
)


def _row(name: str, thres: int, result: Any) -> dict[str, Any]:
    s = result.summary()
    nd_total = s["spam"]["near_dup_total"]
    return {
        "config": name,
        "thres": thres,
        "spam": s["spam"]["total"],
        "caught": s["spam"]["caught"],
        "near_dup_total": nd_total,
        "near_dup_caught": s["spam"]["near_dup_caught"],
        "near_dup_rate": (s["spam"]["near_dup_caught"] / nd_total) if nd_total else 0.0,
        "ham": s["ham"]["total"],
        "flagged": s["ham"]["flagged"],
        "flagged_rate": (s["ham"]["flagged"] / s["ham"]["total"]) if s["ham"]["total"] else 0.0,
        "marked": s["spam"]["marked"],
        "rescued": s["ham"]["rescued"],
    }


def run(args: argparse.Namespace) -> int:
    """Run the replay and print the report."""
    from p2pspam.defences.pipeline import Settings
    from p2pspam.defences.strip import NO_STRIP
    from simulations import replaying

    _check_rate("--mark-rate", args.mark_rate)
    _check_rate("--rescue-rate", args.rescue_rate)
    started = time.perf_counter()
    items, skipped = replaying.load_corpus(
        Path(args.mail), Path(args.labels) if args.labels else None
    )
    base = Settings() if args.thres is None else Settings(thres=args.thres)
    if base.thres < 1:
        from p2pspam.errors import ParameterError

        raise ParameterError(f"--thres must be at least 1, got {base.thres}")
    configs = {"default": base} if args.quick else _configurations(base)
    bodies: dict[Any, Any] = {}  # strip options -> defended bodies, shared by passes
    for settings in configs.values():
        if settings.agent.strip not in bodies:
            bodies[settings.agent.strip] = replaying.defended_bodies(items, settings.agent.strip)
    plain = bodies.get(NO_STRIP)
    near_dups = replaying.near_duplicate_pairs(
        items, texts=None if plain is None else [b.text for b in plain]
    )
    passes: dict[Any, Any] = {}
    results: dict[str, Any] = {}
    for name, settings in configs.items():
        if settings.agent not in passes:
            passes[settings.agent] = replaying.agent_pass(
                items, settings.agent, bodies[settings.agent.strip]
            )
        results[name] = replaying.network_pass(
            items,
            passes[settings.agent],
            settings,
            near_dups,
            args.mark_rate,
            args.rescue_rate,
            args.seed,
        )
    default_pass = passes[base.agent]
    default = results["default"]
    count = max((len(v.features) for v in default_pass.vectors), default=0)
    sweep: list[dict[str, Any]] = []
    if args.out and not args.quick:
        for name in SWEPT:
            settings = configs[name]
            for thres in range(1, max(count, 1) + 1):
                result = replaying.network_pass(
                    items,
                    passes[settings.agent],
                    settings.with_thres(thres),
                    near_dups,
                    args.mark_rate,
                    args.rescue_rate,
                    args.seed,
                )
                sweep.append(_row(name, thres, result))
    schemes = _scheme_rows(args, items, default_pass, base, near_dups)
    reasons = replaying.flagged_reasons(default.flagged, default_pass.texts, 50)
    features = [len(v.features) for v in default_pass.vectors]
    elapsed = time.perf_counter() - started
    table = [_row(name, configs[name].thres, r) for name, r in results.items()]
    report = {
        **default.summary(),
        "settings": _settings_json(base, args),
        "features_per_message": {
            "mean": sum(features) / len(features) if features else 0.0,
            "none": sum(1 for n in features if n == 0),
        },
        "flagged": [
            {"source": f.source, "kind": f.kind, "matched": [g.hex() for g in f.guids]}
            for f in default.flagged
        ],
        "flagged_windows": [{"text": t, "count": n} for t, n in reasons.most_common(20)],
        "missed_by_kind": {
            k: default.spam_by_kind[k] - default.caught_by_kind[k] for k in default.spam_by_kind
        },
        "table": table,
        "schemes": schemes,
        "skipped": len(skipped),
        "seconds": round(elapsed, 2),
    }
    if args.out:
        _write_outputs(Path(args.out), table, sweep, default, default_pass, reasons)
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
    else:
        _print_report(report, skipped, args)
    return 0


def _scheme_rows(
    args: argparse.Namespace, items: Any, default_pass: Any, base: Any, near_dups: Any
) -> list[dict[str, Any]]:
    """Replay the default defences under each requested scheme at its default THRES."""
    from p2pspam.fingerprint.schemes import get_scheme, scheme_names
    from simulations import replaying

    names = list(dict.fromkeys(args.scheme or []))
    if "all" in names:
        names = scheme_names()
    rows = []
    for name in names:
        scheme = get_scheme(name)
        vectors = replaying.scheme_pass(default_pass, scheme)
        settings = replace(
            base, thres=scheme.default_thres, agent=replace(base.agent, sketch=False)
        )
        result = replaying.network_pass(
            items,
            vectors,
            settings,
            near_dups,
            args.mark_rate,
            args.rescue_rate,
            args.seed,
        )
        row = _row(f"{name} ({scheme.namespace})", settings.thres, result)
        sizes = [len(v.features) for v in vectors.vectors]
        row["features_mean"] = sum(sizes) / len(sizes) if sizes else 0.0
        rows.append(row)
    return rows


def _settings_json(base: Any, args: argparse.Namespace) -> dict[str, Any]:
    return {
        "thres": base.thres,
        "strip": {
            "quotes": base.agent.strip.quotes,
            "signatures": base.agent.strip.signatures,
            "footers": base.agent.strip.footers,
        },
        "sketch": base.agent.sketch,
        "sketch_threshold": base.agent.sketch_threshold,
        "max_guids": base.network.max_guids,
        "ham_guids": base.network.ham_guids,
        "min_votes": base.min_votes,
        "ratio": base.ratio,
        "mark_rate": args.mark_rate,
        "rescue_rate": args.rescue_rate,
        "seed": args.seed,
    }


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.2f}%" if whole else "n/a"


def _print_report(report: dict[str, Any], skipped: list[str], args: argparse.Namespace) -> None:
    spam, ham = report["spam"], report["ham"]
    s = report["settings"]
    print(
        f"replay of {spam['total'] + ham['total']} messages ({spam['total']} spam, "
        f"{ham['total']} ham) in {report['seconds']} s; mark rate {s['mark_rate']}, "
        f"seed {s['seed']}, THRES {s['thres']}"
    )
    print(
        f"spam caught: {spam['caught']}/{spam['total']} ({_pct(spam['caught'], spam['total'])}); "
        f"near duplicates of marked spam caught: {spam['near_dup_caught']}/"
        f"{spam['near_dup_total']} ({_pct(spam['near_dup_caught'], spam['near_dup_total'])})"
    )
    print(
        f"ham flagged: {ham['flagged']}/{ham['total']} "
        f"({ham['flagged'] / ham['total'] if ham['total'] else 0:.2e}); "
        f"features per message: {report['features_per_message']['mean']:.2f} "
        f"({report['features_per_message']['none']} messages with none)"
    )
    for f in report["flagged"][:10]:
        print(f"  flagged {f['source']} ({f['kind']})")
    for w in report["flagged_windows"][:10]:
        print(f"  window x{w['count']}: {w['text']!r}")
    if len(report["table"]) > 1:
        head = f"{'near-dup caught':>18} {'spam caught':>13} {'ham flagged':>12}"
        print(f"\n{'configuration':22} {head}")
        for row in report["table"]:
            print(
                f"{row['config']:22} {row['near_dup_caught']:>7}/{row['near_dup_total']:<6}"
                f"{100 * row['near_dup_rate']:>6.2f}% {row['caught']:>6}/{row['spam']:<6} "
                f"{row['flagged']:>5}/{row['ham']}"
            )
    for row in report["schemes"]:
        print(
            f"scheme {row['config']}: THRES {row['thres']}, near-dup caught "
            f"{row['near_dup_caught']}/{row['near_dup_total']}, spam caught "
            f"{row['caught']}/{row['spam']}, ham flagged {row['flagged']}/{row['ham']}, "
            f"{row['features_mean']:.1f} features per message"
        )
    if skipped:
        print(f"\n{len(skipped)} inputs skipped, e.g. {skipped[0]}", file=sys.stderr)
    if args.out:
        print(f"\nwrote table.csv, sweep.csv, flagged.csv and quality.png to {args.out}")


def _write_outputs(
    out: Path,
    table: list[dict[str, Any]],
    sweep: list[dict[str, Any]],
    default: Any,
    default_pass: Any,
    reasons: Any,
) -> None:
    import csv

    from p2pspam.defences.pipeline import window_texts

    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("table.csv", table), ("sweep.csv", sweep)):
        if not rows:
            continue
        with (out / name).open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    with (out / "flagged.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["source", "kind", "feature", "window"])
        for f in default.flagged:
            windows = window_texts(default_pass.texts[f.index], f.features, 50)
            for feature in f.features:
                writer.writerow([f.source, f.kind, f"{feature:016x}", windows.get(feature, "")])
    if sweep:
        _plot(out / "quality.png", sweep)


def _plot(path: Path, sweep: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (caught, flagged, trade) = plt.subplots(1, 3, figsize=(16, 5))
    configs = list(dict.fromkeys(r["config"] for r in sweep))
    for name in configs:
        rows = [r for r in sweep if r["config"] == name]
        thres = [r["thres"] for r in rows]
        ys = [100 * r["near_dup_rate"] for r in rows]
        xs = [1e4 * r["flagged_rate"] for r in rows]
        style = {"linewidth": 2.5 if name == "default" else 1.2, "marker": "o", "markersize": 4}
        if name == "no defence":
            style.update(color="black", linestyle="--", marker="x")
        caught.plot(thres, ys, label=name, **style)
        flagged.plot(thres, xs, label=name, **style)
        trade.plot(xs, ys, label=name, **style)
        if name == "default":  # THRES labels on the default curve
            for t, x, y in zip(thres, xs, ys, strict=True):
                trade.annotate(
                    str(t), (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points"
                )
    caught.set_xlabel("THRES")
    caught.set_ylabel("near-duplicate spam caught after a mark (%)")
    caught.axhline(98, color="grey", linewidth=0.6)
    flagged.set_xlabel("THRES")
    flagged.set_ylabel("ham flagged per 10,000 ham (symlog)")
    flagged.set_yscale("symlog", linthresh=1)
    flagged.axhline(1, color="grey", linewidth=0.6)
    trade.set_xscale("symlog", linthresh=1)
    trade.set_xlabel("ham flagged per 10,000 ham (symlog)")
    trade.set_ylabel("near-duplicate spam caught (%)")
    trade.set_title("trade-off (labels: THRES of the default)", fontsize=10)
    for ax in (caught, flagged, trade):
        ax.grid(True, alpha=0.3)
    flagged.legend(fontsize=8)
    fig.suptitle("sim replay: caught spam vs flagged ham for THRES = 1..N, each defence on/off")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

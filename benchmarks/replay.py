"""Benchmark of ``p2pspam sim replay``: where the time of a replay goes.

Baseline (same process, same messages): ``canonical_body`` + ATA per message, the bare
fingerprinting every agent does. Then the agent pass with the defences (stripping and
window sketch), one network pass (route, tallies, signed votes), the near-duplicate
reference measure, and the whole default ``sim replay`` (table of 10 configurations).

    .venv/bin/python benchmarks/replay.py [--messages 10000] [--seed 1]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
from pathlib import Path

from p2pspam.defences.pipeline import AgentDefences, Settings
from p2pspam.fingerprint.ata import AtaScheme
from p2pspam.fingerprint.normalize import canonical_body
from simulations import replaying
from simulations.mailgen import generate, write_corpus


def _timed(what: str, n: int, func, baseline: float | None = None):
    started = time.perf_counter()
    result = func()
    seconds = time.perf_counter() - started
    ratio = "" if baseline is None else f"  ({seconds / baseline:5.2f} x baseline)"
    print(f"{what:44} {seconds:7.2f} s {n / seconds:9.0f} msg/s{ratio}")
    return result, seconds


def _quiet(func, *args):
    with contextlib.redirect_stdout(io.StringIO()):
        return func(*args)


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        mail = Path(tmp) / "mail"
        write_corpus(generate(args.seed, args.messages), mail)
        items, _ = replaying.load_corpus(mail, mail / "labels.csv")
        n = len(items)
        scheme = AtaScheme()
        _, base = _timed(
            "baseline: canonical_body + ATA",
            n,
            lambda: [scheme.vector(canonical_body(it.raw)) for it in items],
        )
        agent, _ = _timed(
            "agent pass (stripping + window sketch)",
            n,
            lambda: replaying.agent_pass(items, AgentDefences()),
            base,
        )
        near, _ = _timed(
            "near duplicates (cosine >= 0.9 of word sets)",
            n,
            lambda: replaying.near_duplicate_pairs(items),
            base,
        )
        _timed(
            "network pass (route, tallies, signed votes)",
            n,
            lambda: replaying.network_pass(items, agent, Settings(), near, 0.5, 0.5, 1),
            base,
        )
        from p2pspam.cli import main as cli

        argv = ["sim", "replay", "--mail", str(mail), "--labels", str(mail / "labels.csv")]
        _timed("sim replay (load + 10-configuration table)", n, lambda: _quiet(cli, argv), base)


if __name__ == "__main__":
    main()

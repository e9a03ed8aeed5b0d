"""The user agent's speed: ``agent check`` over a large mbox, and whole ``agent filter``
processes, each against a named baseline measured in the same run.

A one-peer network runs on loopback (``agent.localpeers``); a user marks a share of the
campaign spam first, so that checks find real matches with real tallies, and teaches their
window sketch 2,000 kept messages (``agent learn``), so that every check and filter runs
with the agent-side defences as a real user's does (the filter reads the sketch without
numpy).

    .venv/bin/python benchmarks/agent.py                   # 10,000 messages, 30 filters
    .venv/bin/python benchmarks/agent.py --messages 2000 --filters 15 --seed 3

Bars of issue 5 (printed as PASS/FAIL lines):
- ``agent check`` over the 10,000-message mbox through one peer: >= 500 messages/s end to
  end (process start, mbox reading, fingerprinting, the peer, the progress bar, output).
  Baselines: ``p2pspam fingerprint --json`` on the same mbox (the same reading and
  fingerprinting without any network), and ``agent check`` with concurrency 1 (one
  request in flight: what pipelining buys).
- a whole ``agent filter`` process (interpreter start-up included) with a warm local
  peer: < 200 ms median. Baselines: a bare interpreter start, and a
  ``p2pspam fingerprint -`` process on the same message.

Every measured process runs with its bytecode cached, as an installed agent does (pip
compiles at install time): the subprocesses get a private ``PYTHONPYCACHEPREFIX``,
warmed by a first run, and ``PYTHONDONTWRITEBYTECODE`` removed, so that an environment
which forbids writing bytecode does not make every run compile the project from source.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# This file is named agent.py: keep its directory off the path so that ``agent`` is the
# package, not this script.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from agent.localpeers import local_world, write_config  # noqa: E402

PYTHON = sys.executable
P2PSPAM = [PYTHON, "-m", "p2pspam.cli"]
CHECK_BAR = 500.0
FILTER_BAR_MS = 200.0


def words(rng: random.Random, n: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return " ".join(
        "".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(n)
    )


def make_mbox(path: Path, count: int, seed: int) -> list[bytes]:
    """Write ``count`` messages (about 1 in 10 from 20 spam campaigns, edited per copy,
    the rest distinct ham of 1-4 KB); return the campaign originals."""
    rng = random.Random(seed)
    campaigns = [words(rng, 250) for _ in range(20)]
    originals = []
    with path.open("wb") as out:
        for i in range(count):
            if i % 10 == 0:
                base = campaigns[(i // 10) % len(campaigns)].split()
                base[rng.randrange(len(base))] = f"edit{i}"
                body = f"Dear customer {i},\n" + " ".join(base)
                if i < 10 * len(campaigns):
                    originals.append(body.encode())
            else:
                body = words(rng, rng.randint(150, 600))
            message = (
                f"From: sender{i}@example.net\nTo: user@example.org\nSubject: message {i}\n"
                f"Message-ID: <{i}@bench>\n\n{body}\n"
            ).encode()
            out.write(b"From bench@example.net Thu Jan  1 00:00:00 2026\n" + message + b"\n")
    return originals


ENV = dict(os.environ)


def timed(cmd: list[str], stdin: bytes | None = None) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    result = subprocess.run(cmd, input=stdin, capture_output=True, env=ENV)
    return time.perf_counter() - start, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--filters", type=int, default=30, help="filter processes to time")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--learn", type=int, default=2000, help="kept messages learned first")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="p2pspam-bench-") as tmp:
        root = Path(tmp)
        ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        ENV["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
        mbox = root / "bench.mbox"
        originals = make_mbox(mbox, args.messages, args.seed)
        with local_world(root / "world", peers=1) as world:
            config = world.add_user("bench-marker")
            marked = root / "marked"
            marked.mkdir()
            for i, body in enumerate(originals[:20]):
                (marked / f"{i}.eml").write_bytes(b"Subject: spam\n\n" + body)
            subprocess.run(
                [*P2PSPAM, "agent", "mark", "--config", str(config), str(marked)],
                check=True,
                capture_output=True,
            )
            kept = root / "kept.mbox"
            make_mbox(kept, args.learn, args.seed + 1)
            learn_s, learned = timed(
                [*P2PSPAM, "agent", "learn", "--config", str(config), str(kept)]
            )
            assert learned.returncode == 0, learned.stderr
            serial = write_config(
                root / "serial.toml", world.api_addresses, root / "none.key", concurrency=1
            )

            timed([*P2PSPAM, "fingerprint", "-"], b"Subject: warm-up\n\nfill the bytecode cache")
            timed([*P2PSPAM, "agent", "check", "--help"])
            fp_s, fp = timed([*P2PSPAM, "fingerprint", "--json", str(mbox)])
            assert fp.returncode == 0, fp.stderr
            check_s, check = timed(
                [*P2PSPAM, "agent", "check", "--json", "--config", str(config), str(mbox)]
            )
            assert check.returncode in (0, 1), check.stderr
            rows = [json.loads(line) for line in check.stdout.splitlines()]
            assert len(rows) == args.messages, (len(rows), check.stderr[-500:])
            spam = sum(r["verdict"] == "spam" for r in rows)
            serial_s, serial_run = timed(
                [*P2PSPAM, "agent", "check", "--json", "--config", str(serial), str(mbox)]
            )
            assert serial_run.returncode in (0, 1), serial_run.stderr

            sample = mbox.read_bytes().split(b"\n\nFrom bench@")[1].split(b"\n", 1)[1]
            filter_cmd = [*P2PSPAM, "agent", "filter", "--config", str(config)]
            timed(filter_cmd, sample)  # warm the peer, the page cache and the bytecode
            timed([*P2PSPAM, "fingerprint", "-"], sample)
            filter_ms, bare_ms, fp_ms = [], [], []
            for _ in range(args.filters):
                seconds, result = timed(filter_cmd, sample)
                assert result.stdout.endswith(sample) and b"X-P2PSpam-Status: " in result.stdout
                assert b"Unknown" not in result.stdout.split(b"\n", 1)[0], result.stdout[:200]
                filter_ms.append(seconds * 1000)
                bare_ms.append(timed([PYTHON, "-c", "pass"])[0] * 1000)
                fp_ms.append(timed([*P2PSPAM, "fingerprint", "-"], sample)[0] * 1000)

    n = args.messages
    figures = {
        "check_msgs_per_s": n / check_s,
        "baseline_fingerprint_only_msgs_per_s": n / fp_s,
        "baseline_check_concurrency_1_msgs_per_s": n / serial_s,
        "check_spam_found": spam,
        "learn_msgs_per_s": args.learn / learn_s,
        "filter_median_ms": statistics.median(filter_ms),
        "filter_p90_ms": sorted(filter_ms)[int(0.9 * (len(filter_ms) - 1))],
        "baseline_bare_python_median_ms": statistics.median(bare_ms),
        "baseline_fingerprint_process_median_ms": statistics.median(fp_ms),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"agent check, {n} messages through 1 peer ({spam} spam found):")
        print(f"  agent check                  {figures['check_msgs_per_s']:8.0f} msgs/s")
        print(
            f"  baseline fingerprint only    "
            f"{figures['baseline_fingerprint_only_msgs_per_s']:8.0f} msgs/s "
            f"(check is {fp_s / check_s:.2f}x its speed)"
        )
        print(
            f"  baseline check, concurrency 1 "
            f"{figures['baseline_check_concurrency_1_msgs_per_s']:7.0f} msgs/s "
            f"(pipelining: {serial_s / check_s:.1f}x)"
        )
        print(
            f"  agent learn ({args.learn} kept messages) {figures['learn_msgs_per_s']:6.0f} msgs/s"
        )
        print(f"agent filter, whole process, {len(filter_ms)} runs:")
        print(
            f"  agent filter                 {figures['filter_median_ms']:6.0f} ms median "
            f"(p90 {figures['filter_p90_ms']:.0f} ms)"
        )
        print(f"  baseline bare python start   {figures['baseline_bare_python_median_ms']:6.0f} ms")
        fp_process = figures["baseline_fingerprint_process_median_ms"]
        print(
            f"  baseline fingerprint process {fp_process:6.0f} ms "
            f"(filter is {figures['filter_median_ms'] / fp_process:.2f}x)"
        )
    ok_check = figures["check_msgs_per_s"] >= CHECK_BAR
    ok_filter = figures["filter_median_ms"] < FILTER_BAR_MS
    print(f"{'PASS' if ok_check else 'FAIL'}: agent check >= {CHECK_BAR:.0f} msgs/s")
    print(f"{'PASS' if ok_filter else 'FAIL'}: agent filter median < {FILTER_BAR_MS:.0f} ms")
    return 0 if ok_check and ok_filter else 1


if __name__ == "__main__":
    sys.exit(main())

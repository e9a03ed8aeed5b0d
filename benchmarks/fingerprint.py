"""Fingerprinting speed: normalisation, ATA, the end-to-end pipeline, against baselines.

Baselines measured in the same run on the same messages: pyzor's digest
(`pyzor.digest.DataDigester`, parse included), TLSH (`tlsh.hash` on the raw bytes) and a
straightforward pure-Python rolling-hash loop (`p2pspam.fingerprint.reference`).

    .venv/bin/python benchmarks/fingerprint.py            # ~20 MB corpus, seed 1
    .venv/bin/python benchmarks/fingerprint.py --mb 4 --seed 7 --json

Bars of issue 2 (printed as PASS/FAIL lines): ATA on canonical text >= 150 MB/s median
and >= 20x the pure-Python loop; batch of 2 KB texts >= 20,000 msgs/s; end-to-end from
raw bytes on 5 KB messages >= 2,000 msgs/s and faster than pyzor's digest.
"""

from __future__ import annotations

import argparse
import email
import json
import statistics
import time
from collections.abc import Callable

import numpy as np

from p2pspam.fingerprint import canonical_body
from p2pspam.fingerprint.ata import AtaScheme, ata_features, ata_features_batch
from p2pspam.fingerprint.reference import reference_features


def make_vocabulary(rng: np.random.Generator, size: int = 6000) -> list[str]:
    """Return pseudo-words with a Zipf-like length mix."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(2, 11, size)
    return ["".join(rng.choice(letters, n)) for n in lengths]


def make_text(rng: np.random.Generator, vocab: list[str], chars: int) -> str:
    """Return roughly ``chars`` characters of sentences from ``vocab``."""
    ranks = np.minimum(rng.zipf(1.3, chars // 4), len(vocab)) - 1
    words = [vocab[r] for r in ranks]
    out, total, line = [], 0, 0
    for i, word in enumerate(words):
        if i % 12 == 0:
            word = word.capitalize()
        out.append(word)
        total += len(word) + 1
        line += len(word) + 1
        if line > 70:
            out.append("\n")
            line = 0
        if total >= chars:
            break
    return " ".join(out)[:chars]


def make_message(rng: np.random.Generator, vocab: list[str], chars: int, index: int) -> bytes:
    """Return a mail-like message (plain, HTML or multipart/alternative) of ~chars body."""
    body = make_text(rng, vocab, chars)
    head = f"From: sender{index}@example.org\nTo: you@example.org\nSubject: message {index}\n"
    kind = index % 3
    if kind == 0:
        return (head + "Content-Type: text/plain; charset=utf-8\n\n" + body).encode()
    html = "<html><body>" + "".join(f"<p>{p}</p>" for p in body.split("\n")) + "</body></html>"
    if kind == 1:
        return (head + "Content-Type: text/html; charset=utf-8\n\n" + html).encode()
    return (
        head + 'MIME-Version: 1.0\nContent-Type: multipart/alternative; boundary="b"\n\n'
        f"--b\nContent-Type: text/plain; charset=utf-8\n\n{body}\n"
        f"--b\nContent-Type: text/html; charset=utf-8\n\n{html}\n--b--\n"
    ).encode()


def corpus(seed: int, megabytes: float) -> list[bytes]:
    """Return messages of 1-64 KB (log-uniform sizes) totalling about ``megabytes``."""
    rng = np.random.default_rng(seed)
    vocab = make_vocabulary(rng)
    out, total, i = [], 0, 0
    while total < megabytes * 1e6:
        size = int(2 ** rng.uniform(10, 16))
        out.append(make_message(rng, vocab, size, i))
        total += len(out[-1])
        i += 1
    return out


def timed(fn: Callable[[], object], repeat: int) -> float:
    """Return the median wall time of ``repeat`` calls of ``fn``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def pyzor_digest(raw: bytes) -> str | None:
    """Return pyzor's digest of a message (parse included, as the pyzor client does)."""
    from pyzor.digest import DataDigester

    return DataDigester(email.message_from_bytes(raw)).value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0, help="corpus size in MB")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    args = parser.parse_args()

    import tlsh  # bench extra

    messages = corpus(args.seed, args.mb)
    raw_bytes = sum(map(len, messages))
    bodies = [canonical_body(m) for m in messages]
    texts = [b.text for b in bodies]
    chars = sum(map(len, texts))
    scheme = AtaScheme()
    n = len(messages)
    results: dict[str, float] = {}

    t = timed(lambda: [canonical_body(m) for m in messages], args.repeat)
    results["normalise_MBps"] = raw_bytes / t / 1e6
    results["normalise_msgs_per_s"] = n / t
    t = timed(lambda: [ata_features(x) for x in texts], args.repeat)
    results["ata_per_call_MBps"] = chars / t / 1e6
    t = timed(lambda: ata_features_batch(texts), args.repeat)
    results["ata_batch_MBps"] = chars / t / 1e6
    t = timed(lambda: scheme.vectors([canonical_body(m) for m in messages]), args.repeat)
    results["end_to_end_MBps"] = raw_bytes / t / 1e6
    results["end_to_end_msgs_per_s"] = n / t

    # Baselines on the same corpus.
    sample = texts[: max(1, len(texts) // 20)]  # the pure-Python loop is slow: 5% sample
    sample_chars = sum(map(len, sample))
    t = timed(lambda: [reference_features(x) for x in sample], 1)
    results["pure_python_MBps"] = sample_chars / t / 1e6
    t = timed(lambda: [tlsh.hash(m) for m in messages], args.repeat)
    results["tlsh_MBps"] = raw_bytes / t / 1e6
    t = timed(lambda: [pyzor_digest(m) for m in messages], args.repeat)
    results["pyzor_MBps"] = raw_bytes / t / 1e6
    results["pyzor_msgs_per_s"] = n / t

    # Small messages: 2 KB canonical texts in one batch; 5 KB raw messages end to end.
    rng = np.random.default_rng(args.seed + 1)
    vocab = make_vocabulary(rng)
    small = [make_text(rng, vocab, 2048) for _ in range(20_000)]
    t = timed(lambda: ata_features_batch(small), args.repeat)
    results["batch_2KB_msgs_per_s"] = len(small) / t
    five = [make_message(rng, vocab, 5 * 1024, i) for i in range(4000)]
    t = timed(lambda: scheme.vectors([canonical_body(m) for m in five]), args.repeat)
    results["end_to_end_5KB_msgs_per_s"] = len(five) / t
    t = timed(lambda: [pyzor_digest(m) for m in five], args.repeat)
    results["pyzor_5KB_msgs_per_s"] = len(five) / t

    ratios = {
        "ata_batch_vs_pure_python": results["ata_batch_MBps"] / results["pure_python_MBps"],
        "ata_per_call_vs_pure_python": results["ata_per_call_MBps"] / results["pure_python_MBps"],
        "end_to_end_5KB_vs_pyzor": results["end_to_end_5KB_msgs_per_s"]
        / results["pyzor_5KB_msgs_per_s"],
        "ata_batch_vs_tlsh": results["ata_batch_MBps"] / results["tlsh_MBps"],
    }
    bars = {
        "ATA on canonical text >= 150 MB/s (batch)": results["ata_batch_MBps"] >= 150,
        "ATA >= 20x the pure-Python loop": ratios["ata_batch_vs_pure_python"] >= 20,
        "batch of 2 KB texts >= 20,000 msgs/s": results["batch_2KB_msgs_per_s"] >= 20_000,
        "end to end 5 KB >= 2,000 msgs/s": results["end_to_end_5KB_msgs_per_s"] >= 2_000,
        "end to end 5 KB faster than pyzor": ratios["end_to_end_5KB_vs_pyzor"] > 1,
    }
    if args.json:
        print(json.dumps({"corpus": {"messages": n, "raw_bytes": raw_bytes}, **results, **ratios}))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(
        f"corpus: {n} messages, {raw_bytes / 1e6:.1f} MB raw, {chars / 1e6:.1f} M canonical "
        f"characters (seed {args.seed}, median of {args.repeat})"
    )
    table = Table("figure", "value")
    for key, value in {**results, **ratios}.items():
        table.add_row(key, f"{value:,.1f}" if value >= 10 else f"{value:.2f}")
    console.print(table)
    for name, ok in bars.items():
        console.print(f"{'PASS' if ok else 'FAIL'}  {name}")


if __name__ == "__main__":
    main()

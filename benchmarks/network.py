"""The network check: in-network evaluation against the naive approximate DOLR.

Starts a loopback network of real peers (default 64, in this process), publishes spam
campaigns marked by signed votes, then checks edited copies and ham:

- **optimised**: ``AdolrNode.route_approx`` (the query carries the whole vector, the
  first node holding a feature object evaluates it and answers with the matching GUIDs
  and their co-located records; N - THRES + 1 feature lookups);
- **naive** (baseline, SpamWatch 3.2): ``AdolrNode.route_naive`` (fetch every feature
  object, count GUID occurrences at the client, then look up each matching object).

Both run in the same process on the same network and queries. Datagrams and bytes are
counted over every peer (they all live in this process). Then ``check`` through one
peer's agent API: latency p50/p99 and checks per second with concurrent clients.

    .venv/bin/python benchmarks/network.py                 # 64 peers
    .venv/bin/python benchmarks/network.py --peers 32 --checks 100 --seed 2

Bars of issue 3 (printed as PASS/FAIL): the optimised check needs no more datagrams than
the naive one and one fewer round trip; p50 check latency under 50 ms on loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pspam.auth.credentials import new_user_key, public_bytes
from p2pspam.auth.votes import sign_vote
from p2pspam.fingerprint import get_scheme
from p2pspam.fingerprint.normalize import canonical_body_of_text
from p2pspam.peer.localnet import LocalNetwork, api_call, local_config, local_network

THRES = 3
P50_BAR_MS = 50.0


def words(rng: random.Random, n: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(n)]


def edit(rng: random.Random, text: list[str], changes: int) -> list[str]:
    """A mail-merge style copy: ``changes`` words replaced."""
    out = list(text)
    for _ in range(changes):
        out[rng.randrange(len(out))] = "".join(rng.choice("xyzqk") for _ in range(6))
    return out


def totals(net: LocalNetwork) -> tuple[int, int]:
    """Datagrams and bytes sent by every live peer so far."""
    dgrams = sum(p.node.counters.get("datagrams_out", 0) for p in net.live())
    sent = sum(p.node.counters.get("bytes_out", 0) for p in net.live())
    return dgrams, sent


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(
    net: LocalNetwork, queries: list[Any], run: Callable[[Any], Awaitable[Any]]
) -> dict[str, float]:
    """Run ``queries`` one at a time; latency, datagrams, bytes and round trips each."""
    latencies, trips, found = [], [], 0
    d0, b0 = totals(net)
    for q in queries:
        start = time.perf_counter()
        result = await run(q)
        latencies.append((time.perf_counter() - start) * 1000)
        trips.append(result.round_trips)
        found += bool(result.matches)
    d1, b1 = totals(net)
    n = len(queries)
    return {
        "p50_ms": pct(latencies, 0.5),
        "p99_ms": pct(latencies, 0.99),
        "datagrams": (d1 - d0) / n,
        "bytes": (b1 - b0) / n,
        "round_trips": statistics.mean(trips),
        "found": found,
    }


ROWS = (
    ("p50_ms", "latency p50 (ms)"),
    ("p99_ms", "latency p99 (ms)"),
    ("datagrams", "datagrams / check"),
    ("bytes", "bytes / check"),
    ("round_trips", "round trips / check"),
    ("found", "checks with a match"),
)


def table(title: str, optimised: dict[str, float], naive: dict[str, float]) -> None:
    """Print optimised against naive figures."""
    print(f"{title:24}{'optimised':>12}{'naive':>12}{'ratio':>8}")
    for key, label in ROWS:
        a, b = optimised[key], naive[key]
        ratio = f"{a / b:.2f}" if b else "-"
        print(f"{label:24}{a:>12.1f}{b:>12.1f}{ratio:>8}")
    print()


async def main(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    scheme = get_scheme("ata")
    authority = Ed25519PrivateKey.generate()
    now = time.time_ns() // 1_000_000
    users = [new_user_key(authority, f"user{i}", now - 1000, now + 86_400_000) for i in range(5)]
    config = local_config(replicas=args.replicas)
    print(f"starting {args.peers} peers on loopback ...", flush=True)
    t0 = time.perf_counter()
    async with local_network(args.peers, public_bytes(authority), node_config=config) as net:
        print(f"  joined in {time.perf_counter() - t0:.1f} s")
        texts = [words(rng, 250) for _ in range(args.campaigns)]
        originals = scheme.vectors([canonical_body_of_text(" ".join(t)) for t in texts])
        for vector in originals:
            for user in rng.sample(users, 2):
                vote = sign_vote(user, vector, "spam", now).encode()
                peer = net.peers[rng.randrange(1, args.peers)]
                reply = await api_call(peer.api_address, "publish", {"vote": vote})
                assert reply["ok"], reply
        print(f"  published {args.campaigns} campaigns with 2 votes each")
        client = net.peers[0]
        half = args.checks // 2
        copies = [edit(rng, texts[rng.randrange(args.campaigns)], 4) for _ in range(half)]
        hams = [words(rng, 250) for _ in range(args.checks - half)]
        queries = scheme.vectors([canonical_body_of_text(" ".join(t)) for t in copies + hams])
        node = client.node

        def optimised_run(v: Any) -> Awaitable[Any]:
            return node.route_approx(v, THRES, use_cache=False)

        def naive_run(v: Any) -> Awaitable[Any]:
            return node.route_naive(v, THRES)

        spam_q, ham_q = queries[:half], queries[half:]
        spam_opt = await measure(net, spam_q, optimised_run)
        spam_naive = await measure(net, spam_q, naive_run)
        ham_opt = await measure(net, ham_q, optimised_run)
        ham_naive = await measure(net, ham_q, naive_run)

        api = client.api_address
        latencies: list[float] = []

        async def one_check(v: Any) -> None:
            args_ = {"namespace": v.namespace, "features": list(v.features), "thres": THRES}
            start = time.perf_counter()
            reply = await api_call(api, "check", args_)
            latencies.append((time.perf_counter() - start) * 1000)
            assert reply["ok"], reply

        fresh = [edit(rng, texts[rng.randrange(args.campaigns)], 4) for _ in range(args.checks)]
        fresh_vectors = scheme.vectors([canonical_body_of_text(" ".join(t)) for t in fresh])
        for v in fresh_vectors[: args.checks // 2]:
            await one_check(v)
        sequential = list(latencies)
        latencies.clear()
        pending = list(fresh_vectors[args.checks // 2 :]) * 2
        start = time.perf_counter()

        async def worker() -> None:
            while pending:
                await one_check(pending.pop())

        total = len(pending)
        await asyncio.gather(*(worker() for _ in range(args.concurrency)))
        rate = total / (time.perf_counter() - start)

    print()
    print(
        f"{args.peers} peers, {args.checks} queries ({half} edited spam copies, "
        f"{args.checks - half} ham), THRES={THRES}, replicas={args.replicas}"
    )
    table("edited spam copies", spam_opt, spam_naive)
    table("ham", ham_opt, ham_naive)
    print(
        f"agent API check (client-side, new connection per check): "
        f"p50 {pct(sequential, 0.5):.1f} ms, p99 {pct(sequential, 0.99):.1f} ms"
    )
    print(f"agent API throughput with {args.concurrency} concurrent clients: {rate:.0f} checks/s")
    print()
    bars = [
        (
            "optimised datagrams <= naive (spam and ham)",
            spam_opt["datagrams"] <= spam_naive["datagrams"]
            and ham_opt["datagrams"] <= ham_naive["datagrams"],
        ),
        (
            "optimised spam check: at least one fewer round trip",
            spam_opt["round_trips"] <= spam_naive["round_trips"] - 1,
        ),
        (
            f"p50 check latency < {P50_BAR_MS:.0f} ms (spam and ham)",
            max(spam_opt["p50_ms"], ham_opt["p50_ms"]) < P50_BAR_MS,
        ),
        (
            "same matches found",
            (spam_opt["found"], ham_opt["found"]) == (spam_naive["found"], ham_naive["found"]),
        ),
    ]
    for label, ok in bars:
        print(f"{'PASS' if ok else 'FAIL'}  {label}")


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", type=int, default=64)
    parser.add_argument("--campaigns", type=int, default=20)
    parser.add_argument("--checks", type=int, default=200)
    parser.add_argument("--replicas", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1)
    asyncio.run(main(parser.parse_args()))


if __name__ == "__main__":
    cli()

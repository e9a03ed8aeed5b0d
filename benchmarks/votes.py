"""Vote verification cost, against baselines measured in the same run on the same votes.

Baselines: a bare Ed25519 signature check of the vote (``cryptography``, key already
loaded: the floor any signed-vote scheme pays) and decoding alone (``decode_vote``: strict
msgpack parsing, no signature). Measured paths:

- ``verify``: a new vote by a known user (credential signature cached, as in steady state);
- ``verify, new credential``: a user's first vote at this peer (two signature checks);
- ``re-verify stored``: a vote the peer verified before (serving a tally);
- ``ingest``: verify + rate limit + tally update, the path of an incoming vote, in votes/s
  (median over chunks of 100 votes).

    .venv/bin/python benchmarks/votes.py                  # 3,000 votes, seed 1
    .venv/bin/python benchmarks/votes.py --votes 500 --seed 7 --json

Bars of issue 4 (PASS/FAIL lines): verify median under 0.2 ms; ingest at least 1,000
votes/s on one core.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from p2pspam.auth.credentials import new_user_key, public_bytes
from p2pspam.auth.tally import LiveVotes
from p2pspam.auth.verify import RateLimitedVerifier, VoteRateLimiter, VoteVerifier
from p2pspam.auth.votes import VOTE_DOMAIN, decode_vote, decode_vote_record, sign_vote
from p2pspam.fingerprint.ata import AtaScheme
from p2pspam.fingerprint.vector import FeatureVector

NOW = 1_700_000_000_000
YEAR = 365 * 86_400_000
VERIFY_BAR_MS = 0.2
INGEST_BAR = 1000
INGEST_CHUNK = 100


def make_votes(count: int, users: int, seed: int) -> tuple[bytes, list[bytes], list[bytes]]:
    """Return (authority public key, votes by a few repeat users, first votes of distinct
    users): random ATA-shaped vectors, one verdict each."""
    rng = random.Random(seed)
    authority = Ed25519PrivateKey.generate()
    scheme = AtaScheme()
    keys = [new_user_key(authority, f"user{i}", NOW - YEAR, NOW + YEAR) for i in range(users)]
    firsts = [new_user_key(authority, f"first{i}", NOW - YEAR, NOW + YEAR) for i in range(count)]

    def one(key: Any, i: int) -> bytes:
        vector = FeatureVector(
            scheme=scheme.name,
            namespace=scheme.namespace,
            params=scheme.params,
            features=tuple(rng.getrandbits(64) for _ in range(scheme.count)),
            guid=rng.randbytes(20),
            chars=0,
        )
        verdict = rng.choice(("spam", "spam", "ham"))
        return sign_vote(key, vector, verdict, NOW + i).encode()

    repeat = [one(keys[i % users], i) for i in range(count)]
    first = [one(firsts[i], i) for i in range(count)]
    return public_bytes(authority), repeat, first


def per_call_ms(items: Sequence[Any], call: Callable[[Any], object]) -> list[float]:
    """Return the duration in ms of ``call`` on each item."""
    out = []
    clock = time.perf_counter_ns
    for item in items:
        start = clock()
        call(item)
        out.append((clock() - start) / 1e6)
    return out


def main() -> None:
    """Run the benchmark and print figures, ratios and the bars."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--votes", type=int, default=3000, help="votes per measurement")
    parser.add_argument("--users", type=int, default=100, help="repeat voters")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()

    authority, repeat, first = make_votes(args.votes, args.users, args.seed)

    # Baseline 1: the bare signature check, key objects and signed bytes prepared.
    prepared = []
    for data in repeat:
        vote, record = decode_vote_record(data)
        key = Ed25519PublicKey.from_public_bytes(vote.credential.public_key)
        prepared.append((key, vote.signature, VOTE_DOMAIN + record))
    ed25519 = per_call_ms(prepared, lambda p: p[0].verify(p[1], p[2]))
    # Baseline 2: strict decoding alone.
    decode = per_call_ms(repeat, decode_vote)

    verifier = VoteVerifier(authority)
    for data in repeat[: args.users]:  # steady state: every repeat voter seen once before
        verifier.verify(data, NOW + args.votes)
    now = NOW + args.votes
    verify = per_call_ms(repeat[args.users :], lambda d: verifier.verify(d, now))
    cold = per_call_ms(first, lambda d: verifier.verify(d, now))
    stored = per_call_ms(repeat, lambda d: verifier.verify(d, now, replica=True))

    # Ingest in chunks and keep the median chunk rate: the machine is shared, and one
    # long timing would mostly measure other processes.
    ingest_verifier = RateLimitedVerifier(VoteVerifier(authority), VoteRateLimiter(10**6))
    tallies: dict[bytes, LiveVotes] = {}
    rates = []
    for start in range(0, len(repeat), INGEST_CHUNK):
        chunk = repeat[start : start + INGEST_CHUNK]
        began = time.perf_counter()
        for data in chunk:
            vote = ingest_verifier.verify(data, now)
            tallies.setdefault(vote.guid, LiveVotes()).add(vote)
        rates.append(len(chunk) / (time.perf_counter() - began))
    ingest_rate = statistics.median(rates)

    figures = {
        "votes": args.votes,
        "vote_bytes_median": statistics.median(len(d) for d in repeat),
        "ed25519_verify_ms": statistics.median(ed25519),
        "decode_ms": statistics.median(decode),
        "verify_ms": statistics.median(verify),
        "verify_p99_ms": sorted(verify)[int(0.99 * (len(verify) - 1))],
        "verify_new_credential_ms": statistics.median(cold),
        "reverify_stored_ms": statistics.median(stored),
        "verify_votes_per_s": 1000 / statistics.median(verify),
        "ingest_votes_per_s": ingest_rate,
    }
    figures["verify_over_ed25519"] = figures["verify_ms"] / figures["ed25519_verify_ms"]
    figures["verify_over_decode"] = figures["verify_ms"] / figures["decode_ms"]
    figures["new_credential_over_ed25519"] = (
        figures["verify_new_credential_ms"] / figures["ed25519_verify_ms"]
    )
    if args.json:
        print(json.dumps(figures))
        return
    report(figures, args.seed)


def report(f: dict[str, float], seed: int) -> None:
    """Print the figures, the ratios to the baselines and the bars."""

    def us(name: str) -> str:
        return f"{f[name] * 1000:8.1f} us"

    print(f"{f['votes']} votes of {f['vote_bytes_median']:.0f} bytes (median), seed {seed}")
    print("median cost per vote:")
    print(f"  baseline  Ed25519 verify alone   {us('ed25519_verify_ms')}")
    print(f"  baseline  decode_vote alone      {us('decode_ms')}")
    ratios = f"{f['verify_over_ed25519']:.2f}x Ed25519, {f['verify_over_decode']:.1f}x decode"
    print(f"  verify (known user)              {us('verify_ms')}   = {ratios}")
    print(f"            p99                    {us('verify_p99_ms')}")
    cold = f"{f['new_credential_over_ed25519']:.2f}x Ed25519"
    print(f"  verify (new credential)          {us('verify_new_credential_ms')}   = {cold}")
    print(f"  re-verify a stored vote          {us('reverify_stored_ms')}")
    print(
        f"throughput: verify {f['verify_votes_per_s']:,.0f} votes/s, ingest (verify + rate "
        f"limit + tally) {f['ingest_votes_per_s']:,.0f} votes/s on one core"
    )
    verdict = "PASS" if f["verify_ms"] < VERIFY_BAR_MS else "FAIL"
    print(f"{verdict} verify median {f['verify_ms']:.3f} ms < {VERIFY_BAR_MS} ms")
    verdict = "PASS" if f["ingest_votes_per_s"] >= INGEST_BAR else "FAIL"
    print(f"{verdict} ingest {f['ingest_votes_per_s']:,.0f} votes/s >= {INGEST_BAR:,}")


if __name__ == "__main__":
    main()

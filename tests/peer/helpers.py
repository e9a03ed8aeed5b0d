"""Shared helpers of the peer tests: an authority, signed votes, vectors, a loop runner."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Coroutine
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pspam.adolr.records import Vector
from p2pspam.auth.credentials import UserKey, new_user_key, public_bytes
from p2pspam.auth.votes import sign_vote
from p2pspam.fingerprint import canonical_body, get_scheme
from p2pspam.fingerprint.vector import FeatureVector
from p2pspam.samples import DEMO_MESSAGES

DAY_MS = 86_400_000
NAMESPACE = "ata/1/L=50"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Authority:
    """A throw-away authority that issues users."""

    def __init__(self) -> None:
        self.key = Ed25519PrivateKey.generate()
        self.public_key = public_bytes(self.key)

    def user(self, name: str) -> UserKey:
        now = now_ms()
        return new_user_key(self.key, name, now - DAY_MS, now + DAY_MS)


def random_vector(rng: random.Random, n: int = 10) -> Vector:
    """A vector of ``n`` random 64-bit features (the shape of an ATA vector)."""
    return Vector(NAMESPACE, tuple(sorted(rng.getrandbits(64) for _ in range(n))))


def edited(vector: Vector, rng: random.Random, keep: int) -> Vector:
    """A copy of ``vector`` sharing exactly ``keep`` of its features."""
    kept = rng.sample(list(vector.features), keep)
    fresh = [rng.getrandbits(64) for _ in range(len(vector.features) - keep)]
    return Vector(vector.namespace, tuple(sorted(kept + fresh)))


def demo_vectors() -> list[FeatureVector]:
    """The ATA vectors of the built-in demo messages (spam original first)."""
    scheme = get_scheme("ata")
    return scheme.vectors([canonical_body(raw) for _, _, raw in DEMO_MESSAGES])


def spam_vote(user: UserKey, vector: FeatureVector, verdict: str = "spam") -> bytes:
    """An encoded signed vote on ``vector``."""
    return sign_vote(user, vector, verdict, now_ms()).encode()


class LoopRunner:
    """An event loop kept across the tests of a module (one network for many tests)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float = 120.0) -> Any:
        return self.loop.run_until_complete(asyncio.wait_for(coro, timeout))

    def close(self) -> None:
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()

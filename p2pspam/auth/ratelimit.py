"""A per-user vote rate limit, against a stolen credential flooding the network.

A token bucket per user: a user may cast ``per_hour`` votes in a burst, then one more
every ``3600 / per_hour`` seconds. Exact integer arithmetic; the clock is passed in.
"""

from __future__ import annotations

from p2pspam.errors import ParameterError

HOUR_MS = 3_600_000
DEFAULT_PER_HOUR = 200


class VoteRateLimiter:
    """Allows each user at most ``per_hour`` votes per hour (bursts up to ``per_hour``)."""

    def __init__(self, per_hour: int = DEFAULT_PER_HOUR, max_users: int = 100_000) -> None:
        if type(per_hour) is not int or per_hour < 1:
            raise ParameterError(f"the vote rate limit must be at least 1 per hour, got {per_hour}")
        if max_users < 1:
            raise ParameterError("max_users must be at least 1")
        self.per_hour = per_hour
        self.max_users = max_users
        # One token is HOUR_MS units; the bucket refills per_hour units per millisecond.
        self._capacity = per_hour * HOUR_MS
        self._buckets: dict[str, tuple[int, int]] = {}  # user -> (units, at_ms)

    def _units(self, user_id: str, now_ms: int) -> tuple[int, int]:
        """Return the user's allowance at ``now_ms`` and the time it is counted at (a clock
        going backwards refills nothing and never moves that time back)."""
        units, at_ms = self._buckets.get(user_id, (self._capacity, now_ms))
        elapsed = max(0, now_ms - at_ms)
        return min(self._capacity, units + elapsed * self.per_hour), max(at_ms, now_ms)

    def allow(self, user_id: str, now_ms: int) -> bool:
        """Count one vote by ``user_id`` at ``now_ms``; return False (and count nothing)
        when the user is over the limit."""
        units, at_ms = self._units(user_id, now_ms)
        if units < HOUR_MS:
            self._buckets[user_id] = (units, at_ms)
            return False
        self._buckets[user_id] = (units - HOUR_MS, at_ms)
        if len(self._buckets) > self.max_users:
            self._forget_idle(now_ms)
        return True

    def remaining(self, user_id: str, now_ms: int) -> int:
        """Return how many votes ``user_id`` may still cast at ``now_ms``."""
        return self._units(user_id, now_ms)[0] // HOUR_MS

    def _forget_idle(self, now_ms: int) -> None:
        """Drop users whose bucket is full again (forgetting them changes nothing), then,
        if still too many, the least recently active half."""
        full = [u for u in self._buckets if self._units(u, now_ms)[0] >= self._capacity]
        for user in full:
            del self._buckets[user]
        if len(self._buckets) > self.max_users:
            by_age = sorted(self._buckets, key=lambda u: self._buckets[u][1])
            for user in by_age[: len(by_age) // 2]:
                del self._buckets[user]

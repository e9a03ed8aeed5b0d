"""The online line-block bulk detector (Verma & Dhar 2014); spec: docs/schemes/lineblock.md.

A message is split into line blocks: each non-empty line of its body text, canonicalised,
and any line of more than ``max_words`` (100) words cut into blocks of at most that many.
Each block is hashed by k = 10 functions (double hashing of SHA-256 of the block) into a
counting Bloom filter split into time slots: new blocks are counted in the current slot;
a block was seen when, summed over the live slots, all k of its counters are non-zero.
A slot is cleared when its time comes round again, so after ``slots`` slot lengths a block
is forgotten. The match percentage of a message is the share of its blocks seen before it;
at >= 66 % the message is bulk. Memory is ``slots * size`` counters, fixed at creation; no
content is stored, only counts. Time is passed in (``now_ms``), never read.

For ``agent filter``: ``detector.observe_message(raw, now_ms)`` then ``bulk_header(result)``
gives the ``X-P2PSpam-Bulk`` header to add.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from p2pspam.errors import InputError, ParameterError
from p2pspam.fingerprint.normalize import body_parts, canonical_text

SPEC_VERSION = 1
DEFAULT_MAX_WORDS = 100
DEFAULT_HASHES = 10
DEFAULT_SIZE = 1 << 20
DEFAULT_SLOTS = 6
DEFAULT_SLOT_MS = 600_000
DEFAULT_ALERT_PCT = 66
HEADER = "X-P2PSpam-Bulk"
_PREFIX = b"p2pspam/lineblock/1\0"
_COUNTER = np.uint16
_COUNTER_MAX = np.iinfo(_COUNTER).max
_MASK64 = (1 << 64) - 1


def text_blocks(text: str, max_words: int = DEFAULT_MAX_WORDS) -> list[str]:
    """Return the line blocks of body text (lines not yet canonicalised)."""
    blocks = []
    for line in text.splitlines():
        canon = canonical_text(line)
        if not canon:
            continue
        tokens = canon.split(" ")
        for start in range(0, len(tokens), max_words):
            blocks.append(" ".join(tokens[start : start + max_words]))
    return blocks


def body_text(raw: bytes) -> str:
    """Return the decoded text of a message body with its lines kept (the same parts,
    decoding and HTML rendering as the canonical text, before whitespace folding)."""
    return "\n".join(body_parts(raw))


def message_blocks(raw: bytes, max_words: int = DEFAULT_MAX_WORDS) -> list[str]:
    """Return the line blocks of an RFC 5322 message."""
    return text_blocks(body_text(raw), max_words)


def block_indexes(blocks: Sequence[str], hashes: int, size: int) -> np.ndarray:
    """Return the k counter indexes of each block, shape (blocks, k): with SHA-256(prefix +
    block) = a | b | ... (8-byte big-endian words) and b' = b | 1,
    index_i = ((a + i * b') mod 2^64) mod size."""
    rows = []
    for block in blocks:
        digest = hashlib.sha256(_PREFIX + block.encode("utf-8")).digest()
        a = int.from_bytes(digest[:8], "big")
        b = int.from_bytes(digest[8:16], "big") | 1
        rows.append([((a + i * b) & _MASK64) % size for i in range(hashes)])
    return np.array(rows, dtype=np.int64).reshape(len(blocks), hashes)


@dataclass(frozen=True, slots=True)
class BulkResult:
    """How much of one message was seen before it."""

    blocks: int
    matched: int
    percent: int  # floor(100 * matched / blocks); 0 for a message without blocks
    alert: bool


def bulk_header(result: BulkResult) -> tuple[str, str]:
    """Return the header (name, value) that ``agent filter`` adds: the match percent."""
    return HEADER, str(result.percent)


@dataclass(frozen=True, slots=True)
class BulkConfig:
    """The detector's configuration (memory = slots * size * 2 bytes)."""

    size: int = DEFAULT_SIZE
    hashes: int = DEFAULT_HASHES
    slots: int = DEFAULT_SLOTS
    slot_ms: int = DEFAULT_SLOT_MS
    max_words: int = DEFAULT_MAX_WORDS
    alert_pct: int = DEFAULT_ALERT_PCT

    def __post_init__(self) -> None:
        checks = (
            ("size", self.size, 64, 1 << 28),
            ("hashes", self.hashes, 1, 32),
            ("slots", self.slots, 1, 1024),
            ("slot_ms", self.slot_ms, 1, 365 * 86_400_000),
            ("max_words", self.max_words, 1, 100_000),
            ("alert_pct", self.alert_pct, 0, 100),
        )
        for name, value, low, high in checks:
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ParameterError(f"bulk detector: {name} must be {low}..{high}, got {value!r}")
        if self.slots * self.size > 1 << 30:
            raise ParameterError("bulk detector: slots * size must be at most 2^30 counters")


class BulkDetector:
    """A time-slotted counting Bloom filter over line blocks."""

    def __init__(self, config: BulkConfig | None = None) -> None:
        self.config = config or BulkConfig()
        self.counters = np.zeros((self.config.slots, self.config.size), dtype=_COUNTER)
        self.epochs = np.full(self.config.slots, -1, dtype=np.int64)
        self.latest_epoch = -1

    @property
    def memory_bytes(self) -> int:
        """The bytes the filter holds: fixed by the configuration."""
        return self.counters.nbytes + self.epochs.nbytes

    def _advance(self, now_ms: int) -> None:
        epoch = max(int(now_ms) // self.config.slot_ms, self.latest_epoch)
        row = epoch % self.config.slots
        if self.epochs[row] != epoch:
            self.counters[row] = 0
            self.epochs[row] = epoch
        self.latest_epoch = epoch

    def _live_rows(self) -> list[int]:
        oldest = self.latest_epoch - self.config.slots + 1
        return [row for row, epoch in enumerate(self.epochs.tolist()) if epoch >= oldest]

    def observe_blocks(self, blocks: Sequence[str], now_ms: int) -> BulkResult:
        """Score the blocks of one message against what was seen, then count them."""
        self._advance(now_ms)
        distinct = list(dict.fromkeys(blocks))
        indexes = block_indexes(distinct, self.config.hashes, self.config.size)
        flat = indexes.ravel()
        counts = np.zeros(len(flat), dtype=np.int64)
        for row in self._live_rows():
            counts += self.counters[row].take(flat)
        seen = (counts.reshape(indexes.shape).min(axis=1) > 0).tolist() if distinct else []
        seen_blocks = {b for b, s in zip(distinct, seen, strict=True) if s}
        matched = sum(1 for b in blocks if b in seen_blocks)
        total = len(blocks)
        current = self.counters[self.latest_epoch % self.config.slots]
        # an index listed twice gets the same new value twice: it is counted once
        current[flat] = np.minimum(current[flat], _COUNTER_MAX - 1) + 1
        percent = (100 * matched) // total if total else 0
        alert = total > 0 and 100 * matched >= self.config.alert_pct * total
        return BulkResult(total, matched, percent, alert)

    def observe_message(self, raw: bytes, now_ms: int) -> BulkResult:
        """Score one RFC 5322 message and count its blocks."""
        return self.observe_blocks(message_blocks(raw, self.config.max_words), now_ms)

    def state(self) -> dict[str, np.ndarray]:
        """Return the arrays that make up the detector (to save; holds no content)."""
        config = self.config
        return {
            "version": np.array([SPEC_VERSION], dtype=np.int64),
            "config": np.array(
                [
                    config.size,
                    config.hashes,
                    config.slots,
                    config.slot_ms,
                    config.max_words,
                    config.alert_pct,
                ],
                dtype=np.int64,
            ),
            "counters": self.counters,
            "epochs": self.epochs,
            "latest": np.array([self.latest_epoch], dtype=np.int64),
        }

    @classmethod
    def from_state(cls, arrays: Mapping[str, np.ndarray]) -> BulkDetector:
        """Rebuild a detector from ``state()``; raise InputError when it is inconsistent."""
        try:
            version = int(arrays["version"][0])
            values = [int(v) for v in arrays["config"]]
            counters = np.asarray(arrays["counters"])
            epochs = np.asarray(arrays["epochs"])
            latest = int(arrays["latest"][0])
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise InputError(f"bulk detector state is incomplete: {exc}") from None
        if version != SPEC_VERSION or len(values) != 6:
            raise InputError(f"bulk detector state has version {version}, not {SPEC_VERSION}")
        try:
            config = BulkConfig(*values)
        except ParameterError as exc:
            raise InputError(f"bulk detector state: {exc}") from None
        if (
            counters.dtype != _COUNTER
            or counters.shape != (config.slots, config.size)
            or epochs.dtype != np.int64
            or epochs.shape != (config.slots,)
        ):
            raise InputError("bulk detector state: arrays do not match its configuration")
        detector = cls(config)
        detector.counters[...] = counters
        detector.epochs[...] = epochs
        detector.latest_epoch = latest
        return detector

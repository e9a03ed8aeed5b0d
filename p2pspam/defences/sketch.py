"""The agent-side defence: a bounded counting sketch of the window checksums a user keeps
seeing in their own legitimate mail (the idea of the line-block detector of Verma & Dhar,
applied to ATA windows). Windows counted at least ``threshold`` times are not selected
as features, so a list footer, a newsletter template or a company disclaimer the user
receives again and again cannot become one of their features, whatever the text.

Only checksums are kept, as counters of a count-min sketch (``depth`` rows of
``2**width_bits`` saturating 8-bit counters): no text, no checksum list. From each learned
message only the windows ATA could ever select are counted: its ``sample`` highest
distinct checksums (what a short message selects, even after exclusions) and every
checksum in the top ``1/SAMPLE_FRACTION`` of the hash range (what a longer message
selects once its frequent windows are excluded). That keeps the load to about a quarter
of the windows. When as many insertions as one row has counters were made, every counter
is halved (aging), so the sketch stays bounded and follows what the user receives now.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from p2pspam.errors import ParameterError
from p2pspam.fingerprint.ata import DEFAULT_LENGTH, code_points, top_distinct, window_checksums

DEFAULT_WIDTH_BITS = 17
DEFAULT_DEPTH = 3
DEFAULT_SAMPLE = 128
SAMPLE_FRACTION = 4
_CUTOFF = np.uint64((1 << 64) - (1 << 64) // SAMPLE_FRACTION)
SKETCH_FORMAT = b"p2pspam/window-sketch/1\0"
# Odd 64-bit multipliers of the multiply-shift hash of each row (fixed: a saved sketch
# must mean the same thing when loaded again).
_MULTIPLIERS = np.array(
    [
        0xD6E8FEB86659FD93,
        0xA0761D6478BD642F,
        0xE7037ED1A0B428DB,
        0x8EBC6AF09C88C6E3,
        0x589965CC75374CC3,
        0x1D8E4E27C47D124F,
    ],
    dtype=np.uint64,
)


class WindowSketch:
    """Counts how many learned messages contained each window checksum (approximately,
    never under-counting until aging halves the counts)."""

    def __init__(
        self,
        threshold: int,
        *,
        width_bits: int = DEFAULT_WIDTH_BITS,
        depth: int = DEFAULT_DEPTH,
        sample: int = DEFAULT_SAMPLE,
        length: int = DEFAULT_LENGTH,
    ) -> None:
        if type(threshold) is not int or not 1 <= threshold <= 255:
            raise ParameterError(f"sketch threshold must be 1..255, got {threshold!r}")
        if type(width_bits) is not int or not 8 <= width_bits <= 24:
            raise ParameterError(f"sketch width_bits must be 8..24, got {width_bits!r}")
        if type(depth) is not int or not 1 <= depth <= len(_MULTIPLIERS):
            raise ParameterError(f"sketch depth must be 1..{len(_MULTIPLIERS)}, got {depth!r}")
        if type(sample) is not int or not 1 <= sample <= 256:
            raise ParameterError(f"sketch sample must be 1..256, got {sample!r}")
        self.threshold = threshold
        self.width_bits = width_bits
        self.sample = sample
        self.length = length
        self.counts = np.zeros((depth, 1 << width_bits), dtype=np.uint8)
        self.inserted = 0

    def _indexes(self, checksums: np.ndarray) -> np.ndarray:
        values = np.ascontiguousarray(checksums, dtype=np.uint64)
        with np.errstate(over="ignore"):
            mixed = values[None, :] * _MULTIPLIERS[: len(self.counts), None]
        return (mixed >> np.uint64(64 - self.width_bits)).astype(np.intp)

    def add(self, checksums: np.ndarray) -> None:
        """Count each distinct checksum of one message once."""
        values = np.unique(np.asarray(checksums, dtype=np.uint64))
        if not len(values):
            return
        for row, idx in enumerate(self._indexes(values)):
            bumped = self.counts[row, idx].astype(np.uint16) + 1
            self.counts[row, idx] = np.minimum(bumped, 255).astype(np.uint8)
        self.inserted += len(values)
        if self.inserted >= self.counts.shape[1]:
            self.counts >>= 1
            self.inserted //= 2

    def learn(self, text: str) -> None:
        """Count the candidate windows of one legitimate message's canonical text."""
        checksums = window_checksums(code_points(text), self.length)
        if len(checksums):
            high = checksums[checksums >= _CUTOFF]
            self.add(np.concatenate((high, top_distinct(checksums, self.sample))))

    def estimate(self, checksums: np.ndarray) -> np.ndarray:
        """Return the estimated count of each checksum."""
        values = np.asarray(checksums, dtype=np.uint64)
        if not len(values):
            return np.zeros(0, dtype=np.uint8)
        idx = self._indexes(values)
        rows = np.arange(len(self.counts))[:, None]
        return self.counts[rows, idx].min(axis=0)

    def exclude(self, checksums: np.ndarray) -> np.ndarray:
        """The ATA exclusion predicate: True for windows seen ``threshold`` times or more."""
        return self.estimate(checksums) >= self.threshold

    def excluder(self, threshold: int) -> Callable[[np.ndarray], np.ndarray]:
        """An exclusion predicate with another threshold (e.g. stricter for votes)."""
        return lambda checksums: self.estimate(checksums) >= threshold

    def to_bytes(self) -> bytes:
        """Serialise the counters (for the agent's state directory)."""
        head = np.array(
            [
                self.threshold,
                self.width_bits,
                len(self.counts),
                self.sample,
                self.length,
                self.inserted,
            ],
            dtype="<u8",
        )
        return SKETCH_FORMAT + head.tobytes() + self.counts.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> WindowSketch:
        """Load a sketch written by ``to_bytes``; raise ParameterError when malformed."""
        if not data.startswith(SKETCH_FORMAT) or len(data) < len(SKETCH_FORMAT) + 48:
            raise ParameterError("not a p2pspam window sketch")
        head = np.frombuffer(data, dtype="<u8", count=6, offset=len(SKETCH_FORMAT))
        threshold, width_bits, depth, sample, length, inserted = (int(x) for x in head)
        if not 1 <= length <= 4096:
            raise ParameterError("window sketch: bad window length")
        body = data[len(SKETCH_FORMAT) + 48 :]
        if not 8 <= width_bits <= 24 or len(body) != depth << width_bits:
            raise ParameterError("window sketch: truncated or oversized counters")
        sketch = cls(threshold, width_bits=width_bits, depth=depth, sample=sample, length=length)
        sketch.counts = np.frombuffer(body, dtype=np.uint8).reshape(sketch.counts.shape).copy()
        sketch.inserted = min(inserted, sketch.counts.shape[1])
        return sketch

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

``SketchView`` reads the same file format without numpy: one-message processes (``agent
filter``) test a few window checksums, as Python ints, against a saved sketch without
paying numpy's import; both give the same estimates (tested).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from p2pspam.errors import ParameterError
from p2pspam.fingerprint.ata_params import DEFAULT_LENGTH

if TYPE_CHECKING:
    import numpy as np

DEFAULT_WIDTH_BITS = 17
DEFAULT_DEPTH = 3
DEFAULT_SAMPLE = 128
SAMPLE_FRACTION = 4
CUTOFF = (1 << 64) - (1 << 64) // SAMPLE_FRACTION
SKETCH_FORMAT = b"p2pspam/window-sketch/1\0"
_HEAD = struct.Struct("<6Q")
_MASK64 = (1 << 64) - 1
# Odd 64-bit multipliers of the multiply-shift hash of each row (fixed: a saved sketch
# must mean the same thing when loaded again).
MULTIPLIERS = (
    0xD6E8FEB86659FD93,
    0xA0761D6478BD642F,
    0xE7037ED1A0B428DB,
    0x8EBC6AF09C88C6E3,
    0x589965CC75374CC3,
    0x1D8E4E27C47D124F,
)


def _check_shape(threshold: int, width_bits: int, depth: int, sample: int) -> None:
    if type(threshold) is not int or not 1 <= threshold <= 255:
        raise ParameterError(f"sketch threshold must be 1..255, got {threshold!r}")
    if type(width_bits) is not int or not 8 <= width_bits <= 24:
        raise ParameterError(f"sketch width_bits must be 8..24, got {width_bits!r}")
    if type(depth) is not int or not 1 <= depth <= len(MULTIPLIERS):
        raise ParameterError(f"sketch depth must be 1..{len(MULTIPLIERS)}, got {depth!r}")
    if type(sample) is not int or not 1 <= sample <= 256:
        raise ParameterError(f"sketch sample must be 1..256, got {sample!r}")


def _parse(data: bytes) -> tuple[tuple[int, int, int, int, int, int], memoryview]:
    """Return the header fields and the counters of a serialised sketch (checked)."""
    if not data.startswith(SKETCH_FORMAT) or len(data) < len(SKETCH_FORMAT) + _HEAD.size:
        raise ParameterError("not a p2pspam window sketch")
    head = _HEAD.unpack_from(data, len(SKETCH_FORMAT))
    threshold, width_bits, depth, sample, length, inserted = head
    if not 1 <= length <= 4096:
        raise ParameterError("window sketch: bad window length")
    body = memoryview(data)[len(SKETCH_FORMAT) + _HEAD.size :]
    if not 8 <= width_bits <= 24 or not 1 <= depth <= len(MULTIPLIERS):
        raise ParameterError("window sketch: truncated or oversized counters")
    if len(body) != depth << width_bits:
        raise ParameterError("window sketch: truncated or oversized counters")
    _check_shape(threshold, width_bits, depth, sample)
    return (threshold, width_bits, depth, sample, length, min(inserted, 1 << width_bits)), body


def _multipliers(depth: int) -> np.ndarray:
    import numpy as np

    return np.array(MULTIPLIERS[:depth], dtype=np.uint64)


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
        import numpy as np

        _check_shape(threshold, width_bits, depth, sample)
        self.threshold = threshold
        self.width_bits = width_bits
        self.sample = sample
        self.length = length
        self.counts = np.zeros((depth, 1 << width_bits), dtype=np.uint8)
        self.inserted = 0

    def _indexes(self, checksums: np.ndarray) -> np.ndarray:
        import numpy as np

        values = np.ascontiguousarray(checksums, dtype=np.uint64)
        with np.errstate(over="ignore"):
            mixed = values[None, :] * _multipliers(len(self.counts))[:, None]
        return (mixed >> np.uint64(64 - self.width_bits)).astype(np.intp)

    def add(self, checksums: np.ndarray) -> None:
        """Count each distinct checksum of one message once."""
        import numpy as np

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

    def candidates(self, text: str) -> np.ndarray:
        """The window checksums of a canonical text that ``learn`` counts: those ATA
        could ever select."""
        import numpy as np

        from p2pspam.fingerprint.ata import code_points, top_distinct, window_checksums

        checksums = window_checksums(code_points(text), self.length)
        if not len(checksums):
            return checksums
        high = checksums[checksums >= np.uint64(CUTOFF)]
        return np.unique(np.concatenate((high, top_distinct(checksums, self.sample))))

    def learn(self, text: str) -> None:
        """Count the candidate windows of one legitimate message's canonical text."""
        self.add(self.candidates(text))

    def unlearn(self, text: str) -> None:
        """Take back one ``learn`` of ``text`` (a message learned as legitimate that the
        user later judged spam); counters never go below zero."""
        import numpy as np

        values = self.candidates(text)
        if not len(values):
            return
        for row, idx in enumerate(self._indexes(values)):
            lowered = self.counts[row, idx].astype(np.int16) - 1
            self.counts[row, idx] = np.maximum(lowered, 0).astype(np.uint8)

    def estimate(self, checksums: np.ndarray) -> np.ndarray:
        """Return the estimated count of each checksum."""
        import numpy as np

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
        head = _HEAD.pack(
            self.threshold,
            self.width_bits,
            len(self.counts),
            self.sample,
            self.length,
            self.inserted,
        )
        return SKETCH_FORMAT + head + self.counts.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> WindowSketch:
        """Load a sketch written by ``to_bytes``; raise ParameterError when malformed."""
        import numpy as np

        (threshold, width_bits, depth, sample, length, inserted), body = _parse(data)
        sketch = cls(threshold, width_bits=width_bits, depth=depth, sample=sample, length=length)
        sketch.counts = np.frombuffer(body, dtype=np.uint8).reshape(sketch.counts.shape).copy()
        sketch.inserted = inserted
        return sketch


class SketchView:
    """A saved ``WindowSketch`` read without numpy: estimates for window checksums given
    as Python ints (what the pure-Python ATA of ``p2pspam.fingerprint.reference`` has)."""

    def __init__(self, data: bytes) -> None:
        (threshold, width_bits, depth, _, length, _), body = _parse(data)
        self.threshold = threshold
        self.length = length
        self._shift = 64 - width_bits
        self._rows = [(m, r << width_bits) for r, m in enumerate(MULTIPLIERS[:depth])]
        self._counts = body

    def estimate(self, checksum: int) -> int:
        """The estimated count of one window checksum (as ``WindowSketch.estimate``)."""
        counts, shift = self._counts, self._shift
        return min(counts[base + (((checksum * m) & _MASK64) >> shift)] for m, base in self._rows)

    def excluder(self, threshold: int) -> PureExclude:
        """An exclusion predicate on Python ints: True for windows seen ``threshold``
        times or more (``exclude`` uses the sketch's own threshold)."""
        return PureExclude(self, threshold)

    @property
    def exclude(self) -> PureExclude:
        """The predicate with the sketch's own threshold."""
        return PureExclude(self, self.threshold)


class PureExclude:
    """An ATA exclusion predicate that works on any iterable of checksums (Python ints or
    a numpy array) and returns a list of booleans, so the pure-Python and the numpy ATA
    both accept it (``pure_python`` tells ``single_features`` it needs no numpy)."""

    pure_python = True

    def __init__(self, view: SketchView, threshold: int) -> None:
        self.view = view
        self.threshold = threshold

    def __call__(self, checksums: Iterable[int]) -> list[bool]:
        estimate, threshold = self.view.estimate, self.threshold
        return [estimate(int(h)) >= threshold for h in checksums]

"""Random text as in section 6.1 of the paper: characters drawn uniformly and
independently from a 32-symbol alphabet, the printable ASCII range 0x5F..0x7E (the 26
lowercase letters and ``_`{|}~``): 32 symbols so that random bytes map onto it without
bias, and a contiguous range so that the mapping is an add (generation runs at memory
speed). Every such text is already canonical (``canonical_text`` leaves it unchanged)."""

from __future__ import annotations

import numpy as np

_FIRST = 0x5F
ALPHABET = np.arange(_FIRST, _FIRST + 32, dtype=np.uint8)
_MASK = len(ALPHABET) - 1


def random_symbols(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Return uniform alphabet indices (uint8, 0..31) of the given shape."""
    count = int(np.prod(shape))
    raw = np.frombuffer(rng.bytes(count), dtype=np.uint8)
    return (raw & _MASK).reshape(shape)


def random_points(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Return uniform random alphabet characters as code points (uint8)."""
    points = random_symbols(rng, shape)
    points += _FIRST
    return points


def different_symbols(rng: np.random.Generator, original: np.ndarray) -> np.ndarray:
    """Return symbols each guaranteed to differ from the one it replaces."""
    offset = rng.integers(1, len(ALPHABET), size=original.shape, dtype=np.uint8)
    return ((original.astype(np.int16) + offset) & _MASK).astype(np.uint8)


def to_text(symbols: np.ndarray) -> str:
    """Return the text spelled by a row of alphabet indices."""
    return (symbols + _FIRST).astype(np.uint8).tobytes().decode("ascii")


def to_texts(symbols: np.ndarray) -> list[str]:
    """Return one text per row of a 2-D array of alphabet indices."""
    chars = (symbols + _FIRST).astype(np.uint8)
    return [row.tobytes().decode("ascii") for row in chars]

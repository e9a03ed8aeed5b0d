"""Random text as in section 6.1 of the paper: characters drawn uniformly and
independently from 26 lowercase letters and the space (already canonical for the
fingerprint code apart from the odd double space, which ATA does not care about)."""

from __future__ import annotations

import numpy as np

ALPHABET = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz ", dtype=np.uint8)


def random_symbols(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Return alphabet indices (uint8, 0..26) of the given shape."""
    return rng.integers(0, len(ALPHABET), size=shape, dtype=np.uint8)


def different_symbols(rng: np.random.Generator, original: np.ndarray) -> np.ndarray:
    """Return symbols each guaranteed to differ from the one it replaces."""
    offset = rng.integers(1, len(ALPHABET), size=original.shape, dtype=np.uint8)
    return ((original.astype(np.int16) + offset) % len(ALPHABET)).astype(np.uint8)


def to_text(symbols: np.ndarray) -> str:
    """Return the text spelled by a row of alphabet indices."""
    return ALPHABET[symbols].tobytes().decode("ascii")


def to_texts(symbols: np.ndarray) -> list[str]:
    """Return one text per row of a 2-D array of alphabet indices."""
    chars = ALPHABET[symbols]
    return [row.tobytes().decode("ascii") for row in chars]

"""ATA: Manber-style block fingerprints (SpamWatch paper, section 4.1).

Definition (normative text in ``docs/fingerprint-spec.md``): over the Unicode code points
c_0 .. c_{n-1} of the canonical text, the checksum of the window starting at i is

    h_i = sum_{j=0}^{L-1} c_{i+j} * B^(L-j)   (mod 2^64),   B = 0x9E3779B97F4A7C15

The features are the N highest distinct checksums, each bit-reversed (64 bits), listed in
decreasing order of checksum.

The vectorised pass uses prefix sums: with Binv = B^-1 mod 2^64 (B is odd) and
S_k = sum_{j<k} c_j * Binv^j, h_i = B^(i+L) * (S_{i+L} - S_i). numpy's uint64 arithmetic
wraps modulo 2^64, so this is exact. Long texts are processed in cache-sized chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from p2pspam.fingerprint.ata_params import (
    BASE,
    BASE_INV,
    DEFAULT_COUNT,
    DEFAULT_LENGTH,
    MASK64,
    MAX_COUNT,
    MAX_LENGTH,
    SCHEME_NAME,
    SPEC_VERSION,
    check_params,
)

_CHUNK = 1 << 16  # windows per vectorised step: keeps the working set in cache
_OVERSAMPLE = 3  # candidates kept per wanted feature before the exact selection
_GROUP_CHARS = 1 << 18  # characters per batched group

# An exclusion predicate: given raw window checksums h_i (uint64 array), returns a boolean
# array, True for the windows that must not be selected (e.g. windows the user keeps seeing
# in their own legitimate mail). Features are then the N highest distinct checksums among
# the other windows. Without a predicate the definition is unchanged.
Exclude = Callable[[np.ndarray], np.ndarray]

_BIT_REVERSE_BYTE = np.array([int(f"{b:08b}"[::-1], 2) for b in range(256)], dtype=np.uint8)


class _Powers:
    """Growing tables of B^k and Binv^k modulo 2^64 (shared by every call)."""

    def __init__(self) -> None:
        self.pos = np.ones(1, dtype=np.uint64)
        self.inv = np.ones(1, dtype=np.uint64)

    def ensure(self, n: int) -> None:
        if len(self.pos) >= n:
            return
        size = max(n, 2 * len(self.pos))
        self.pos = _power_table(BASE, size)
        self.inv = _power_table(BASE_INV, size)


def _power_table(base: int, size: int) -> np.ndarray:
    factors = np.full(size, base, dtype=np.uint64)
    factors[0] = 1
    with np.errstate(over="ignore"):
        return np.cumprod(factors, dtype=np.uint64)


_POWERS = _Powers()


def code_points(text: str) -> np.ndarray:
    """Return the Unicode code points of ``text`` as an unsigned integer array."""
    try:  # CPython stores Latin-1 text one byte a character: this is a copy
        return np.frombuffer(text.encode("latin-1"), dtype=np.uint8)
    except UnicodeEncodeError:
        return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


def window_checksums(points: np.ndarray, length: int) -> np.ndarray:
    """Return h_i for every window of ``length`` code points (empty if too short)."""
    n = len(points)
    windows = n - length + 1
    if windows <= 0:
        return np.empty(0, dtype=np.uint64)
    out = np.empty(windows, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for start in range(0, windows, _CHUNK):
            stop = min(start + _CHUNK, windows)
            _chunk_checksums(points[start : stop + length - 1], length, out[start:stop])
    return out


def _chunk_checksums(points: np.ndarray, length: int, out: np.ndarray) -> None:
    # Positions are taken relative to the chunk start: h_i does not depend on where the
    # window sits, only on its code points.
    m = len(points)
    _POWERS.ensure(m + 1)
    prefix = np.empty(m + 1, dtype=np.uint64)
    prefix[0] = 0
    terms = points * _POWERS.inv[:m]
    # Signed accumulation is faster in numpy and wraps identically modulo 2^64.
    np.cumsum(terms.view(np.int64), out=prefix[1:].view(np.int64))
    np.subtract(prefix[length:], prefix[: m + 1 - length], out=out)
    out *= _POWERS.pos[length : m + 1]


def bit_reverse64(values: np.ndarray) -> np.ndarray:
    """Return each uint64 with its 64 bits in reverse order."""
    swapped = np.ascontiguousarray(values, dtype=np.uint64).byteswap()
    return _BIT_REVERSE_BYTE[swapped.view(np.uint8)].view(np.uint64)


def top_distinct(checksums: np.ndarray, count: int) -> np.ndarray:
    """Return the ``count`` highest distinct values of ``checksums``, highest first."""
    if len(checksums) == 0:
        return checksums
    want = min(len(checksums), count * _OVERSAMPLE)
    while True:
        if want >= len(checksums):
            best = np.unique(checksums)[::-1]
            return best[:count]
        part = np.partition(checksums, len(checksums) - want)[len(checksums) - want :]
        best = np.unique(part)[::-1]
        if len(best) >= count:
            return best[:count]
        want *= 4


def ata_features(
    text: str,
    length: int = DEFAULT_LENGTH,
    count: int = DEFAULT_COUNT,
    exclude: Exclude | None = None,
) -> list[int]:
    """Return the ATA features of canonical text (empty when shorter than ``length``);
    windows for which ``exclude`` is True are never selected."""
    check_params(length, count)
    hashes = window_checksums(code_points(text), length)
    want = count * _OVERSAMPLE
    if len(hashes) > want:
        # Keep the checksums above a threshold expected to pass about ``want`` of them;
        # too few distinct survivors means redoing it exactly, so luck never matters.
        values = hashes[hashes >= np.uint64((1.0 - want / len(hashes)) * 2.0**64)]
        if exclude is not None and len(values):
            values = values[~np.asarray(exclude(values), dtype=bool)]
        best = np.unique(values)
        if len(best) >= count:
            return bit_reverse64(best[::-1][:count]).tolist()
    return exact_features(text, length, count, exclude)


def exact_features(
    text: str,
    length: int = DEFAULT_LENGTH,
    count: int = DEFAULT_COUNT,
    exclude: Exclude | None = None,
) -> list[int]:
    """Return the ATA features by a full selection over all checksums (the reference
    path; ``ata_features`` gives the same result faster)."""
    check_params(length, count)
    checksums = window_checksums(code_points(text), length)
    if exclude is not None and len(checksums):
        checksums = checksums[~np.asarray(exclude(checksums), dtype=bool)]
    selected = top_distinct(checksums, count)
    return [int(v) for v in bit_reverse64(selected)]


def ata_features_batch(
    texts: Sequence[str],
    length: int = DEFAULT_LENGTH,
    count: int = DEFAULT_COUNT,
    exclude: Exclude | None = None,
) -> list[list[int]]:
    """Return the ATA features of many canonical texts in a few numpy passes; equal to
    ``[ata_features(t, length, count, exclude) for t in texts]``."""
    check_params(length, count)
    result: list[list[int]] = []
    group_start, group_chars = 0, 0
    for i, text in enumerate(texts):
        group_chars += len(text)
        if group_chars >= _GROUP_CHARS:
            result.extend(_batch_group(texts[group_start : i + 1], length, count, exclude))
            group_start, group_chars = i + 1, 0
    result.extend(_batch_group(texts[group_start:], length, count, exclude))
    return result


def _batch_group(
    texts: Sequence[str], length: int, count: int, exclude: Exclude | None = None
) -> list[list[int]]:
    """Fingerprint a group of texts whose total size fits in the CPU cache."""
    if not texts:
        return []
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    starts = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    hashes = window_checksums(code_points("".join(texts)), length)
    windows = np.maximum(lengths - length + 1, 0)
    # Keep about count * _OVERSAMPLE checksums per message: those above a threshold
    # chosen from its number of windows (checksums are close to uniform). A message
    # left with too few is redone exactly, so the result never depends on luck.
    keep_fraction = np.minimum(1.0, (count * _OVERSAMPLE) / np.maximum(windows, 1))
    thresholds = np.where(keep_fraction >= 1.0, 0.0, (1.0 - keep_fraction) * 2.0**64).astype(
        np.uint64
    )
    per_position = np.repeat(thresholds, lengths)[: len(hashes)]
    cand = np.flatnonzero(hashes >= per_position)
    owner = np.searchsorted(starts, cand, side="right") - 1
    valid = cand - starts[owner] < windows[owner]  # windows across message borders
    cand, owner = cand[valid], owner[valid]
    values = hashes[cand]
    order = np.lexsort((~values, owner))  # by message, then checksum descending
    values, owner = values[order], owner[order]
    fresh = np.ones(len(values), dtype=bool)
    fresh[1:] = (values[1:] != values[:-1]) | (owner[1:] != owner[:-1])
    values, owner = values[fresh], owner[fresh]
    if exclude is not None and len(values):
        keep = ~np.asarray(exclude(values), dtype=bool)
        values, owner = values[keep], owner[keep]
    first = np.searchsorted(owner, np.arange(len(texts)), side="left").tolist()
    last = np.searchsorted(owner, np.arange(len(texts)), side="right").tolist()
    reversed_values = bit_reverse64(values).tolist()
    exhaustive = (thresholds == 0).tolist()
    result: list[list[int]] = []
    for i, text in enumerate(texts):
        got = last[i] - first[i]
        if got >= count or exhaustive[i]:
            result.append(reversed_values[first[i] : first[i] + min(got, count)])
        else:
            result.append(exact_features(text, length, count, exclude))
    return result


# Re-exported so that ``from p2pspam.fingerprint.ata import AtaScheme`` keeps working.
from p2pspam.fingerprint.ata_scheme import AtaScheme  # noqa: E402

__all__ = [
    "BASE",
    "BASE_INV",
    "DEFAULT_COUNT",
    "DEFAULT_LENGTH",
    "MASK64",
    "MAX_COUNT",
    "MAX_LENGTH",
    "SCHEME_NAME",
    "SPEC_VERSION",
    "AtaScheme",
    "Exclude",
    "ata_features",
    "ata_features_batch",
    "bit_reverse64",
    "check_params",
    "code_points",
    "exact_features",
    "top_distinct",
    "window_checksums",
]

"""A straightforward pure-Python ATA: one rolling-hash step per character.

It is the executable reading of ``docs/fingerprint-spec.md`` section 3, independent of
the numpy implementation in ``ata.py`` (it imports no numpy); the tests check one against
the other, the benchmark uses it as the baseline, and one-message processes use it to
avoid importing numpy.
"""

from __future__ import annotations

import heapq

from p2pspam.fingerprint.ata_params import BASE, DEFAULT_COUNT, DEFAULT_LENGTH, check_params

_MASK = (1 << 64) - 1


def reverse_bits64(value: int) -> int:
    """Return the 64-bit ``value`` with its bits in reverse order."""
    return int(f"{value:064b}"[::-1], 2)


def reference_checksums(text: str, length: int = DEFAULT_LENGTH) -> list[int]:
    """Return h_i for every window of ``length`` code points, by the rolling recurrence."""
    check_params(length, DEFAULT_COUNT)
    points = [ord(ch) for ch in text]
    if len(points) < length:
        return []
    base_top = pow(BASE, length + 1, 1 << 64)
    h = 0
    for j in range(length):
        h = (h + points[j] * pow(BASE, length - j, 1 << 64)) & _MASK
    out = [h]
    for i in range(len(points) - length):
        h = (BASE * h - points[i] * base_top + points[i + length] * BASE) & _MASK
        out.append(h)
    return out


def reference_features(
    text: str, length: int = DEFAULT_LENGTH, count: int = DEFAULT_COUNT
) -> list[int]:
    """Return the ATA features of canonical text, computed one character at a time."""
    check_params(length, count)
    top = heapq.nlargest(count, set(reference_checksums(text, length)))
    return [reverse_bits64(v) for v in top]

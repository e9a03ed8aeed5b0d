"""A straightforward pure-Python ATA: one rolling-hash step per character.

It is the executable reading of ``docs/fingerprint-spec.md`` section 3, independent of
the numpy implementation in ``ata.py`` (it imports no numpy); the tests check one against
the other, the benchmark uses it as the baseline, and one-message processes use it to
avoid importing numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from p2pspam.fingerprint.ata_params import BASE, DEFAULT_COUNT, DEFAULT_LENGTH, check_params

_MASK = (1 << 64) - 1

# An exclusion predicate on Python ints: given raw window checksums h_i, True for the
# windows that must not be selected (the same meaning as ``ata.Exclude``).
PureExclude = Callable[[Iterable[int]], Sequence[bool]]


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
    text: str,
    length: int = DEFAULT_LENGTH,
    count: int = DEFAULT_COUNT,
    exclude: PureExclude | None = None,
) -> list[int]:
    """Return the ATA features of canonical text, computed one character at a time;
    windows for which ``exclude`` is True are never selected."""
    check_params(length, count)
    ranked = sorted(set(reference_checksums(text, length)), reverse=True)
    if exclude is None:
        return [reverse_bits64(v) for v in ranked[:count]]
    top: list[int] = []
    start = 0
    while len(top) < count and start < len(ranked):
        # ask about a few candidates at a time: most windows are never looked at
        batch = ranked[start : start + 2 * count]
        start += len(batch)
        top += [v for v, excluded in zip(batch, exclude(batch), strict=True) if not excluded]
    return [reverse_bits64(v) for v in top[:count]]

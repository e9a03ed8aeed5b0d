"""The ATA scheme's constants and parameter rules (no numpy: cheap to import)."""

from __future__ import annotations

from p2pspam.errors import ParameterError

BASE = 0x9E3779B97F4A7C15
BASE_INV = pow(BASE, -1, 1 << 64)
MASK64 = (1 << 64) - 1

DEFAULT_LENGTH = 50
DEFAULT_COUNT = 10
MAX_LENGTH = 4096
MAX_COUNT = 256
SCHEME_NAME = "ata"
SPEC_VERSION = 1


def check_params(length: int, count: int) -> None:
    """Raise ParameterError unless 1 <= length <= 4096 and 1 <= count <= 256."""
    if not isinstance(length, int) or not 1 <= length <= MAX_LENGTH:
        raise ParameterError(f"ATA window length L must be 1..{MAX_LENGTH}, got {length!r}")
    if not isinstance(count, int) or not 1 <= count <= MAX_COUNT:
        raise ParameterError(f"ATA feature count N must be 1..{MAX_COUNT}, got {count!r}")

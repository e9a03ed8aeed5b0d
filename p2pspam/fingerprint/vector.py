"""The feature vector: what a scheme computes from a message and what the network stores."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

GUID_BYTES = 20  # keys in the DHT are 160-bit
FEATURE_BITS = 64


def guid_of(canonical: str) -> bytes:
    """Return the GUID of a message: the first 160 bits of SHA-256 of its canonical text
    encoded as UTF-8."""
    return hashlib.sha256(canonical.encode("utf-8")).digest()[:GUID_BYTES]


def feature_hex(feature: int) -> str:
    """Return a feature as 16 lowercase hex digits."""
    return f"{feature:016x}"


@dataclass(frozen=True, slots=True)
class FeatureVector:
    """A message's features under one scheme, with the parameters that produced them.

    ``namespace`` names the feature space: two vectors can share features only when their
    namespaces are equal (same scheme, same parameters that change feature values)."""

    scheme: str
    namespace: str
    params: Mapping[str, int] = field(hash=False)
    features: tuple[int, ...]
    guid: bytes
    chars: int
    note: str | None = None

    def overlap(self, other: FeatureVector) -> int:
        """Return how many features this vector shares with ``other`` (0 across namespaces)."""
        if self.namespace != other.namespace:
            return 0
        return len(set(self.features) & set(other.features))

    def to_json(self, source: str) -> dict[str, Any]:
        """Return the JSON object that ``p2pspam fingerprint --json`` prints."""
        return {
            "source": source,
            "scheme": self.scheme,
            "params": dict(self.params),
            "guid": self.guid.hex(),
            "features": [feature_hex(f) for f in self.features],
            "chars": self.chars,
            "note": self.note,
        }

"""The ATA scheme object: parameters, namespace, and vectors of canonical bodies.

Importing this module does not import numpy. A single short message is fingerprinted by
the pure-Python reference when numpy is not loaded yet (about 2 ms for 5 KB, against
60-170 ms to import numpy), which keeps one-message processes such as ``agent filter``
fast; both paths compute the same features (tested).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from p2pspam.fingerprint.ata_params import (
    DEFAULT_COUNT,
    DEFAULT_LENGTH,
    SCHEME_NAME,
    SPEC_VERSION,
    check_params,
)
from p2pspam.fingerprint.normalize import CanonicalBody
from p2pspam.fingerprint.vector import FeatureVector, guid_of

PURE_PYTHON_MAX_CHARS = 16_384

Exclude = Callable[[Any], Any]


def single_features(
    text: str, length: int, count: int, exclude: Exclude | None = None
) -> list[int]:
    """Return the ATA features of one canonical text by the cheapest exact path (an
    ``exclude`` with a true ``pure_python`` attribute works on Python ints and returns a
    sequence of booleans, so the pure-Python path can use it)."""
    pure = exclude is None or getattr(exclude, "pure_python", False)
    if pure and "numpy" not in sys.modules and len(text) <= PURE_PYTHON_MAX_CHARS:
        from p2pspam.fingerprint.reference import reference_features

        return reference_features(text, length, count, exclude)
    from p2pspam.fingerprint.ata import ata_features

    return ata_features(text, length, count, exclude)


@dataclass(frozen=True, slots=True)
class AtaScheme:
    """The ATA scheme with window length L and feature count N."""

    length: int = DEFAULT_LENGTH
    count: int = DEFAULT_COUNT
    default_thres: int = 3

    def __post_init__(self) -> None:
        check_params(self.length, self.count)

    @property
    def name(self) -> str:
        """The scheme name carried with every vector."""
        return SCHEME_NAME

    @property
    def namespace(self) -> str:
        """The feature space: vectors match only within one namespace (N does not change
        feature values, so it is not part of it)."""
        return f"{SCHEME_NAME}/{SPEC_VERSION}/L={self.length}"

    @property
    def params(self) -> dict[str, int]:
        """The parameters that travel with every vector."""
        return {"L": self.length, "N": self.count}

    def _vector(self, body: CanonicalBody, features: list[int]) -> FeatureVector:
        note = body.note
        if note is None and len(body.text) < self.length:
            note = f"shorter than L={self.length} characters ({len(body.text)})"
        return FeatureVector(
            scheme=self.name,
            namespace=self.namespace,
            params=self.params,
            features=tuple(features),
            guid=guid_of(body.text),
            chars=len(body.text),
            note=note,
        )

    def vector(self, body: CanonicalBody, exclude: Exclude | None = None) -> FeatureVector:
        """Return the feature vector of a canonical body (``exclude``: windows never
        selected, see ``Exclude``)."""
        return self._vector(body, single_features(body.text, self.length, self.count, exclude))

    def vectors(
        self, bodies: Sequence[CanonicalBody], exclude: Exclude | None = None
    ) -> list[FeatureVector]:
        """Return the feature vectors of many canonical bodies (one batched pass)."""
        if len(bodies) == 1:
            return [self.vector(bodies[0], exclude)]
        from p2pspam.fingerprint.ata import ata_features_batch

        batch = ata_features_batch([b.text for b in bodies], self.length, self.count, exclude)
        return [self._vector(b, f) for b, f in zip(bodies, batch, strict=True)]

"""Small shared pieces of the related-work schemes: parameter checks, 64-bit hashes and
building a feature vector."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from p2pspam.errors import ParameterError
from p2pspam.fingerprint.normalize import CanonicalBody
from p2pspam.fingerprint.vector import FeatureVector, guid_of


def int_param(scheme: str, name: str, value: Any, low: int, high: int) -> int:
    """Return ``value`` as an int in [low, high], or raise ParameterError naming it."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ParameterError(f"{scheme}: {name} must be an integer {low}..{high}, got {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise ParameterError(
            f"{scheme}: {name} must be an integer {low}..{high}, got {value!r}"
        ) from None
    if (number != value and not isinstance(value, str)) or not low <= number <= high:
        raise ParameterError(f"{scheme}: {name} must be an integer {low}..{high}, got {value!r}")
    return number


def reject_extra(scheme: str, extra: dict[str, Any], allowed: str) -> None:
    """Raise ParameterError when ``extra`` holds parameters the scheme does not take."""
    given = sorted(k for k, v in extra.items() if v is not None)
    if not given:
        return
    flags = ", ".join("--" + k if k in ("length", "count") else k for k in given)
    raise ParameterError(
        f"scheme {scheme} does not take {flags}; its parameters are {allowed} "
        f"(give them as --param KEY=VALUE)"
    )


def hash64(data: bytes) -> int:
    """Return the first 8 bytes of SHA-256 of ``data`` as a big-endian integer."""
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big")


def build_vector(
    name: str,
    namespace: str,
    params: Mapping[str, int],
    body: CanonicalBody,
    features: Iterable[int],
    note: str | None,
) -> FeatureVector:
    """Return the vector of ``body`` (its own note, e.g. no text body, wins over ``note``)."""
    return FeatureVector(
        scheme=name,
        namespace=namespace,
        params=params,
        features=tuple(features),
        guid=guid_of(body.text),
        chars=len(body.text),
        note=body.note or note,
    )

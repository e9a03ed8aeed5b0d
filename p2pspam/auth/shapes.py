"""What a vote's feature vector must look like under the scheme it claims.

A checker receives (namespace, params, features) and returns None when they are
consistent or a sentence saying what is wrong (the verifier rejects with "bad_vector").
ATA is built in; a new scheme registers its checker with ``register_shape`` in the module
that defines it, and every peer must run a version that knows the scheme (votes under an
unknown scheme are refused rather than stored unchecked).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache

from p2pspam.errors import ParameterError
from p2pspam.fingerprint import ata

ShapeCheck = Callable[[str, Mapping[str, int], tuple[int, ...]], str | None]

_CHECKS: dict[str, ShapeCheck] = {}


def register_shape(scheme: str, check: ShapeCheck) -> None:
    """Make votes under ``scheme`` acceptable when ``check`` finds nothing wrong."""
    _CHECKS[scheme] = check


def shape_error(
    scheme: str, namespace: str, params: Mapping[str, int], features: tuple[int, ...]
) -> str | None:
    """Return None when the vector fits the scheme's shape, else what is wrong."""
    check = _CHECKS.get(scheme)
    if check is None:
        return f"unknown scheme {scheme!r} (known: {', '.join(sorted(_CHECKS))})"
    if len(set(features)) != len(features):
        return "the features are not distinct"
    return check(namespace, params, features)


@lru_cache(maxsize=64)
def _ata_namespace(length: int, count: int) -> str | None:
    try:
        return ata.AtaScheme(length=length, count=count).namespace
    except ParameterError:
        return None


def _check_ata(namespace: str, params: Mapping[str, int], features: tuple[int, ...]) -> str | None:
    if set(params) != {"L", "N"}:
        return f"ata takes parameters L and N, got {sorted(params)}"
    length, count = params["L"], params["N"]
    expected = _ata_namespace(length, count)
    if expected is None:
        return (
            f"ata parameters out of range: L={length} (1..{ata.MAX_LENGTH}), "
            f"N={count} (1..{ata.MAX_COUNT})"
        )
    if namespace != expected:
        return f"namespace {namespace!r} does not match ata L={length} (expected {expected!r})"
    if len(features) > count:
        return f"{len(features)} features, ata N={count} allows at most {count}"
    return None


register_shape(ata.SCHEME_NAME, _check_ata)

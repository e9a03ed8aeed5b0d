"""What a vote's feature vector must look like under the scheme it claims.

For each known scheme the vote's parameters rebuild the scheme object (so the scheme's own
range checks apply); the vote is consistent when the rebuilt scheme has exactly these
parameters and this namespace, and the vector has at most as many features as the scheme
produces (ATA and winnow: N; I-Match: K + 1; LSH: L), all distinct. Anything else is
refused with "bad_vector" — including a scheme this peer does not know, rather than
storing a vector nobody checked.

A new scheme registers a checker with ``register_shape`` (it receives namespace, params
and features and returns None or what is wrong).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from p2pspam.errors import ParameterError

ShapeCheck = Callable[[str, Mapping[str, int], tuple[int, ...]], str | None]
# A builder turns vote parameters into (scheme object, most features a vector may have).
Builder = Callable[[Mapping[str, int]], tuple[Any, int]]


def _ata(p: Mapping[str, int]) -> tuple[Any, int]:
    from p2pspam.fingerprint.ata import AtaScheme

    return AtaScheme(length=p["L"], count=p["N"]), p["N"]


def _winnow(p: Mapping[str, int]) -> tuple[Any, int]:
    from p2pspam.fingerprint.winnow import WinnowScheme

    return WinnowScheme(window=p["w"], count=p["N"]), p["N"]


def _imatch(p: Mapping[str, int]) -> tuple[Any, int]:
    from p2pspam.fingerprint.imatch import IMatchScheme

    scheme = IMatchScheme(
        lexicons_count=p["K"],
        p_pct=p["p_pct"],
        min_terms=p["min_terms"],
        min_ratio_pct=p["min_ratio_pct"],
        seed=p["seed"],
    )
    return scheme, p["K"] + 1


def _lsh(p: Mapping[str, int]) -> tuple[Any, int]:
    from p2pspam.fingerprint.lsh import LshParams, LshScheme

    return LshScheme(LshParams(**p)), p["L"]


_BUILDERS: dict[str, tuple[frozenset[str], Builder]] = {
    "ata": (frozenset({"L", "N"}), _ata),
    "winnow": (frozenset({"w", "N"}), _winnow),
    "imatch": (frozenset({"K", "p_pct", "min_terms", "min_ratio_pct", "seed"}), _imatch),
    "lsh": (frozenset({"n", "w", "q1", "q2", "r", "K", "L", "seed"}), _lsh),
}
_CHECKS: dict[str, ShapeCheck] = {}


def register_shape(scheme: str, check: ShapeCheck) -> None:
    """Make votes under ``scheme`` acceptable when ``check`` finds nothing wrong."""
    _CHECKS[scheme] = check


def known_schemes() -> list[str]:
    """Return the schemes whose votes can be accepted."""
    return sorted(set(_BUILDERS) | set(_CHECKS))


def shape_error(
    scheme: str, namespace: str, params: Mapping[str, int], features: tuple[int, ...]
) -> str | None:
    """Return None when the vector fits the scheme's shape, else what is wrong."""
    if len(set(features)) != len(features):
        return "the features are not distinct"
    check = _CHECKS.get(scheme)
    if check is not None:
        return check(namespace, params, features)
    if scheme not in _BUILDERS:
        return f"unknown scheme {scheme!r} (known: {', '.join(known_schemes())})"
    expected = _expected(scheme, tuple(sorted(params.items())))
    if isinstance(expected, str):
        return expected
    expected_namespace, most = expected
    if namespace != expected_namespace:
        return f"namespace {namespace!r} does not match these {scheme} parameters " + (
            f"(expected {expected_namespace!r})"
        )
    if len(features) > most:
        shown = " ".join(f"{k}={v}" for k, v in sorted(params.items()))
        return f"{len(features)} features, {scheme} with {shown} makes at most {most}"
    return None


@lru_cache(maxsize=256)
def _expected(scheme: str, params: tuple[tuple[str, int], ...]) -> tuple[str, int] | str:
    """Return (namespace, most features) of a scheme with ``params``, or what is wrong."""
    names, build = _BUILDERS[scheme]
    given = dict(params)
    if set(given) != names:
        return f"{scheme} takes parameters {sorted(names)}, got {sorted(given)}"
    try:
        built, most = build(given)
    except ParameterError as exc:
        return f"{scheme} parameters out of range: {exc}"
    if dict(built.params) != given:
        return f"{scheme} parameters {given} are not the scheme's own {dict(built.params)}"
    return built.namespace, most

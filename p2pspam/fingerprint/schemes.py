"""The registry of fingerprint schemes: a name and parameters to a scheme object."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from p2pspam.errors import ParameterError
from p2pspam.fingerprint.ata_scheme import AtaScheme
from p2pspam.fingerprint.normalize import CanonicalBody
from p2pspam.fingerprint.vector import FeatureVector


class Scheme(Protocol):
    """What every fingerprint scheme offers."""

    @property
    def name(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def params(self) -> dict[str, int]: ...
    @property
    def default_thres(self) -> int: ...
    def vector(self, body: CanonicalBody) -> FeatureVector: ...
    def vectors(self, bodies: Sequence[CanonicalBody]) -> list[FeatureVector]: ...


def _ata(length: int | None = None, count: int | None = None, **extra: Any) -> Scheme:
    if extra:
        raise ParameterError(f"scheme ata takes --length and --count only, not {sorted(extra)}")
    kwargs = {k: v for k, v in (("length", length), ("count", count)) if v is not None}
    return AtaScheme(**kwargs)


def _lazy(target: str) -> Callable[..., Scheme]:
    """Return a factory that imports ``module:function`` on first call (the related-work
    schemes load lexicons and numpy; a process using only ATA should not pay for them)."""
    module_name, _, function = target.partition(":")

    def factory(**params: Any) -> Scheme:
        return getattr(importlib.import_module(module_name), function)(**params)

    return factory


_FACTORIES: dict[str, Callable[..., Scheme]] = {
    "ata": _ata,
    "imatch": _lazy("p2pspam.fingerprint.imatch:make_imatch"),
    "winnow": _lazy("p2pspam.fingerprint.winnow:make_winnow"),
    "lsh": _lazy("p2pspam.fingerprint.lsh:make_lsh"),
}


def register_scheme(name: str, factory: Callable[..., Scheme]) -> None:
    """Make a scheme available by name (factories take the CLI parameters as keywords)."""
    _FACTORIES[name] = factory


def scheme_names() -> list[str]:
    """Return the names of the known schemes."""
    return sorted(_FACTORIES)


def get_scheme(name: str, **params: Any) -> Scheme:
    """Return the scheme called ``name`` with the given parameters (None = default)."""
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise ParameterError(
            f"unknown scheme {name!r}; known schemes: {', '.join(scheme_names())}"
        ) from None
    return factory(**params)

"""Text normalisation and feature-vector schemes (pure: no sockets, files or clocks).

Names are loaded on first use, so that importing one light module (say ``normalize``)
does not pull in numpy; one-message processes such as ``agent filter`` depend on that.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "AtaScheme": "p2pspam.fingerprint.ata_scheme",
    "ata_features": "p2pspam.fingerprint.ata",
    "ata_features_batch": "p2pspam.fingerprint.ata",
    "CanonicalBody": "p2pspam.fingerprint.normalize",
    "canonical_body": "p2pspam.fingerprint.normalize",
    "canonical_text": "p2pspam.fingerprint.normalize",
    "get_scheme": "p2pspam.fingerprint.schemes",
    "scheme_names": "p2pspam.fingerprint.schemes",
    "FeatureVector": "p2pspam.fingerprint.vector",
    "guid_of": "p2pspam.fingerprint.vector",
}

if TYPE_CHECKING:
    from p2pspam.fingerprint.ata import ata_features, ata_features_batch
    from p2pspam.fingerprint.ata_scheme import AtaScheme
    from p2pspam.fingerprint.normalize import CanonicalBody, canonical_body, canonical_text
    from p2pspam.fingerprint.schemes import get_scheme, scheme_names
    from p2pspam.fingerprint.vector import FeatureVector, guid_of


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'p2pspam.fingerprint' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "AtaScheme",
    "CanonicalBody",
    "FeatureVector",
    "ata_features",
    "ata_features_batch",
    "canonical_body",
    "canonical_text",
    "get_scheme",
    "guid_of",
    "scheme_names",
]

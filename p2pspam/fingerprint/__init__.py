"""Text normalisation and feature-vector schemes (pure: no sockets, files or clocks)."""

from p2pspam.fingerprint.ata import AtaScheme, ata_features, ata_features_batch
from p2pspam.fingerprint.normalize import CanonicalBody, canonical_body, canonical_text
from p2pspam.fingerprint.schemes import get_scheme, scheme_names
from p2pspam.fingerprint.vector import FeatureVector, guid_of

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

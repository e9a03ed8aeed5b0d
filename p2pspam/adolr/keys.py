"""DHT keys of the approximate DOLR: where a feature object and an object record live.

A feature's key is the first 160 bits of SHA-256 over a domain-separation prefix, the
feature namespace and the feature value, so features of different schemes or parameters
never share a key. An object's key is its GUID (already a 160-bit hash)."""

from __future__ import annotations

import hashlib
from functools import lru_cache

from p2pspam.errors import ParameterError
from p2pspam.fingerprint.vector import GUID_BYTES

KEY_BYTES = GUID_BYTES
FEATURE_MAX = (1 << 64) - 1
MAX_NAMESPACE_BYTES = 128
_PREFIX = b"p2pspam/feature\0"


def check_namespace(namespace: str) -> bytes:
    """Return ``namespace`` as UTF-8 after checking it is a non-empty printable string of at
    most MAX_NAMESPACE_BYTES bytes without NUL; raise ParameterError otherwise."""
    if not isinstance(namespace, str) or not namespace:
        raise ParameterError(f"namespace must be a non-empty string, got {namespace!r}")
    if not namespace.isprintable():
        raise ParameterError(f"namespace must be printable, got {namespace!r}")
    try:
        data = namespace.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ParameterError(f"namespace is not valid Unicode: {namespace!r}") from exc
    if len(data) > MAX_NAMESPACE_BYTES:
        raise ParameterError(
            f"namespace is {len(data)} bytes in UTF-8, at most {MAX_NAMESPACE_BYTES} allowed"
        )
    return data


def check_feature(feature: int) -> int:
    """Return ``feature`` after checking it is an unsigned 64-bit int; raise ParameterError."""
    if type(feature) is not int or not 0 <= feature <= FEATURE_MAX:
        raise ParameterError(f"a feature must be an integer in [0, 2**64), got {feature!r}")
    return feature


@lru_cache(maxsize=256)
def _namespace_hash(namespace: str) -> hashlib._Hash:
    return hashlib.sha256(_PREFIX + check_namespace(namespace) + b"\0")


def feature_key(namespace: str, feature: int) -> bytes:
    """Return the 20-byte DHT key of ``feature`` in ``namespace``: the first 160 bits of
    SHA-256(b"p2pspam/feature\\0" + namespace UTF-8 + b"\\0" + feature as 8 big-endian bytes)."""
    if type(namespace) is not str:
        raise ParameterError(f"namespace must be a non-empty string, got {namespace!r}")
    h = _namespace_hash(namespace).copy()
    h.update(check_feature(feature).to_bytes(8, "big"))
    return h.digest()[:KEY_BYTES]


def object_key(guid: bytes) -> bytes:
    """Return the DHT key of the object record of ``guid`` (the GUID itself, checked)."""
    if type(guid) is not bytes or len(guid) != KEY_BYTES:
        raise ParameterError(f"a GUID must be {KEY_BYTES} bytes, got {guid!r}")
    return guid

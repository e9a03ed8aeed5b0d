"""Strict msgpack decoding and the signed-envelope format shared by every signed object.

Every signed object of the auth layer travels as ``msgpack([body, signature])`` where
``body`` is the msgpack encoding (bin) of a fixed-order array and ``signature`` is a
64-byte Ed25519 signature over ``domain || body``. The domain string (one per object
kind) keeps a signature made for one kind from being accepted as another. Decoders
re-encode what they parsed and require the exact same bytes, so each object has one
encoding only.
"""

from __future__ import annotations

from typing import Any

import msgpack

SIGNATURE_BYTES = 64
PUBLIC_KEY_BYTES = 32
KEY_ID_BYTES = 8
MAX_TIME_MS = (1 << 53) - 1  # milliseconds since the epoch, exact in a float too
UINT64_MAX = (1 << 64) - 1


class DecodeError(ValueError):
    """Bytes that are not a well-formed object of the expected kind."""


def pack(obj: Any) -> bytes:
    """Return the canonical msgpack encoding of ``obj`` (bin for bytes, str for text)."""
    return msgpack.packb(obj, use_bin_type=True)


def unpack(data: bytes, max_len: int) -> Any:
    """Decode one msgpack object from ``data`` with every container and string length
    bounded by ``max_len``; raise DecodeError on anything but exactly one object."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise DecodeError(f"expected bytes, got {type(data).__name__}")
    try:
        return msgpack.unpackb(
            data,
            raw=False,
            use_list=True,
            strict_map_key=True,
            max_str_len=max_len,
            max_bin_len=max_len,
            max_array_len=max_len,
            max_map_len=max_len,
            max_ext_len=0,
        )
    except (ValueError, TypeError, OverflowError, msgpack.UnpackException) as exc:
        raise DecodeError(f"not a msgpack object ({type(exc).__name__})") from None


def expect_array(value: Any, length: int, what: str) -> list[Any]:
    """Return ``value`` if it is an array of exactly ``length`` items."""
    if not isinstance(value, list) or len(value) != length:
        raise DecodeError(f"{what} must be an array of {length} items")
    return value


def expect_int(value: Any, low: int, high: int, what: str) -> int:
    """Return ``value`` if it is an integer (not a boolean) in ``low..high``."""
    if type(value) is not int or not low <= value <= high:
        raise DecodeError(f"{what} must be an integer in {low}..{high}")
    return value


def expect_bytes(value: Any, what: str, length: int | None = None, max_len: int = 0) -> bytes:
    """Return ``value`` if it is binary of exactly ``length`` bytes (or at most ``max_len``)."""
    if not isinstance(value, bytes):
        raise DecodeError(f"{what} must be binary")
    if length is not None and len(value) != length:
        raise DecodeError(f"{what} must be {length} bytes, got {len(value)}")
    if length is None and len(value) > max_len:
        raise DecodeError(f"{what} must be at most {max_len} bytes")
    return value


def expect_str(value: Any, what: str, max_len: int) -> str:
    """Return ``value`` if it is text of 1..``max_len`` characters."""
    if not isinstance(value, str) or not 1 <= len(value) <= max_len:
        raise DecodeError(f"{what} must be text of 1..{max_len} characters")
    return value


def open_envelope(data: bytes, max_len: int, what: str) -> tuple[bytes, bytes]:
    """Split a signed envelope into (body, signature) and check it is canonical."""
    outer = expect_array(unpack(data, max_len), 2, what)
    body = expect_bytes(outer[0], f"{what} body", max_len=max_len)
    signature = expect_bytes(outer[1], f"{what} signature", SIGNATURE_BYTES)
    if pack([body, signature]) != bytes(data):
        raise DecodeError(f"{what} is not in canonical encoding")
    return body, signature


def seal(body: bytes, signature: bytes) -> bytes:
    """Return the envelope of ``body`` and its ``signature``."""
    return pack([body, signature])


def require_canonical(fields: list[Any], body: bytes, what: str) -> None:
    """Raise DecodeError unless ``fields`` encode to exactly ``body``."""
    if pack(fields) != body:
        raise DecodeError(f"{what} is not in canonical encoding")

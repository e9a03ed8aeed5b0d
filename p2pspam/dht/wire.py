"""The peer-to-peer datagram format, decoded with strict limits, and argument validation.

A datagram is ``kind (1 byte) | message id (20 bytes) | msgpack payload`` as in
``rpcudp``: kind ``0x00`` is a request whose payload is ``[rpc name, [args...]]``, kind
``0x01`` a response whose payload is the RPC's return value. Unlike ``rpcudp`` this codec
uses the C ``msgpack`` with explicit limits on sizes, lengths and nesting, and reports
anything it cannot accept as :class:`WireError` with a short ``reason`` used as a drop
counter name. Nothing here does I/O.
"""

from __future__ import annotations

import ipaddress
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import msgpack

REQUEST = 0x00
RESPONSE = 0x01
MSG_ID_BYTES = 20
HEADER_BYTES = 1 + MSG_ID_BYTES
MAX_DATAGRAM = 60_000  # below the 65,507-byte UDP payload limit
ID_BYTES = 20
MAX_FEATURES = 64
MAX_NAMESPACE = 64
MAX_CONTACTS = 40
MAX_TTL = 64
MAX_ITEMS = 64  # entries / records per store batch

_LIMITS = {
    "max_str_len": 4096,
    "max_bin_len": MAX_DATAGRAM,
    "max_array_len": 1024,
    "max_map_len": 64,
    "max_ext_len": 0,
}


class WireError(Exception):
    """A datagram or argument that must be dropped; ``reason`` names the drop counter."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Datagram:
    """One decoded datagram."""

    kind: int
    msg_id: bytes
    payload: Any


def pack(obj: Any) -> bytes:
    """Encode ``obj`` with msgpack (binary stays binary, strings UTF-8)."""
    return msgpack.packb(obj, use_bin_type=True)


def unpack(data: bytes) -> Any:
    """Decode one msgpack object under the wire limits, or raise :class:`WireError`."""
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=True, use_list=True, **_LIMITS)
    except msgpack.ExtraData as exc:
        raise WireError("trailing_bytes") from exc
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise WireError("bad_msgpack", type(exc).__name__) from exc
    except Exception as exc:  # the C decoder can raise others on hostile input
        raise WireError("bad_msgpack", type(exc).__name__) from exc


def encode_datagram(kind: int, msg_id: bytes, payload: Any) -> bytes:
    """Return the bytes of one datagram, or raise :class:`WireError` ("too_large")."""
    data = bytes((kind,)) + msg_id + pack(payload)
    if len(data) > MAX_DATAGRAM:
        raise WireError("too_large", f"{len(data)} bytes")
    return data


def decode_datagram(data: bytes) -> Datagram:
    """Split and decode a received datagram; raise :class:`WireError` when it is not one."""
    if len(data) > MAX_DATAGRAM:
        raise WireError("oversize")
    if len(data) <= HEADER_BYTES:
        raise WireError("undersize")
    kind = data[0]
    if kind not in (REQUEST, RESPONSE):
        raise WireError("bad_kind")
    payload = unpack(data[HEADER_BYTES:])
    return Datagram(kind, bytes(data[1:HEADER_BYTES]), payload)


def request_parts(payload: Any) -> tuple[str, list[Any]]:
    """Return ``(rpc name, args)`` of a request payload, or raise :class:`WireError`."""
    if not isinstance(payload, list) or len(payload) != 2:
        raise WireError("bad_shape")
    name, args = payload
    if not isinstance(name, str) or not isinstance(args, list):
        raise WireError("bad_shape")
    if not name.isidentifier() or len(name) > 32:
        raise WireError("unknown_rpc")
    return name, args


# -- argument checks (raise WireError("bad_args", ...)) ---------------------------------


def bad(detail: str) -> WireError:
    """Return the error for an argument that failed validation."""
    return WireError("bad_args", detail)


def node_id(value: Any) -> bytes:
    """Validate a 160-bit id given as 20 bytes."""
    if not isinstance(value, bytes) or len(value) != ID_BYTES:
        raise bad("id must be 20 bytes")
    return value


def integer(value: Any, low: int, high: int, what: str) -> int:
    """Validate an int in ``[low, high]`` (bools are not ints here)."""
    if type(value) is not int or not low <= value <= high:
        raise bad(f"{what} must be an integer in [{low}, {high}]")
    return value


def namespace(value: Any) -> str:
    """Validate a feature namespace such as ``ata/1/L=50``."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_NAMESPACE:
        raise bad("namespace must be a non-empty string of at most 64 characters")
    if not value.isprintable():
        raise bad("namespace must be printable")
    return value


def features(value: Any) -> tuple[int, ...]:
    """Validate a feature vector: 1..64 distinct unsigned 64-bit ints."""
    if not isinstance(value, list) or not 0 < len(value) <= MAX_FEATURES:
        raise bad(f"features must be a list of 1..{MAX_FEATURES} integers")
    out = tuple(integer(f, 0, (1 << 64) - 1, "feature") for f in value)
    if len(set(out)) != len(out):
        raise bad("features must be distinct")
    return out


def thres(value: Any, n_features: int) -> int:
    """Validate a match threshold ``0 < thres <= len(features)``."""
    return integer(value, 1, n_features, "thres")


def ttl(value: Any) -> int | None:
    """Validate a TTL in lookup rounds, or None for an exhaustive lookup."""
    return None if value is None else integer(value, 1, MAX_TTL, "ttl")


def blob(value: Any, max_len: int, what: str) -> bytes:
    """Validate a binary value of at most ``max_len`` bytes."""
    if not isinstance(value, bytes) or len(value) > max_len:
        raise bad(f"{what} must be at most {max_len} bytes")
    return value


def blob_list(value: Any, max_items: int, max_len: int, what: str) -> list[bytes]:
    """Validate a list of at most ``max_items`` binary values."""
    if not isinstance(value, list) or len(value) > max_items:
        raise bad(f"{what} must be a list of at most {max_items} items")
    return [blob(v, max_len, what) for v in value]


@lru_cache(maxsize=4096)
def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def contact(value: Any) -> tuple[bytes, str, int]:
    """Validate a contact ``[id, ip, port]`` as sent in find_node replies."""
    if not isinstance(value, list | tuple) or len(value) != 3:
        raise bad("contact must be [id, ip, port]")
    nid, ip, port = value
    node_id(nid)
    if not isinstance(ip, str) or len(ip) > 45 or not _is_ip(ip):
        raise bad("contact ip must be an IP address")
    integer(port, 1, 65535, "port")
    return nid, ip, port


def contacts(value: Any) -> list[tuple[bytes, str, int]]:
    """Validate a list of at most 40 contacts."""
    if not isinstance(value, list) or len(value) > MAX_CONTACTS:
        raise bad(f"contacts must be a list of at most {MAX_CONTACTS}")
    return [contact(c) for c in value]


def mapping(value: Any, what: str) -> dict[str, Any]:
    """Validate a map with string keys."""
    if not isinstance(value, dict):
        raise bad(f"{what} must be a map")
    return value


# -- per-source rate limit --------------------------------------------------------------


class TokenBuckets:
    """Per-source token buckets: ``rate`` datagrams per second with bursts of ``burst``.

    At most ``max_sources`` buckets are kept (least recently seen evicted), so a flood
    of spoofed source addresses costs bounded memory. ``now`` is in seconds."""

    def __init__(self, rate: float, burst: float, max_sources: int = 4096) -> None:
        self.rate = rate
        self.burst = burst
        self.max_sources = max_sources
        self._buckets: OrderedDict[Any, tuple[float, float]] = OrderedDict()

    def allow(self, source: Any, now: float) -> bool:
        """Take one token from ``source``'s bucket; False when it is empty."""
        tokens, last = self._buckets.pop(source, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        allowed = tokens >= 1.0
        if allowed:
            tokens -= 1.0
        self._buckets[source] = (tokens, now)
        while len(self._buckets) > self.max_sources:
            self._buckets.popitem(last=False)
        return allowed

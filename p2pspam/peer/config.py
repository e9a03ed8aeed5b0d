"""Peer configuration: defaults, ``peer.toml`` and command-line overrides.

``peer.toml`` (every key optional)::

    data_dir = "/var/lib/p2pspam"
    listen = "0.0.0.0:8468"          # UDP, peer-to-peer
    api = "127.0.0.1:8469"           # TCP, agent API
    api_allow = ["127.0.0.0/8", "::1/128", "10.1.0.0/16"]
    bootstrap = ["peer.example.org:8468"]
    authority_key = "/etc/p2pspam/authority.json"   # from `p2pspam authority export`
    peer_key = "/etc/p2pspam/node.peer"  # optional: closed federation (authority issue-peer)
    votes_per_hour = 200
    log_level = "info"

    [dht]
    ksize = 20
    alpha = 3
    replicas = 8
    republish_interval_s = 3600

    [defences]               # boilerplate discounts (defaults: p2pspam.defences)
    max_guids = 64           # a feature object with more distinct GUIDs does not count
    ham_guids = 1            # ... nor one holding this many ham-decided GUIDs (0: off)

Precedence: command-line flags, then the file, then the defaults.
"""

from __future__ import annotations

import ipaddress
import socket
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import platformdirs

from p2pspam.defences import DEFAULT_HAM_GUIDS, DEFAULT_MAX_GUIDS
from p2pspam.dht.node import NodeConfig
from p2pspam.errors import InputError, ParameterError

DEFAULT_UDP_PORT = 8468
DEFAULT_API_PORT = 8469
DEFAULT_LISTEN = f"0.0.0.0:{DEFAULT_UDP_PORT}"
DEFAULT_API = f"127.0.0.1:{DEFAULT_API_PORT}"
DEFAULT_ALLOW = ("127.0.0.0/8", "::1/128")
_DHT_KEYS = {"ksize", "alpha", "replicas", "republish_interval_s", "expire_interval_s"}
_DEFENCE_KEYS = {"max_guids", "ham_guids"}
_TOP_KEYS = {
    "data_dir",
    "listen",
    "api",
    "api_allow",
    "bootstrap",
    "authority_key",
    "peer_key",
    "votes_per_hour",
    "log_level",
    "dht",
    "defences",
}


def default_data_dir() -> Path:
    """The per-user data directory of the peer (platformdirs)."""
    return Path(platformdirs.user_data_dir("p2pspam")) / "peer"


def parse_hostport(
    text: str, default_port: int, what: str, resolve: bool = False
) -> tuple[str, int]:
    """Parse ``HOST:PORT``, ``[V6]:PORT``, ``HOST`` or ``:PORT``; raise ParameterError.
    With ``resolve``, a host name is resolved to an IP address."""
    text = text.strip()
    host, port_text = text, ""
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise ParameterError(f"{what}: unbalanced brackets in {text!r}")
        host, rest = text[1:end], text[end + 1 :]
        if rest and not rest.startswith(":"):
            raise ParameterError(f"{what}: expected [HOST]:PORT, got {text!r}")
        port_text = rest[1:]
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    port = default_port
    if port_text:
        if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
            raise ParameterError(f"{what}: port must be 0..65535, got {port_text!r}")
        port = int(port_text)
    host = host or "0.0.0.0"
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not resolve:
            raise ParameterError(f"{what}: {host!r} is not an IP address") from None
        try:
            host = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)[0][4][0]
        except OSError as exc:
            raise ParameterError(f"{what}: cannot resolve {host!r}: {exc}") from None
    return host, port


@dataclass(frozen=True, slots=True)
class PeerConfig:
    """The resolved configuration of ``p2pspam peer``."""

    data_dir: Path
    listen: tuple[str, int]
    api: tuple[str, int]
    api_allow: tuple[str, ...]
    bootstrap: tuple[tuple[str, int], ...]
    authority_key: Path | None
    peer_key: Path | None
    votes_per_hour: int
    log_level: str
    node: NodeConfig


def load_toml(path: Path) -> dict[str, Any]:
    """Read ``peer.toml``; raise InputError with the reason."""
    try:
        with path.open("rb") as fh:
            doc = tomllib.load(fh)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from None
    unknown = set(doc) - _TOP_KEYS
    if unknown:
        raise InputError(f"{path}: unknown keys {sorted(unknown)}")
    dht = doc.get("dht", {})
    if not isinstance(dht, dict) or set(dht) - _DHT_KEYS:
        raise InputError(f"{path}: [dht] accepts only {sorted(_DHT_KEYS)}")
    defences = doc.get("defences", {})
    if not isinstance(defences, dict) or set(defences) - _DEFENCE_KEYS:
        raise InputError(f"{path}: [defences] accepts only {sorted(_DEFENCE_KEYS)}")
    return doc


def _positive_int(value: Any, what: str) -> int:
    if type(value) is not int or value < 1:
        raise ParameterError(f"{what} must be a positive integer, got {value!r}")
    return value


def resolve(
    file: dict[str, Any],
    *,
    data_dir: str | None = None,
    listen: str | None = None,
    api: str | None = None,
    allow: list[str] | None = None,
    bootstrap: list[str] | None = None,
    authority_key: str | None = None,
    log_level: str | None = None,
    peer_key: str | None = None,
    max_guids: int | None = None,
    ham_guids: int | None = None,
) -> PeerConfig:
    """Merge flags over the file over the defaults."""
    dht = file.get("dht", {})
    node = NodeConfig()
    for name in ("ksize", "alpha", "replicas"):
        if name in dht:
            node = replace(node, **{name: _positive_int(dht[name], f"dht.{name}")})
    for name in ("republish_interval_s", "expire_interval_s"):
        if name in dht:
            value = dht[name]
            if not isinstance(value, int | float) or value <= 0:
                raise ParameterError(f"dht.{name} must be a positive number")
            node = replace(node, **{name: float(value)})
    defences = file.get("defences", {})
    limit = max_guids if max_guids is not None else defences.get("max_guids", DEFAULT_MAX_GUIDS)
    node = replace(node, max_guids=_positive_int(limit, "max_guids"))
    ham = ham_guids if ham_guids is not None else defences.get("ham_guids", DEFAULT_HAM_GUIDS)
    if type(ham) is not int or ham < 0:
        raise ParameterError(f"ham_guids must be an integer >= 0 (0: off), got {ham!r}")
    node = replace(node, ham_guids=ham or None)
    boot_specs = bootstrap if bootstrap else file.get("bootstrap", [])
    if not isinstance(boot_specs, list) or not all(isinstance(b, str) for b in boot_specs):
        raise ParameterError("bootstrap must be a list of HOST:PORT strings")
    allow_specs = allow if allow else file.get("api_allow", list(DEFAULT_ALLOW))
    key = authority_key or file.get("authority_key")
    level = (log_level or file.get("log_level") or "info").lower()
    if level not in ("debug", "info", "warning", "error"):
        raise ParameterError(f"log level must be debug, info, warning or error, got {level!r}")
    return PeerConfig(
        data_dir=Path(data_dir or file.get("data_dir") or default_data_dir()),
        listen=parse_hostport(
            listen or file.get("listen", DEFAULT_LISTEN), DEFAULT_UDP_PORT, "--listen"
        ),
        api=parse_hostport(api or file.get("api", DEFAULT_API), DEFAULT_API_PORT, "--api"),
        api_allow=tuple(allow_specs),
        bootstrap=tuple(
            parse_hostport(b, DEFAULT_UDP_PORT, "--bootstrap", resolve=True) for b in boot_specs
        ),
        authority_key=Path(key) if key else None,
        peer_key=Path(peer_key or file["peer_key"]) if (peer_key or file.get("peer_key")) else None,
        votes_per_hour=_positive_int(file.get("votes_per_hour", 200), "votes_per_hour"),
        log_level=level,
        node=node,
    )

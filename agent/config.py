"""The agent's configuration: the ``[agent]`` table of a TOML file.

Every key is optional; a missing key takes the default below. Example (the defaults)::

    [agent]
    peers = ["127.0.0.1:8469"]        # agent API addresses, tried in order (fail-over)
    credential = "<config dir>/user.key"  # the user's key file (p2pspam auth issue ...)
    connect_timeout = 2.0             # seconds per connection attempt
    request_timeout = 10.0            # seconds per request
    concurrency = 64                  # requests in flight for bulk work
    state_dir = "<state dir>"         # IMAP watcher state (SQLite)

    [agent.defences]                  # boilerplate defences (p2pspam.defences)
    quotes = true                     # drop quoted replies before fingerprinting
    signatures = true                 # drop the block after a "-- " line
    footers = true                    # drop recognisable list / newsletter footers
    sketch = true                     # never select windows seen in your kept mail
    sketch_file = "<state dir>/window-sketch.bin"
    sketch_threshold = 2              # ... seen in this many kept messages (checks)
    vote_sketch_threshold = 1         # ... seen this often (your spam votes)
    sketch_width_bits = 17            # file size: 3 * 2^bits bytes (384 KiB)

    [agent.policy]                    # the decision on a matched message's votes
    min_votes = 1                     # at least this many live spam + ham votes
    ratio = 0.5                       # spam if spam >= min_votes and
                                      # spam / (spam + ham) >= ratio (p2pspam.auth.policy)

    [[agent.schemes]]                 # one table per scheme; a message is spam when
    name = "ata"                      # any scheme finds a match whose votes say spam
    params = { length = 50, count = 10 }   # keywords of the scheme's factory
    thres = 3                         # features shared to match (default: the scheme's)
    ttl = 3                           # lookup rounds; omit for the peer's default

The default file is ``<platformdirs user config dir>/p2pspam/agent.toml``; a command's
``--config FILE`` replaces it. A missing default file means all defaults; a missing
``--config`` file is an error.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from agent.defences import DefenceSettings
from p2pspam.errors import ParameterError

APP_NAME = "p2pspam"
DEFAULT_PEERS = ("127.0.0.1:8469",)  # the peer daemon's default agent API
DEFAULT_CONNECT_TIMEOUT = 2.0
DEFAULT_REQUEST_TIMEOUT = 10.0
DEFAULT_CONCURRENCY = 64
DEFAULT_MIN_VOTES = 1
DEFAULT_RATIO = 0.5
CONFIG_ENV = "P2PSPAM_AGENT_CONFIG"


def _user_config_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME))


def _user_state_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_state_dir(APP_NAME))


def default_config_path() -> Path:
    """The config file used without ``--config``: $P2PSPAM_AGENT_CONFIG, else
    ``agent.toml`` in the platform's user config directory."""
    env = os.environ.get(CONFIG_ENV)
    return Path(env) if env else _user_config_dir() / "agent.toml"


_NO_PARAMS: Mapping[str, Any] = MappingProxyType({})


# Named tuples rather than dataclasses: ``agent filter`` loads this module in every
# delivery, and a named tuple class is ten times cheaper to create.
class SchemeSetting(NamedTuple):
    """One scheme the agent checks and votes with."""

    name: str = "ata"
    params: Mapping[str, Any] = _NO_PARAMS
    thres: int | None = None
    ttl: int | None = None

    def build(self) -> Any:
        """Return the scheme object (``p2pspam.fingerprint.schemes.get_scheme``)."""
        from p2pspam.fingerprint.schemes import get_scheme

        return get_scheme(self.name, **self.params)

    def effective_thres(self, scheme: Any) -> int:
        """THRES for ``scheme``: the configured value, else the scheme's default."""
        return self.thres if self.thres is not None else int(scheme.default_thres)


class AgentConfig(NamedTuple):
    """The effective agent settings (``config._replace(peers=...)`` for a variant)."""

    peers: tuple[str, ...] = DEFAULT_PEERS
    credential_file: Path | None = None  # None: the default, resolved only when used
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    concurrency: int = DEFAULT_CONCURRENCY
    state_directory: Path | None = None  # None: the default, resolved only when used
    min_votes: int = DEFAULT_MIN_VOTES
    ratio: float = DEFAULT_RATIO
    schemes: tuple[SchemeSetting, ...] = (SchemeSetting(),)
    defences: DefenceSettings = DefenceSettings()
    source: str = "built-in defaults"

    # The platform directories are looked up lazily: ``agent filter`` never needs them,
    # and platformdirs costs start-up time.
    @property
    def credential(self) -> Path:
        """The user's credential file."""
        return self.credential_file or _user_config_dir() / "user.key"

    @property
    def state_dir(self) -> Path:
        """Where the IMAP watcher keeps its state."""
        return self.state_directory or _user_state_dir()

    def to_dict(self) -> dict[str, Any]:
        """The settings as plain data (what ``agent config show`` prints)."""
        return {
            "source": self.source,
            "peers": list(self.peers),
            "credential": str(self.credential),
            "connect_timeout": self.connect_timeout,
            "request_timeout": self.request_timeout,
            "concurrency": self.concurrency,
            "state_dir": str(self.state_dir),
            "policy": {"min_votes": self.min_votes, "ratio": self.ratio},
            "schemes": [
                {"name": s.name, "params": dict(s.params), "thres": s.thres, "ttl": s.ttl}
                for s in self.schemes
            ],
            "defences": _defences_dict(self),
        }


def _defences_dict(config: AgentConfig) -> dict[str, Any]:
    from agent.defences import sketch_path

    d = config.defences
    return {
        "quotes": d.quotes,
        "signatures": d.signatures,
        "footers": d.footers,
        "sketch": d.sketch,
        "sketch_file": str(sketch_path(config)),
        "sketch_threshold": d.sketch_threshold,
        "vote_sketch_threshold": d.vote_sketch_threshold,
        "sketch_width_bits": d.sketch_width_bits,
        "sketch_max_bytes": d.sketch_bytes,
    }


def _bad(where: str, what: str) -> ParameterError:
    return ParameterError(f"{where}: {what}")


def _number(table: dict[str, Any], key: str, default: float, where: str, lo: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < lo:
        raise _bad(where, f"{key} must be a number >= {lo}, got {value!r}")
    return float(value)


def _int(table: dict[str, Any], key: str, default: int, where: str, lo: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise _bad(where, f"{key} must be an integer >= {lo}, got {value!r}")
    return value


def _path(value: Any, base: Path, where: str, key: str) -> Path:
    if not isinstance(value, str) or not value:
        raise _bad(where, f"{key} must be a path string, got {value!r}")
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path


def _scheme(raw: Any, where: str) -> SchemeSetting:
    if not isinstance(raw, dict):
        raise _bad(where, "each [[agent.schemes]] entry must be a table")
    unknown = set(raw) - {"name", "params", "thres", "ttl"}
    if unknown:
        raise _bad(where, f"unknown scheme keys {sorted(unknown)}")
    name = raw.get("name", "ata")
    params = raw.get("params", {})
    if not isinstance(name, str) or not name:
        raise _bad(where, f"scheme name must be a string, got {name!r}")
    if not isinstance(params, dict):
        raise _bad(where, f"scheme {name} params must be a table, got {params!r}")
    thres = raw.get("thres")
    ttl = raw.get("ttl")
    for key, value in (("thres", thres), ("ttl", ttl)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise _bad(where, f"scheme {name} {key} must be an integer, got {value!r}")
        if value is not None and value < 1:
            raise _bad(where, f"scheme {name} {key} must be >= 1, got {value}")
    setting = SchemeSetting(name, dict(params), thres, ttl)
    scheme = setting.build()  # unknown names and bad parameters fail here, with a reason
    if thres is not None and hasattr(scheme, "params"):
        count = scheme.params.get("N")
        if isinstance(count, int) and thres > count:
            raise _bad(where, f"scheme {name} thres {thres} exceeds its feature count {count}")
    return setting


_DEFENCE_FLAGS = ("quotes", "signatures", "footers", "sketch")
_DEFENCE_INTS = {
    "sketch_threshold": (1, 255),
    "vote_sketch_threshold": (1, 255),
    "sketch_width_bits": (8, 24),
}


def _defences(raw: Any, base: Path, where: str) -> DefenceSettings:
    if not isinstance(raw, dict):
        raise _bad(where, "[agent.defences] must be a table")
    unknown = set(raw) - {*_DEFENCE_FLAGS, *_DEFENCE_INTS, "sketch_file"}
    if unknown:
        raise _bad(where, f"unknown [agent.defences] keys {sorted(unknown)}")
    values: dict[str, Any] = {}
    for key in _DEFENCE_FLAGS:
        if key in raw:
            if not isinstance(raw[key], bool):
                raise _bad(where, f"defences {key} must be true or false, got {raw[key]!r}")
            values[key] = raw[key]
    for key, (lo, hi) in _DEFENCE_INTS.items():
        if key in raw:
            value = _int(raw, key, 0, where, lo)
            if value > hi:
                raise _bad(where, f"defences {key} must be {lo}..{hi}, got {value}")
            values[key] = value
    if "sketch_file" in raw:
        values["sketch_file"] = _path(raw["sketch_file"], base, where, "sketch_file")
    return DefenceSettings(**values)


def parse_config(data: dict[str, Any], where: str, base: Path) -> AgentConfig:
    """Build the settings from a parsed TOML document (relative paths from ``base``)."""
    table = data.get("agent", {})
    if not isinstance(table, dict):
        raise _bad(where, "[agent] must be a table")
    known = {"peers", "credential", "connect_timeout", "request_timeout", "concurrency"}
    known |= {"state_dir", "policy", "schemes", "min_votes", "ratio", "defences"}
    unknown = set(table) - known
    if unknown:
        raise _bad(where, f"unknown [agent] keys {sorted(unknown)}")
    peers = table.get("peers", list(DEFAULT_PEERS))
    if not isinstance(peers, list) or not peers or not all(isinstance(p, str) for p in peers):
        raise _bad(where, f"peers must be a non-empty list of 'host:port' strings, got {peers!r}")
    from agent.wire import AgentError, parse_address

    for peer in peers:
        try:
            parse_address(peer)
        except AgentError as exc:
            raise _bad(where, exc.message) from None
    policy = table.get("policy", {})
    if not isinstance(policy, dict):
        raise _bad(where, "[agent.policy] must be a table")
    policy = {**{k: table[k] for k in ("min_votes", "ratio") if k in table}, **policy}
    ratio = _number(policy, "ratio", DEFAULT_RATIO, where, 0.0)
    if ratio > 1.0:
        raise _bad(where, f"ratio must be between 0 and 1, got {ratio}")
    schemes_raw = table.get("schemes")
    if schemes_raw is None:
        schemes: tuple[SchemeSetting, ...] = (SchemeSetting(),)
    elif not isinstance(schemes_raw, list) or not schemes_raw:
        raise _bad(where, "schemes must be a non-empty array of tables ([[agent.schemes]])")
    else:
        schemes = tuple(_scheme(s, where) for s in schemes_raw)
    return AgentConfig(
        peers=tuple(peers),
        credential_file=_path(table["credential"], base, where, "credential")
        if "credential" in table
        else None,
        connect_timeout=_number(table, "connect_timeout", DEFAULT_CONNECT_TIMEOUT, where, 0.001),
        request_timeout=_number(table, "request_timeout", DEFAULT_REQUEST_TIMEOUT, where, 0.001),
        concurrency=_int(table, "concurrency", DEFAULT_CONCURRENCY, where, 1),
        state_directory=_path(table["state_dir"], base, where, "state_dir")
        if "state_dir" in table
        else None,
        min_votes=_int(policy, "min_votes", DEFAULT_MIN_VOTES, where, 1),
        ratio=ratio,
        schemes=schemes,
        defences=_defences(table.get("defences", {}), base, where),
        source=where,
    )


def load_config(path: str | Path | None = None) -> AgentConfig:
    """Load the settings from ``path`` (must exist) or the default file (may be absent)."""
    explicit = path is not None
    file = Path(path) if path is not None else default_config_path()
    try:
        text = file.read_bytes()
    except FileNotFoundError:
        if explicit:
            raise ParameterError(f"config file {file} does not exist") from None
        return AgentConfig()
    except OSError as exc:
        raise ParameterError(f"cannot read config file {file}: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ParameterError(f"{file}: not valid TOML: {exc}") from None
    return parse_config(data, str(file), file.parent)


def render_toml(config: AgentConfig) -> str:
    """Return a TOML document that loads back to ``config``."""
    import json

    def value(v: Any) -> str:
        if isinstance(v, Mapping):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str | Path):
            return json.dumps(str(v))
        if isinstance(v, list | tuple):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return repr(v)

    lines = [f"# effective settings (from {config.source})", "[agent]"]
    for key in ("peers", "credential", "connect_timeout", "request_timeout", "concurrency"):
        lines.append(f"{key} = {value(getattr(config, key))}")
    lines.append(f"state_dir = {value(config.state_dir)}")
    lines += ["", "[agent.policy]", f"min_votes = {config.min_votes}", f"ratio = {config.ratio}"]
    lines += ["", "[agent.defences]"]
    for key, v in _defences_dict(config).items():
        if key == "sketch_max_bytes":
            lines.append(f"# the sketch file holds at most {v} bytes")
        else:
            lines.append(f"{key} = {value(v)}")
    for s in config.schemes:
        lines += ["", "[[agent.schemes]]", f"name = {value(s.name)}", f"params = {value(s.params)}"]
        if s.thres is not None:
            lines.append(f"thres = {s.thres}")
        if s.ttl is not None:
            lines.append(f"ttl = {s.ttl}")
    return "\n".join(lines) + "\n"


def add_config_argument(parser: Any) -> None:
    """Add the ``--config FILE`` option every agent command takes."""
    parser.add_argument(
        "--config",
        metavar="FILE",
        default=None,
        help=f"agent TOML config (default: ${CONFIG_ENV} or the user config dir's agent.toml)",
    )

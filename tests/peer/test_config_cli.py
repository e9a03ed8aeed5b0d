"""``p2pspam peer`` configuration and command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from p2pspam.errors import InputError, ParameterError
from p2pspam.peer.config import load_toml, parse_hostport, resolve


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:9000", ("127.0.0.1", 9000)),
        ("127.0.0.1", ("127.0.0.1", 8468)),
        (":9000", ("0.0.0.0", 9000)),
        ("[::1]:9000", ("::1", 9000)),
        ("::1", ("::1", 8468)),
    ],
)
def test_host_port_forms_are_parsed(text, expected):
    assert parse_hostport(text, 8468, "--listen") == expected


@pytest.mark.parametrize("text", ["127.0.0.1:99999", "127.0.0.1:x", "[::1", "name.example:1"])
def test_bad_host_port_is_a_parameter_error(text):
    with pytest.raises(ParameterError):
        parse_hostport(text, 8468, "--listen")


def test_flags_override_the_file_which_overrides_defaults(tmp_path: Path):
    toml = tmp_path / "peer.toml"
    toml.write_text(
        'listen = "127.0.0.1:7000"\napi = "127.0.0.1:7001"\nvotes_per_hour = 50\n'
        "[dht]\nreplicas = 5\n"
    )
    conf = resolve(load_toml(toml), listen="127.0.0.1:7100")
    assert conf.listen == ("127.0.0.1", 7100)
    assert conf.api == ("127.0.0.1", 7001)
    assert conf.votes_per_hour == 50
    assert conf.node.replicas == 5 and conf.node.ksize == 20


def test_defaults_bind_the_api_to_loopback_and_udp_8468():
    conf = resolve({})
    assert conf.api == ("127.0.0.1", 8469)
    assert conf.listen == ("0.0.0.0", 8468)
    assert conf.api_allow == ("127.0.0.0/8", "::1/128")


@pytest.mark.parametrize(
    "content",
    ["listen = ", "unknown_key = 1", "[dht]\nfoo = 1\n"],
)
def test_a_bad_config_file_is_an_input_error(tmp_path: Path, content):
    toml = tmp_path / "peer.toml"
    toml.write_text(content)
    with pytest.raises(InputError):
        load_toml(toml)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "p2pspam.cli", *args], capture_output=True, text=True, timeout=60
    )


def test_peer_status_without_a_running_peer_is_a_one_line_error():
    result = run_cli("peer", "status", "--api", "127.0.0.1:1")
    assert result.returncode == 2
    assert "no peer answers" in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_peer_without_an_authority_key_refuses_to_start(tmp_path: Path):
    result = run_cli("peer", "--data-dir", str(tmp_path), "--listen", "127.0.0.1:0")
    assert result.returncode == 2
    assert "authority" in result.stderr


def test_a_bad_listen_address_is_refused(tmp_path: Path):
    result = run_cli("peer", "--data-dir", str(tmp_path), "--listen", "127.0.0.1:70000")
    assert result.returncode == 2
    assert "--listen" in result.stderr

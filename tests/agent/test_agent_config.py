"""The agent's TOML configuration: defaults, validation with one-line errors, round trip."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from agenthelpers import run_agent

from agent.config import (
    DEFAULT_PEERS,
    AgentConfig,
    load_config,
    parse_config,
    render_toml,
)
from p2pspam.errors import ParameterError


def load(tmp_path: Path, text: str) -> AgentConfig:
    path = tmp_path / "agent.toml"
    path.write_text(text)
    return load_config(path)


def test_an_empty_file_gives_the_documented_defaults(tmp_path: Path) -> None:
    config = load(tmp_path, "")
    assert config.peers == DEFAULT_PEERS
    assert (config.min_votes, config.ratio) == (1, 0.5)
    assert [(s.name, s.params, s.thres, s.ttl) for s in config.schemes] == [("ata", {}, None, None)]


def test_a_missing_default_file_means_defaults(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("P2PSPAM_AGENT_CONFIG", str(tmp_path / "absent.toml"))
    assert load_config().source == "built-in defaults"


def test_a_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="does not exist"):
        load_config(tmp_path / "absent.toml")


def test_schemes_policy_and_paths_are_read(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        '[agent]\npeers = ["a:1", "[::1]:2"]\ncredential = "keys/me.key"\n'
        "[agent.policy]\nmin_votes = 2\nratio = 0.75\n"
        '[[agent.schemes]]\nname = "ata"\nparams = { length = 40, count = 12 }\n'
        "thres = 4\nttl = 2\n",
    )
    assert config.peers == ("a:1", "[::1]:2")
    assert config.credential == tmp_path / "keys" / "me.key"
    assert (config.min_votes, config.ratio) == (2, 0.75)
    scheme = config.schemes[0]
    assert (scheme.params, scheme.thres, scheme.ttl) == ({"length": 40, "count": 12}, 4, 2)
    assert scheme.build().params == {"L": 40, "N": 12}


def test_schemes_from_the_registry_work_without_agent_changes(tmp_path: Path) -> None:
    from p2pspam.fingerprint.schemes import scheme_names

    names = [n for n in scheme_names() if n != "ata"]
    if not names:
        pytest.skip("only the ata scheme is registered")
    text = "".join(f'[[agent.schemes]]\nname = "{n}"\n' for n in names)
    config = load(tmp_path, "[agent]\n" + text)
    assert [s.build().name for s in config.schemes] == names


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[agent\n", "not valid TOML"),
        ('[agent]\npeers = "a:1"\n', "peers must be"),
        ('[agent]\npeers = ["nohost"]\n', "not host:port"),
        ("[agent]\npeers = []\n", "peers must be"),
        ("[agent]\nconcurrency = 0\n", "concurrency"),
        ('[agent]\nrequest_timeout = "slow"\n', "request_timeout"),
        ("[agent]\nfrobnicate = 1\n", "unknown [agent] keys"),
        ("[agent.policy]\nratio = 1.5\n", "ratio"),
        ("[agent.policy]\nmin_votes = 0\n", "min_votes"),
        ('[[agent.schemes]]\nname = "nope"\n', "unknown scheme"),
        ('[[agent.schemes]]\nname = "ata"\nthres = 11\n', "exceeds"),
        ('[[agent.schemes]]\nname = "ata"\nthres = 0\n', "thres"),
        ('[[agent.schemes]]\nname = "ata"\nparams = { length = 0 }\n', "length"),
        ('[[agent.schemes]]\nname = "ata"\ncolour = "red"\n', "unknown scheme keys"),
    ],
)
def test_bad_settings_are_refused_with_the_reason(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ParameterError, match=message.replace("[", r"\[")):
        load(tmp_path, text)


def test_the_rendered_settings_load_back_identically(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        '[agent]\npeers = ["h:9"]\n[[agent.schemes]]\nname = "ata"\nparams = { length = 30 }\n'
        "thres = 5\n",
    )
    again = parse_config(tomllib.loads(render_toml(config)), config.source, tmp_path)
    assert again.to_dict() == config.to_dict()


def test_config_show_prints_the_effective_settings(tmp_path: Path) -> None:
    path = tmp_path / "agent.toml"
    path.write_text('[agent]\npeers = ["peer.example:7000"]\n')
    result = run_agent("config", "show", "--config", str(path))
    assert result.returncode == 0
    shown = tomllib.loads(result.stdout.decode())
    assert shown["agent"]["peers"] == ["peer.example:7000"]
    assert shown["agent"]["policy"] == {"min_votes": 1, "ratio": 0.5}


def test_config_show_reports_a_bad_file_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "agent.toml"
    path.write_text("[agent]\npeers = 3\n")
    result = run_agent("config", "show", "--config", str(path))
    assert result.returncode == 2
    assert result.stderr.count(b"\n") == 1

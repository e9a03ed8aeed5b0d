"""``p2pspam fingerprint --scheme NAME`` for every scheme, ``--param``, and the ``sim
schemes`` / ``sim imatch`` experiments in their quick form."""

import csv
import json
import subprocess
import sys

import pytest

from p2pspam.fingerprint import scheme_names

BODY = (
    "Dear customer, we are pleased to offer an exclusive discount on premium watches and "
    "jewellery. Visit our online store today, enter your personal code at the checkout and "
    "receive free delivery worldwide. This promotion expires at midnight on Friday."
)


def _p2pspam(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "p2pspam.cli", *args], capture_output=True, text=True, check=False
    )


@pytest.fixture
def message(tmp_path):
    path = tmp_path / "m.eml"
    path.write_text(f"From: a@example.net\nSubject: offer\n\n{BODY}\n")
    return str(path)


def test_every_related_work_scheme_is_registered():
    assert {"ata", "imatch", "winnow", "lsh"} <= set(scheme_names())


@pytest.mark.parametrize("name", ["ata", "imatch", "winnow", "lsh"])
def test_fingerprint_works_for_every_scheme(name, message):
    done = _p2pspam("fingerprint", "--json", "--scheme", name, message)
    assert done.returncode == 0, done.stderr
    vector = json.loads(done.stdout)
    assert vector["scheme"] == name
    assert vector["features"] or vector["note"]


def test_fingerprint_passes_params_to_the_scheme(message):
    done = _p2pspam("fingerprint", "--json", "--scheme", "imatch", "-P", "K=2", message)
    vector = json.loads(done.stdout)
    assert vector["params"]["K"] == 2 and len(vector["features"]) <= 3


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--scheme", "imatch", "--count", "5"], "does not take --count"),
        (["--scheme", "lsh", "--length", "5"], "does not take --length"),
        (["--scheme", "winnow", "-P", "nonsense"], "KEY=VALUE"),
        (["--scheme", "winnow", "-P", "w=0"], "w must be"),
        (["--scheme", "nosuch"], "unknown scheme"),
    ],
)
def test_fingerprint_gives_a_one_line_error_for_parameters_a_scheme_does_not_take(
    args, words, message
):
    done = _p2pspam("fingerprint", *args, message)
    assert done.returncode == 2
    assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_sim_schemes_quick_writes_one_row_per_scheme_and_baseline(tmp_path):
    done = _p2pspam("sim", "schemes", "--quick", "--seed", "3", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    with (tmp_path / "schemes.csv").open() as handle:
        rows = {r["scheme"]: r for r in csv.DictReader(handle)}
    assert {"ata", "imatch", "winnow", "lsh", "tlsh", "pyzor", "ata+imatch"} <= set(rows)
    assert (tmp_path / "schemes.png").stat().st_size > 0
    union = float(rows["ata+imatch"]["recall_zero_fp"])
    assert union >= float(rows["ata"]["recall_zero_fp"])
    assert union >= float(rows["imatch"]["recall_zero_fp"])


def test_sim_imatch_quick_writes_measured_and_modelled_stability(tmp_path):
    done = _p2pspam("sim", "imatch", "--quick", "--trials", "30", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    with (tmp_path / "imatch.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert {int(r["K"]) for r in rows} == set(range(1, 11))
    assert all(0.0 <= float(r["measured"]) <= 1.0 for r in rows)
    assert (tmp_path / "imatch.png").stat().st_size > 0

"""Fixtures for the simulator tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from simrun import run_experiment

from simulations.common import read_csv


@pytest.fixture
def experiment(tmp_path: Path):
    """Run an experiment at ``--quick`` size into a temporary directory; return a
    function giving the rows of one of its CSV files."""

    def go(name: str, *argv: str, csv: str | None = None) -> list[dict[str, str]]:
        out = tmp_path / name
        assert run_experiment(name, "--quick", "--out", str(out), *argv) == 0
        assert list(out.glob("*.png")), "every experiment writes a PNG"
        return read_csv(out / (csv or f"{name}.csv"))

    return go

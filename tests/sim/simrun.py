"""Run one simulator experiment module as the CLI would (only that module is imported,
so another experiment's state cannot break these tests)."""

from __future__ import annotations

import argparse
import importlib


def run_experiment(name: str, *argv: str) -> int:
    """Parse ``argv`` with experiment ``name``'s own parser and run it."""
    module = importlib.import_module(f"simulations.experiments.{name}")
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="sim_command")
    module.register(sub)
    args = parser.parse_args([name.replace("_", "-"), *argv])
    return args.func(args)

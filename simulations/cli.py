"""``p2pspam sim ...``: the simulator's experiments, one module each in
``simulations.experiments`` (``foo_bar`` gives ``sim foo-bar``), each with ``register``."""

from __future__ import annotations

import argparse

from p2pspam.cliplugins import add_command_group


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sim`` and its experiments to the top-level parser."""
    add_command_group(
        sub,
        "sim",
        "run simulations that reproduce and extend the paper",
        "simulations.experiments",
        "EXPERIMENT",
    )

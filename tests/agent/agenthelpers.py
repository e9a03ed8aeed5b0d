"""Helpers of the agent tests: running agent processes, requiring system programs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
P2PSPAM = [sys.executable, "-m", "p2pspam.cli"]


def require_binary(name: str) -> str:
    """The path of a system program; skip the test without it, except in CI (fail)."""
    path = shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.path.exists(p)), None
    )
    if path is None:
        message = f"{name} is not installed (apt-get install it; see .ci/install-system-packages)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


def run_agent(
    *args: str, input: bytes | None = None, timeout: float = 60.0
) -> subprocess.CompletedProcess[bytes]:
    """Run ``p2pspam agent ARGS`` as a separate process."""
    return subprocess.run(
        [*P2PSPAM, "agent", *args], input=input, capture_output=True, timeout=timeout, cwd=REPO
    )

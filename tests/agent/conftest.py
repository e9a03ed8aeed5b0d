"""Agent test configuration: async tests run under trio; a shared local world of real
peers; system programs (dovecot, spamassassin) required in CI, skipped elsewhere."""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import pytest

from agent.localpeers import LocalWorld, local_world


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every coroutine test of this directory as a trio test."""
    for item in items:
        function = getattr(item, "function", None)
        if inspect.iscoroutinefunction(function) and "tests/agent/" in str(item.fspath):
            item.add_marker(pytest.mark.trio)


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalWorld]:
    """Three real peers on loopback and an authority, shared by the agent tests."""
    with local_world(tmp_path_factory.mktemp("world"), peers=3) as w:
        yield w

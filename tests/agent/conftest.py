"""Agent test configuration: async tests run under trio."""

from __future__ import annotations

import inspect

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every coroutine test of this directory as a trio test."""
    for item in items:
        function = getattr(item, "function", None)
        if inspect.iscoroutinefunction(function) and "tests/agent/" in str(item.fspath):
            item.add_marker(pytest.mark.trio)

"""What the agent commands share: loading the config, opening a client, the user's key,
reading inputs."""

from __future__ import annotations

import time
from typing import Any

from p2pspam.errors import InputError


def now_ms() -> int:
    """The wall clock in milliseconds (votes carry it)."""
    return int(time.time() * 1000)


def make_client(config: Any) -> Any:
    """An ``AgentClient`` (trio) for the configured peers; use it with ``async with``."""
    from agent.client import AgentClient

    return AgentClient(
        config.peers,
        connect_timeout=config.connect_timeout,
        request_timeout=config.request_timeout,
        concurrency=config.concurrency,
    )


def make_blocking_client(config: Any) -> Any:
    """A ``BlockingClient`` for the configured peers."""
    from agent.blocking import BlockingClient

    return BlockingClient(
        config.peers,
        connect_timeout=config.connect_timeout,
        request_timeout=config.request_timeout,
    )


def load_user(config: Any) -> Any:
    """The user's signing key and credential from the configured credential file."""
    from p2pspam.auth.credentials import load_user_key

    path = config.credential
    if not path.exists():
        raise InputError(
            f"credential {path} does not exist: ask your authority for one and set "
            "[agent] credential in the config"
        )
    return load_user_key(path)


def read_inputs(inputs: list[str]) -> tuple[list[Any], list[Any]]:
    """Read every message of the inputs: (messages, unreadable)."""
    from p2pspam.mailio import RawMessage, iter_messages

    messages, unreadable = [], []
    for item in iter_messages(inputs):
        (messages if isinstance(item, RawMessage) else unreadable).append(item)
    return messages, unreadable


def progress(total: int, description: str, console: Any = None) -> Any:
    """A rich progress bar on stderr (shown for more than a handful of messages)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console or Console(stderr=True),
        disable=total <= 5,
        transient=False,
    )

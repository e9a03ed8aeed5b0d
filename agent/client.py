"""A trio client of the peers' agent API, with fail-over between the configured peers.

One multiplexed connection at a time: requests carry ids, a reader task hands each reply
to its waiting caller, so many requests can be in flight (bounded by a
``trio.CapacityLimiter``). When the connection breaks or a peer answers "timeout",
"unavailable" or "internal", the request is retried on the next peer of the list; when
no peer answers, ``AgentError("unavailable")`` says which peers were tried and why.

Usage::

    async with AgentClient(["127.0.0.1:8469"]) as client:
        result = await client.call("status", {})
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Sequence
from types import TracebackType
from typing import Any

import trio

from agent.wire import (
    MAX_FRAME,
    RETRYABLE_CODES,
    AgentError,
    ProtocolError,
    Reply,
    encode_request,
    feed,
    parse_address,
)
from p2pspam.apiframing import new_unpacker

DEFAULT_CONNECT_TIMEOUT = 2.0
DEFAULT_REQUEST_TIMEOUT = 10.0
DEFAULT_CONCURRENCY = 64


class _ConnectionLost(Exception):
    """The connection to a peer broke while a request was in flight."""


class _Waiter:
    __slots__ = ("event", "outcome")

    def __init__(self) -> None:
        self.event = trio.Event()
        self.outcome: Reply | Exception | None = None


class _Connection:
    """One TCP connection to one peer, with its reader task."""

    def __init__(self, stream: trio.SocketStream, address: str, index: int) -> None:
        self.stream = stream
        self.address = address
        self.index = index  # position of the peer in the client's list
        self.closed = False
        self.failure: str | None = None
        self._pending: dict[int, _Waiter] = {}
        self._ids = itertools.count(1)
        self._send_lock = trio.Lock()

    async def read_replies(self) -> None:
        """Dispatch replies to callers until the stream ends or misbehaves."""
        unpacker = new_unpacker()
        reason = "connection closed by peer"
        try:
            while True:
                data = await self.stream.receive_some(65536)
                if not data:
                    break
                for reply in feed(unpacker, data):
                    waiter = self._pending.pop(reply.id, None)
                    if waiter is not None:  # a late reply to a timed-out request is dropped
                        waiter.outcome = reply
                        waiter.event.set()
        except ProtocolError as exc:
            reason = exc.message
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            reason = f"connection lost: {exc}"
        finally:
            self._fail_all(reason)
            with trio.CancelScope(shield=True):
                await self.stream.aclose()

    def _fail_all(self, reason: str) -> None:
        self.closed = True
        self.failure = reason
        for waiter in self._pending.values():
            waiter.outcome = _ConnectionLost(reason)
            waiter.event.set()
        self._pending.clear()

    async def request(self, op: str, args: dict[str, Any], timeout: float) -> Any:
        """Send one request and return its result; AgentError for an error reply."""
        if self.closed:
            raise _ConnectionLost(self.failure or "connection closed")
        rid = next(self._ids)
        frame = encode_request(rid, op, args)
        waiter = _Waiter()
        self._pending[rid] = waiter
        try:
            with trio.move_on_after(timeout) as scope:
                async with self._send_lock:
                    try:
                        await self.stream.send_all(frame)
                    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as e:
                        self._fail_all(f"connection lost: {e}")
                        raise _ConnectionLost(self.failure or "send failed") from None
                await waiter.event.wait()
            if scope.cancelled_caught:
                raise AgentError("timeout", f"{self.address} did not answer {op!r} in {timeout}s")
        finally:
            self._pending.pop(rid, None)
        outcome = waiter.outcome
        if isinstance(outcome, Exception):
            raise outcome
        assert isinstance(outcome, Reply)
        if not outcome.ok:
            assert outcome.error is not None
            raise outcome.error
        return outcome.result

    async def aclose(self) -> None:
        self._fail_all("closed by client")
        await self.stream.aclose()


class AgentClient:
    """Talks to the first answering peer of ``peers`` ("host:port" strings)."""

    def __init__(
        self,
        peers: Sequence[str],
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> None:
        if not peers:
            raise AgentError("bad_config", "no peer configured: set [agent] peers")
        self.peers = [parse_address(p) for p in peers]
        self.connect_timeout = connect_timeout
        self.request_timeout = request_timeout
        self.limiter = trio.CapacityLimiter(concurrency)
        self._current: _Connection | None = None
        self._next_peer = 0
        self._connect_lock = trio.Lock()
        self._nursery: trio.Nursery | None = None
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> AgentClient:
        self._stack = contextlib.AsyncExitStack()
        self._nursery = await self._stack.enter_async_context(trio.open_nursery())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        if self._current is not None:
            await self._current.aclose()
            self._current = None
        assert self._nursery is not None
        self._nursery.cancel_scope.cancel()
        try:
            return await self._stack.__aexit__(exc_type, exc, tb)
        except BaseExceptionGroup as group:
            # The readers never raise: an exception from the body comes back wrapped by
            # the nursery; let it propagate as it was raised.
            if exc is not None and list(group.exceptions) == [exc]:
                return False
            raise

    @property
    def connected_to(self) -> str | None:
        """The "host:port" of the peer in use, if connected."""
        conn = self._current
        return None if conn is None or conn.closed else conn.address

    async def _connect(self, exclude: set[int], failures: list[str]) -> tuple[int, _Connection]:
        """Return a live connection, connecting to the next peer not yet excluded."""
        async with self._connect_lock:
            conn = self._current
            if conn is not None and not conn.closed and conn.index not in exclude:
                return conn.index, conn
            for step in range(len(self.peers)):
                index = (self._next_peer + step) % len(self.peers)
                if index in exclude:
                    continue
                host, port = self.peers[index]
                label = f"{host}:{port}"
                try:
                    with trio.fail_after(self.connect_timeout):
                        stream = await trio.open_tcp_stream(host, port)
                except trio.TooSlowError:
                    failures.append(f"{label} (connect timed out after {self.connect_timeout}s)")
                    exclude.add(index)
                    continue
                except OSError as exc:
                    failures.append(f"{label} ({exc.strerror or exc})")
                    exclude.add(index)
                    continue
                conn = _Connection(stream, label, index)
                assert self._nursery is not None, "use AgentClient as 'async with'"
                self._nursery.start_soon(conn.read_replies)
                self._current = conn
                self._next_peer = index
                return index, conn
        raise AgentError("unavailable", "no peer answered: " + "; ".join(failures))

    async def call(self, op: str, args: dict[str, Any], timeout: float | None = None) -> Any:
        """Send ``op`` with ``args`` to a peer and return its result.

        Fails over to the next peer on a broken connection or a retryable error; raises
        AgentError with the peer's error code otherwise, or "unavailable" when no peer
        answered."""
        timeout = self.request_timeout if timeout is None else timeout
        failures: list[str] = []
        tried: set[int] = set()
        async with self.limiter:
            while len(tried) < len(self.peers):
                index, conn = await self._connect(tried, failures)
                try:
                    return await conn.request(op, args, timeout)
                except _ConnectionLost as exc:
                    failures.append(f"{conn.address} ({exc})")
                except AgentError as exc:
                    if exc.code not in RETRYABLE_CODES:
                        raise
                    failures.append(f"{conn.address} ({exc.code}: {exc.message})")
                    if self._current is conn:
                        self._current = None
                        self._next_peer = (index + 1) % len(self.peers)
                        await conn.aclose()
                tried.add(index)
        raise AgentError("unavailable", "no peer answered: " + "; ".join(failures))


__all__ = ["MAX_FRAME", "AgentClient", "AgentError"]

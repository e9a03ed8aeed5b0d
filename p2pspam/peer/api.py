"""The agent API server: msgpack messages over TCP, one map per message.

Requests are ``{"id": int, "op": str, "args": map}``; replies ``{"id", "ok": true,
"result"}`` or ``{"id", "ok": false, "error": {"code", "message"[, "reason"]}}``. The
stream is framed by ``msgpack.Unpacker`` (1 MiB buffer, strict limits); a message over
1 MiB gets a ``too_large`` error and the connection is closed. Requests on one
connection run concurrently (bounded) and replies carry the request id, so a client may
pipeline. Clients outside the allow-list of networks are refused at connect time.

The operations themselves are provided by a :class:`Dispatcher` (``p2pspam.peer.service``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import msgpack

from p2pspam.apiframing import MAX_FRAME, new_unpacker
from p2pspam.errors import P2PSpamError

log = logging.getLogger(__name__)

MAX_ID = (1 << 63) - 1
MAX_CONCURRENT_PER_CONNECTION = 64
DEFAULT_OP_TIMEOUT_S = 30.0
DEFAULT_ALLOW = ("127.0.0.0/8", "::1/128")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class ApiError(P2PSpamError):
    """An operation failed with an agent-API error ``code`` (and a vote ``reason``)."""

    def __init__(self, code: str, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason


Dispatcher = Callable[[str, dict[str, Any]], Awaitable[Any]]


def parse_networks(specs: Iterable[str]) -> list[Network]:
    """Parse an allow-list such as ``["127.0.0.1/8", "10.1.0.0/16"]``."""
    nets: list[Network] = []
    for spec in specs:
        try:
            nets.append(ipaddress.ip_network(spec, strict=False))
        except ValueError as exc:
            raise P2PSpamError(f"bad client network {spec!r} in the allow-list: {exc}") from None
    return nets


def error_reply(request_id: int, code: str, message: str, reason: str | None = None) -> dict:
    """Return an error reply map."""
    error: dict[str, Any] = {"code": code, "message": message}
    if reason is not None:
        error["reason"] = reason
    return {"id": request_id, "ok": False, "error": error}


class ApiServer:
    """Serves agent requests on a TCP address with ``dispatch(op, args)``."""

    def __init__(
        self,
        dispatch: Dispatcher,
        allow: Iterable[Network] | None = None,
        op_timeout_s: float = DEFAULT_OP_TIMEOUT_S,
    ) -> None:
        self.dispatch = dispatch
        self.allow = list(allow) if allow is not None else parse_networks(DEFAULT_ALLOW)
        self.op_timeout_s = op_timeout_s
        self.counters: Counter[str] = Counter()
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[Any]] = set()
        self.address: tuple[str, int] | None = None

    async def start(self, host: str, port: int) -> tuple[str, int]:
        """Listen on ``host:port`` (port 0: any free port); return the bound address."""
        self._server = await asyncio.start_server(self._client, host, port, limit=MAX_FRAME)
        sock = self._server.sockets[0].getsockname()
        self.address = (sock[0], sock[1])
        return self.address

    async def stop(self) -> None:
        """Stop listening and close every connection."""
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(BaseException):
                await task
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    def _allowed(self, host: str) -> bool:
        try:
            addr = ipaddress.ip_address(host.split("%")[0])
        except ValueError:
            return False
        if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
            addr = addr.ipv4_mapped
        return any(addr in net for net in self.allow)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        peer = writer.get_extra_info("peername") or ("?", 0)
        try:
            if not self._allowed(str(peer[0])):
                self.counters["drop.client_not_allowed"] += 1
                log.warning("refused API client %s: not in the allow-list", peer[0])
                return
            self.counters["connections"] += 1
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # Only ``stop`` cancels these tasks. Ending normally instead of re-raising
            # avoids Python 3.11's streams callback, which calls ``task.exception()`` on
            # a cancelled connection task and logs a spurious traceback.
            return
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        unpacker = new_unpacker()
        slots = asyncio.Semaphore(MAX_CONCURRENT_PER_CONNECTION)
        running: set[asyncio.Task[Any]] = set()
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                try:
                    unpacker.feed(data)
                except msgpack.BufferFull:
                    self.counters["drop.too_large"] += 1
                    self._write(writer, error_reply(0, "too_large", "message over 1 MiB"))
                    break
                try:
                    messages = list(unpacker)
                except Exception as exc:  # not msgpack: the stream cannot be re-framed
                    self.counters["drop.bad_frame"] += 1
                    self._write(writer, error_reply(0, "bad_request", f"bad msgpack: {exc}"))
                    break
                for message in messages:
                    await slots.acquire()
                    task = asyncio.create_task(self._one(message, writer))
                    running.add(task)
                    task.add_done_callback(running.discard)
                    task.add_done_callback(lambda _t: slots.release())
                await writer.drain()
        finally:
            for task in list(running):
                with contextlib.suppress(BaseException):
                    await task

    def _write(self, writer: asyncio.StreamWriter, reply: dict[str, Any]) -> None:
        if writer.is_closing():
            return
        try:
            data = msgpack.packb(reply, use_bin_type=True)
        except Exception as exc:
            log.exception("cannot encode a reply")
            data = msgpack.packb(error_reply(reply.get("id", 0), "internal", str(exc)))
        if len(data) > MAX_FRAME:
            data = msgpack.packb(
                error_reply(reply.get("id", 0), "too_large", "reply over 1 MiB"),
                use_bin_type=True,
            )
        writer.write(data)

    async def _one(self, message: Any, writer: asyncio.StreamWriter) -> None:
        request_id = 0
        if isinstance(message, dict) and type(message.get("id")) is int:
            request_id = message["id"] if 0 <= message["id"] <= MAX_ID else 0
        try:
            op, args = _parse_request(message)
            self.counters[f"op.{op}"] += 1
            result = await asyncio.wait_for(self.dispatch(op, args), self.op_timeout_s)
            reply = {"id": request_id, "ok": True, "result": result}
        except ApiError as exc:
            self.counters[f"error.{exc.code}"] += 1
            reply = error_reply(request_id, exc.code, exc.message, exc.reason)
        except TimeoutError:
            self.counters["error.timeout"] += 1
            reply = error_reply(request_id, "timeout", "the operation took too long")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("API operation failed")
            self.counters["error.internal"] += 1
            reply = error_reply(request_id, "internal", f"{type(exc).__name__}: {exc}")
        self._write(writer, reply)
        with contextlib.suppress(ConnectionError):
            await writer.drain()


def _parse_request(message: Any) -> tuple[str, dict[str, Any]]:
    if not isinstance(message, dict):
        raise ApiError("bad_request", "a request must be a map {id, op, args}")
    request_id = message.get("id")
    if type(request_id) is not int or not 0 <= request_id <= MAX_ID:
        raise ApiError("bad_request", "request id must be an integer in [0, 2**63)")
    op = message.get("op")
    if not isinstance(op, str) or not op:
        raise ApiError("bad_request", "op must be a non-empty string")
    args = message.get("args", {})
    if not isinstance(args, dict):
        raise ApiError("bad_request", "args must be a map")
    extra = set(message) - {"id", "op", "args"}
    if extra:
        raise ApiError("bad_request", f"unknown request fields: {sorted(map(str, extra))}")
    return op, args

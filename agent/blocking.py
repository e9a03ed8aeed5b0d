"""A blocking client of the agent API for one-shot commands run per message.

``agent filter`` and ``p2pspam-pyzor`` start a fresh interpreter for every message, and
importing trio alone costs more than their whole time budget; they send a request or two,
so plain sockets do. Same framing, validation, fail-over and errors as ``agent.client``.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence
from typing import Any

from agent.wire import (
    RETRYABLE_CODES,
    AgentError,
    ProtocolError,
    encode_request,
    feed,
    parse_address,
)
from p2pspam.apiframing import new_unpacker


class BlockingClient:
    """Sends requests to the first answering peer of ``peers``; not thread-safe."""

    def __init__(
        self, peers: Sequence[str], *, connect_timeout: float = 2.0, request_timeout: float = 10.0
    ) -> None:
        if not peers:
            raise AgentError("bad_config", "no peer configured: set [agent] peers")
        self.peers = [parse_address(p) for p in peers]
        self.connect_timeout = connect_timeout
        self.request_timeout = request_timeout
        self._sock: socket.socket | None = None
        self._label = ""
        self._index = 0
        self._next_id = 1

    @property
    def connected_to(self) -> str | None:
        """The "host:port" of the peer in use, if connected."""
        if self._sock is None:
            return None
        host, port = self.peers[self._index]
        return f"{host}:{port}"

    def close(self) -> None:
        """Close the connection, if any."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> BlockingClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connect(self, index: int) -> socket.socket:
        host, port = self.peers[index]
        sock = socket.create_connection((host, port), timeout=self.connect_timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def _exchange(self, sock: socket.socket, op: str, args: dict[str, Any], timeout: float) -> Any:
        rid = self._next_id
        self._next_id += 1
        sock.settimeout(timeout)
        deadline = time.monotonic() + timeout
        sock.sendall(encode_request(rid, op, args))
        unpacker = new_unpacker()
        while True:
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            data = sock.recv(65536)
            if not data:
                raise ConnectionError("connection closed by peer")
            for reply in feed(unpacker, data):
                if reply.id != rid:
                    continue
                if not reply.ok:
                    assert reply.error is not None
                    raise reply.error
                return reply.result

    def call(self, op: str, args: dict[str, Any], timeout: float | None = None) -> Any:
        """Send ``op`` and return its result; fail over like ``AgentClient.call``."""
        timeout = self.request_timeout if timeout is None else timeout
        failures: list[str] = []
        for step in range(len(self.peers)):
            index = (self._index + step) % len(self.peers)
            host, port = self.peers[index]
            label = f"{host}:{port}"
            try:
                if self._sock is None or index != self._index:
                    self.close()
                    self._sock = self._connect(index)
                    self._index = index
                return self._exchange(self._sock, op, args, timeout)
            except TimeoutError:
                failures.append(f"{label} (no answer in {timeout}s)")
            except ProtocolError as exc:
                failures.append(f"{label} ({exc.message})")
            except AgentError as exc:
                if exc.code not in RETRYABLE_CODES:
                    raise
                failures.append(f"{label} ({exc.code}: {exc.message})")
            except OSError as exc:
                failures.append(f"{label} ({exc.strerror or exc})")
            self.close()
        raise AgentError("unavailable", "no peer answered: " + "; ".join(failures))

"""The agent API's framing: one msgpack map per message on a TCP stream.

Shared by the trio client (``agent.client``) and the blocking client used on the
start-up-sensitive paths (``agent.blocking``). Pure: no sockets here, bytes in and out.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgpack

from p2pspam.apiframing import MAX_FRAME
from p2pspam.errors import P2PSpamError

MAX_ID = (1 << 63) - 1

# Error codes of the agent API (interface doc); a peer may add more.
RETRYABLE_CODES = frozenset({"timeout", "unavailable", "internal"})


class AgentError(P2PSpamError):
    """A request to the peers failed: ``code`` is an agent-API error code (or
    "unavailable" when no peer answered), ``reason`` the vote refusal reason if any."""

    def __init__(self, code: str, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason


class ProtocolError(AgentError):
    """The peer sent something that is not a valid reply: the connection is unusable."""

    def __init__(self, message: str) -> None:
        super().__init__("bad_reply", message)


class Reply(NamedTuple):
    """One decoded reply: ``result`` when ``ok``, else ``error``."""

    id: int
    ok: bool
    result: Any = None
    error: AgentError | None = None


def encode_request(request_id: int, op: str, args: dict[str, Any]) -> bytes:
    """Return the frame of one request; AgentError("too_large") if over the limit."""
    frame = msgpack.packb({"id": request_id, "op": op, "args": args}, use_bin_type=True)
    if len(frame) > MAX_FRAME:
        raise AgentError("too_large", f"request {op!r} is {len(frame)} bytes, over {MAX_FRAME}")
    return frame


def feed(unpacker: msgpack.Unpacker, data: bytes) -> list[Reply]:
    """Feed received bytes; return the replies now complete. Raises ProtocolError on a
    frame over the limit or a message that is not a well-formed reply."""
    try:
        unpacker.feed(data)
    except msgpack.BufferFull:
        raise ProtocolError(f"reply larger than {MAX_FRAME} bytes") from None
    replies: list[Reply] = []
    try:
        for obj in unpacker:
            replies.append(parse_reply(obj))
    except (msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, ValueError) as exc:
        raise ProtocolError(f"undecodable reply: {exc}") from None
    return replies


def parse_reply(obj: Any) -> Reply:
    """Validate one decoded message as a reply (interface doc) and return it."""
    if not isinstance(obj, dict):
        raise ProtocolError(f"reply is a {type(obj).__name__}, not a map")
    rid = obj.get("id")
    ok = obj.get("ok")
    if not isinstance(rid, int) or isinstance(rid, bool) or not isinstance(ok, bool):
        raise ProtocolError("reply lacks an integer 'id' or a boolean 'ok'")
    if ok:
        return Reply(rid, True, obj.get("result"))
    err = obj.get("error")
    if not isinstance(err, dict):
        return Reply(rid, False, error=AgentError("bad_reply", "error reply without 'error' map"))
    code = err.get("code")
    message = err.get("message")
    reason = err.get("reason")
    return Reply(
        rid,
        False,
        error=AgentError(
            code if isinstance(code, str) else "internal",
            message if isinstance(message, str) else "peer reported an error",
            reason if isinstance(reason, str) else None,
        ),
    )


def parse_address(spec: str) -> tuple[str, int]:
    """Parse ``host:port`` or ``[v6]:port``; AgentError("bad_config") when malformed."""
    text = spec.strip()
    if text.startswith("["):
        host, sep, port = text[1:].partition("]:")
    else:
        host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise AgentError("bad_config", f"peer address {spec!r} is not host:port")
    return host, int(port)

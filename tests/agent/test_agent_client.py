"""The agent API client: framing, request ids, fail-over and errors, against real TCP
servers on loopback that answer in scripted ways."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgpack
import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from agent.blocking import BlockingClient
from agent.client import AgentClient
from agent.wire import (
    MAX_FRAME,
    AgentError,
    ProtocolError,
    feed,
    parse_address,
    parse_reply,
)
from p2pspam.apiframing import new_unpacker

Handler = Callable[[trio.SocketStream, dict[str, Any]], Awaitable[bool]]


_send_locks: dict[int, trio.Lock] = {}


async def _reply(stream: trio.SocketStream, message: dict[str, Any]) -> None:
    lock = _send_locks.setdefault(id(stream), trio.Lock())
    async with lock:
        await stream.send_all(msgpack.packb(message, use_bin_type=True))


async def echo(stream: trio.SocketStream, request: dict[str, Any]) -> bool:
    await _reply(stream, {"id": request["id"], "ok": True, "result": {"echo": request}})
    return True


async def serve(nursery: trio.Nursery, handler: Handler) -> str:
    """Start a server on a free loopback port that passes each request to ``handler``
    (which returns False to close the connection); return its "host:port"."""

    async def connection(stream: trio.SocketStream) -> None:
        unpacker = new_unpacker()
        async with stream:
            while True:
                try:
                    data = await stream.receive_some(65536)
                except trio.BrokenResourceError:
                    return
                if not data:
                    return
                unpacker.feed(data)
                for request in unpacker:
                    if not await handler(stream, request):
                        return

    listeners = await nursery.start(trio.serve_tcp, connection, 0)
    port = listeners[0].socket.getsockname()[1]
    return f"127.0.0.1:{port}"


def closed_port() -> str:
    """A loopback address where nothing listens."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


async def test_a_request_gets_its_result_with_the_op_and_args_sent() -> None:
    async with trio.open_nursery() as nursery:
        address = await serve(nursery, echo)
        async with AgentClient([address]) as client:
            result = await client.call("status", {"x": b"\x00\xff"})
        nursery.cancel_scope.cancel()
    assert result["echo"]["op"] == "status"
    assert result["echo"]["args"] == {"x": b"\x00\xff"}


async def test_concurrent_requests_get_their_own_replies_even_out_of_order() -> None:
    async def reverse_order(stream: trio.SocketStream, request: dict[str, Any]) -> bool:
        await trio.sleep(0.05 if request["args"]["n"] % 2 == 0 else 0)
        return await echo(stream, request)

    async def handler(stream: trio.SocketStream, request: dict[str, Any]) -> bool:
        nursery_inner.start_soon(reverse_order, stream, request)
        return True

    results: dict[int, int] = {}
    async with trio.open_nursery() as nursery:
        nursery_inner = nursery
        address = await serve(nursery, handler)
        async with AgentClient([address], concurrency=8) as client:

            async def one(n: int) -> None:
                results[n] = (await client.call("check", {"n": n}))["echo"]["args"]["n"]

            async with trio.open_nursery() as calls:
                for n in range(20):
                    calls.start_soon(one, n)
        nursery.cancel_scope.cancel()
    assert results == {n: n for n in range(20)}


async def test_an_error_raised_in_the_body_propagates_unwrapped() -> None:
    async with trio.open_nursery() as nursery:
        address = await serve(nursery, echo)
        with pytest.raises(AgentError, match="from the body"):
            async with AgentClient([address]) as client:
                await client.call("status", {})
                raise AgentError("x", "from the body")
        nursery.cancel_scope.cancel()


async def test_request_ids_are_distinct() -> None:
    seen: list[int] = []

    async def record(stream: trio.SocketStream, request: dict[str, Any]) -> bool:
        seen.append(request["id"])
        return await echo(stream, request)

    async with trio.open_nursery() as nursery:
        address = await serve(nursery, record)
        async with AgentClient([address]) as client:
            for _ in range(5):
                await client.call("status", {})
        nursery.cancel_scope.cancel()
    assert len(set(seen)) == 5


async def test_an_error_reply_raises_agent_error_with_code_and_reason() -> None:
    async def refuse(stream: trio.SocketStream, request: dict[str, Any]) -> bool:
        error = {"code": "vote_rejected", "message": "bad signature", "reason": "bad_signature"}
        await _reply(stream, {"id": request["id"], "ok": False, "error": error})
        return True

    async with trio.open_nursery() as nursery:
        address = await serve(nursery, refuse)
        async with AgentClient([address]) as client:
            with pytest.raises(AgentError) as info:
                await client.call("publish", {"vote": b"x"})
        nursery.cancel_scope.cancel()
    assert (info.value.code, info.value.reason) == ("vote_rejected", "bad_signature")


async def test_a_dead_first_peer_fails_over_to_the_next() -> None:
    async with trio.open_nursery() as nursery:
        address = await serve(nursery, echo)
        async with AgentClient([closed_port(), address]) as client:
            result = await client.call("status", {})
            assert client.connected_to == address
        nursery.cancel_scope.cancel()
    assert result["echo"]["op"] == "status"


async def test_a_peer_closing_mid_request_fails_over_to_the_next() -> None:
    async def hang_up(stream: trio.SocketStream, request: dict[str, Any]) -> bool:
        return False

    async with trio.open_nursery() as nursery:
        bad = await serve(nursery, hang_up)
        good = await serve(nursery, echo)
        async with AgentClient([bad, good]) as client:
            result = await client.call("status", {})
        nursery.cancel_scope.cancel()
    assert result["echo"]["op"] == "status"


async def test_a_retryable_error_reply_fails_over_to_the_next_peer() -> None:
    async def unavailable(stream: trio.SocketStream, request: dict[str, Any]) -> bool:
        error = {"code": "unavailable", "message": "no contacts"}
        await _reply(stream, {"id": request["id"], "ok": False, "error": error})
        return True

    async with trio.open_nursery() as nursery:
        bad = await serve(nursery, unavailable)
        good = await serve(nursery, echo)
        async with AgentClient([bad, good]) as client:
            result = await client.call("status", {})
        nursery.cancel_scope.cancel()
    assert result["echo"]["op"] == "status"


async def test_no_peer_answering_raises_unavailable_naming_every_peer() -> None:
    peers = [closed_port(), closed_port()]
    async with AgentClient(peers, connect_timeout=1.0) as client:
        with pytest.raises(AgentError) as info:
            await client.call("status", {})
    assert info.value.code == "unavailable"
    assert all(p in info.value.message for p in peers)


async def test_a_silent_peer_times_out() -> None:
    async def silent(stream: trio.SocketStream, request: dict[str, Any]) -> bool:
        return True

    async with trio.open_nursery() as nursery:
        address = await serve(nursery, silent)
        async with AgentClient([address], request_timeout=0.2) as client:
            with pytest.raises(AgentError) as info:
                await client.call("status", {})
        nursery.cancel_scope.cancel()
    assert info.value.code == "unavailable"
    assert "did not answer" in info.value.message


@pytest.mark.parametrize(
    "garbage",
    [
        msgpack.packb([1, 2, 3]),
        msgpack.packb({"id": "one", "ok": True}),
        b"\xc1\xc1\xc1\xc1",
    ],
    ids=["not-a-map", "bad-id", "undecodable"],
)
async def test_a_malformed_reply_is_a_clear_error_not_a_crash(garbage: bytes) -> None:
    async def send_garbage(stream: trio.SocketStream, request: dict[str, Any]) -> bool:
        await stream.send_all(garbage)
        return True

    async with trio.open_nursery() as nursery:
        address = await serve(nursery, send_garbage)
        async with AgentClient([address], request_timeout=2.0) as client:
            with pytest.raises(AgentError) as info:
                await client.call("status", {})
        nursery.cancel_scope.cancel()
    assert info.value.code == "unavailable"


async def test_a_reply_over_the_frame_limit_is_refused() -> None:
    async def huge(stream: trio.SocketStream, request: dict[str, Any]) -> bool:
        await _reply(stream, {"id": request["id"], "ok": True, "result": b"x" * (MAX_FRAME + 10)})
        return True

    async with trio.open_nursery() as nursery:
        address = await serve(nursery, huge)
        async with AgentClient([address], request_timeout=5.0) as client:
            with pytest.raises(AgentError) as info:
                await client.call("status", {})
        nursery.cancel_scope.cancel()
    assert "larger than" in info.value.message


async def test_a_request_over_the_frame_limit_is_refused_before_sending() -> None:
    async with trio.open_nursery() as nursery:
        address = await serve(nursery, echo)
        async with AgentClient([address]) as client:
            with pytest.raises(AgentError) as info:
                await client.call("publish", {"vote": b"x" * MAX_FRAME})
        nursery.cancel_scope.cancel()
    assert info.value.code == "too_large"


async def test_the_capacity_limiter_bounds_requests_in_flight() -> None:
    in_flight = 0
    peak = 0

    async def slow(stream: trio.SocketStream, request: dict[str, Any]) -> bool:
        async def later() -> None:
            nonlocal in_flight
            await trio.sleep(0.02)
            in_flight -= 1
            await echo(stream, request)

        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        server_nursery.start_soon(later)
        return True

    async with trio.open_nursery() as nursery:
        server_nursery = nursery
        address = await serve(nursery, slow)
        async with AgentClient([address], concurrency=3) as client, trio.open_nursery() as calls:
            for _ in range(12):
                calls.start_soon(client.call, "status", {})
        nursery.cancel_scope.cancel()
    assert peak == 3


def test_the_blocking_client_fails_over_and_gets_results() -> None:
    import threading

    ready = threading.Event()
    box: dict[str, Any] = {}

    async def server_main() -> None:
        async with trio.open_nursery() as nursery:
            box["address"] = await serve(nursery, echo)
            ready.set()

    thread = threading.Thread(target=trio.run, args=(server_main,), daemon=True)
    thread.start()
    ready.wait(10)
    with BlockingClient([closed_port(), box["address"]]) as client:
        assert client.call("status", {"a": 1})["echo"]["args"] == {"a": 1}
        assert client.call("status", {"a": 2})["echo"]["args"] == {"a": 2}
    # the server runs in a daemon thread that ends with the test process


def test_the_blocking_client_reports_every_dead_peer() -> None:
    peers = [closed_port(), closed_port()]
    with pytest.raises(AgentError) as info:
        BlockingClient(peers, connect_timeout=0.5).call("status", {})
    assert info.value.code == "unavailable"
    assert all(p in info.value.message for p in peers)


@pytest.mark.parametrize("spec", ["localhost", "host:", ":80", "h:0", "h:99999", "h:x"])
def test_malformed_peer_addresses_are_refused(spec: str) -> None:
    with pytest.raises(AgentError):
        parse_address(spec)


def test_peer_addresses_parse_with_ipv6_brackets() -> None:
    assert parse_address("[::1]:7301") == ("::1", 7301)
    assert parse_address("peer.example:7301") == ("peer.example", 7301)


@given(st.lists(st.binary(max_size=300), max_size=8))
def test_any_bytes_from_a_peer_give_replies_or_a_protocol_error(chunks: list[bytes]) -> None:
    unpacker = new_unpacker()
    try:
        for chunk in chunks:
            for reply in feed(unpacker, chunk):
                assert isinstance(reply.id, int) and isinstance(reply.ok, bool)
    except ProtocolError:
        pass


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20) | st.binary(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=20,
    )
)
def test_any_decoded_message_is_a_valid_reply_or_a_protocol_error(obj: object) -> None:
    try:
        reply = parse_reply(obj)
    except ProtocolError:
        return
    assert reply.ok or isinstance(reply.error, AgentError)

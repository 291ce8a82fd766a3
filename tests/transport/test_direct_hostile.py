"""The default ``AsyncClient``'s own HTTP/1.1 connections against odd or hostile servers over
real sockets on 127.0.0.1: what each answer becomes, beside what httpcore's connection makes of
the same bytes, and that no connection is left open."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

import paysdk
from paysdk._transport._async.pool import AsyncPoolTransport
from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox
from tests.conftest import SECRET, verify_body
from tests.support.hostile import Connection, HostileServer, Request, head
from tests.support.scripted import OK, Scripted, default_network, own_transport

pytestmark = pytest.mark.anyio

REFERENCE = "order-1042"
VERIFIED = json.dumps(verify_body(REFERENCE)).encode()
ANSWER = head(200, {"Content-Length": str(len(VERIFIED)), "Content-Type": "application/json"})
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"


def _then(extra: bytes) -> Callable[[Connection, Request], bool]:
    """The verified payment, with ``extra`` in the same write: bytes no request asked for."""

    def behave(conn: Connection, request: Request) -> bool:
        conn.send(ANSWER + VERIFIED + extra)
        return True

    return behave


def _async_client(base_url: str, **options: Any) -> paysdk.AsyncClient:
    """The default ``AsyncClient`` (its own httpx client, so paysdk's own connections)."""
    return paysdk.AsyncClient(
        secret_key=SECRET, base_url=base_url, allow_insecure_http=True, **options
    )


async def test_bytes_after_an_answer_are_no_later_request_s_answer(
    hostile: HostileServer,
) -> None:
    """A server that writes a second answer unasked (a desynchronised proxy, a 204 with a
    body) must not answer the next verify with it: the connection is not kept."""
    hostile.script(_then(NOT_FOUND))
    async with _async_client(hostile.base_url, max_retries=0) as client:
        for _ in range(2):
            assert (await client.verify(REFERENCE)).reference == REFERENCE
    assert hostile.connections == 2


UNASKED = [
    pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nextra", id="a second answer"),
    pytest.param(b"garbage", id="garbage"),
]


@pytest.mark.parametrize("extra", UNASKED)
async def test_a_connection_with_bytes_left_after_the_answer_is_not_kept(
    scripted: Callable[[list[bytes | None]], Scripted], extra: bytes
) -> None:
    server = scripted([OK + extra, OK])
    async with httpx.AsyncClient(transport=own_transport()) as http:
        for _ in range(2):
            assert (await http.get(server.url)).content == b"ok"
    assert server.connections == 2


def _outcome(exc: BaseException) -> tuple[str, str]:
    """An error as two transports' can be compared: its type's name and its message."""
    return type(exc).__name__, str(exc)


ODD = [
    pytest.param(
        [b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n"
         b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + OK],
        id="1xx answers first",
    ),
    pytest.param(
        [b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n"],
        id="an unasked 101",
    ),
    pytest.param([b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"], id="204 with length"),
    pytest.param([b"HTTP/1.1 304 Not Modified\r\n\r\n"], id="304"),
    pytest.param(
        [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: 1\r\n\r\n"],
        id="chunked with trailers",
    ),
    pytest.param(
        [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n"],
        id="a garbage chunk size",
    ),
    pytest.param(
        [b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"2\r\nok\r\n0\r\n\r\n"],
        id="length and chunked",
    ),
    pytest.param([b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nok", None], id="cut in the body"),
    pytest.param([OK, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", None], id="second cut"),
]  # fmt: skip


@pytest.mark.parametrize("answers", ODD)
async def test_an_odd_answer_is_what_httpcore_s_connection_makes_of_it(
    scripted: Callable[[list[bytes | None]], Scripted], answers: list[bytes | None]
) -> None:
    """Each request's status and body, or its error's type and message, as httpcore's; then
    one more request, which a fresh or kept connection answers."""
    outcomes: list[list[object]] = []
    for transport in (AsyncPoolTransport(default_network()), own_transport()):
        server = scripted([*answers, OK])
        seen: list[object] = []
        async with httpx.AsyncClient(transport=transport, timeout=5) as http:
            for _ in range(sum(answer is not None for answer in answers) + 1):
                try:
                    response = await http.get(server.url)
                except httpx.RemoteProtocolError as exc:
                    seen.append(_outcome(exc))
                else:
                    seen.append((response.status_code, response.content))
        seen.append(server.connections)
        outcomes.append(seen)
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][-2] == (200, b"ok")


def _endless_head(conn: Connection, request: Request) -> bool:
    """A head whose one header never ends, a byte every 10 ms: no read ever times out."""
    conn.send(b"HTTP/1.1 200 OK\r\nX-Endless: ")
    while True:
        conn.send(b"a")
        conn.pause(0.01)


async def test_a_head_that_never_ends_is_a_timeout_within_the_budget(
    hostile: HostileServer,
) -> None:
    hostile.script(_endless_head)
    started = time.monotonic()
    async with _async_client(hostile.base_url, timeout=0.5, max_retries=0) as client:
        with pytest.raises(paysdk.APITimeoutError):
            await client.verify(REFERENCE)
    assert time.monotonic() - started < 0.5 + 3.0  # a loaded machine's slack


async def test_a_head_past_h11_s_bound_is_a_connection_error(hostile: HostileServer) -> None:
    def huge(conn: Connection, request: Request) -> bool:
        conn.send(b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * (200 * 1024) + b"\r\n")
        conn.hold()
        return False

    hostile.script(huge)
    async with _async_client(hostile.base_url, max_retries=0) as client:
        with pytest.raises(paysdk.APIConnectionError, match="Receive buffer too long"):
            await client.verify(REFERENCE)


async def test_closing_the_client_under_20_verifies_leaves_no_connection_open() -> None:
    """At each moment of the calls (connecting, sending, reading), each ends with its payment
    or the closed client's error, and every connection is closed."""
    with Sandbox() as sandbox:
        for delay in (0.0, 0.002, 0.005, 0.008, 0.012, 0.02):
            client = paysdk.AsyncClient(secret_key=sandbox.secret_key, base_url=sandbox.base_url)
            calls = [asyncio.ensure_future(client.verify(COMPLETED_REFERENCE)) for _ in range(20)]
            await asyncio.sleep(delay)
            await client.close()
            for ended in await asyncio.gather(*calls, return_exceptions=True):
                if isinstance(ended, BaseException):
                    assert isinstance(ended, paysdk.ClientClosedError), repr(ended)
                else:
                    assert ended.succeeded
            for _ in range(100):  # the sandbox's threads see each close a moment later
                if sandbox.open_connections == 0:
                    break
                await asyncio.sleep(0.02)
            assert sandbox.open_connections == 0

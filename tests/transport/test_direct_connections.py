"""paysdk's own HTTP/1.1 connections, which carry the async client's requests on a route without
a proxy: what they send and read over real sockets on 127.0.0.1, when they are kept or closed,
the failures they raise, and how they step aside while respx (and so ``MockPaymentAPI``) stands
in for httpcore's connections. The sync client's pool, on httpcore's connections, is held to
the same behaviour beside them."""

from __future__ import annotations

import functools
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import h11
import httpcore
import httpx
import pytest
import trustme

import paysdk
from paysdk._transport import deadline
from paysdk._transport._async.pool import AsyncPoolTransport
from paysdk._transport._sync.pool import PoolTransport
from paysdk._transport.async_direct import (
    AsyncDirectConnection,
    httpcore_replaced,
)
from paysdk._transport.asyncio_network import AsyncioBackend
from paysdk._transport.network import Network
from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox
from paysdk.testing import MockPaymentAPI, PaymentRecord
from tests.support.scripted import OK, Scripted, default_network, own_transport
from tests.support.tls import server_context

pytestmark = pytest.mark.anyio


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with Sandbox() as running:
        yield running


@pytest.fixture
def sent_on_own_connections(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Each request paysdk's own connections carried, in order."""
    carried: list[object] = []
    send = AsyncDirectConnection.handle_async_request

    async def counting(
        connection: AsyncDirectConnection, request: httpcore.Request
    ) -> httpcore.Response:
        carried.append(request)
        return await send(connection, request)

    monkeypatch.setattr(AsyncDirectConnection, "handle_async_request", counting)
    return carried


async def test_the_async_client_sends_on_paysdk_s_own_connections_kept_alive(
    sandbox: Sandbox, sent_on_own_connections: list[object]
) -> None:
    """The sync client's are httpcore's: their locks are threading locks, which yield to
    nothing, and it sends on them a little sooner on loopback."""
    async with paysdk.AsyncClient(
        secret_key=sandbox.secret_key, base_url=sandbox.base_url
    ) as aclient:
        for _ in range(3):
            assert (await aclient.verify(COMPLETED_REFERENCE)).succeeded
    with paysdk.Client(secret_key=sandbox.secret_key, base_url=sandbox.base_url) as client:
        for _ in range(3):
            assert client.verify(COMPLETED_REFERENCE).succeeded
    assert len(sent_on_own_connections) == 3
    assert len(sandbox.connections) == 2  # one a client


def test_httpcore_is_untouched_unless_respx_runs() -> None:
    assert not httpcore_replaced()
    with MockPaymentAPI():
        assert httpcore_replaced()
    assert not httpcore_replaced()


def test_a_replacement_that_copies_the_name_of_httpcore_s_send_is_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A wrapper made with ``functools.wraps`` carries httpcore's name, not its code."""
    send = httpcore.AsyncHTTPConnection.handle_async_request

    @functools.wraps(send)
    async def wrapper(
        connection: httpcore.AsyncHTTPConnection, request: httpcore.Request
    ) -> httpcore.Response:
        return await send(connection, request)

    assert wrapper.__qualname__ == send.__qualname__
    monkeypatch.setattr(httpcore.AsyncHTTPConnection, "handle_async_request", wrapper)
    assert httpcore_replaced()


MOCKED = "order-only-in-the-mock"


def _mock_of(sandbox: Sandbox) -> MockPaymentAPI:
    """The fake service on the sandbox's own address, with a payment the sandbox lacks."""
    mock = MockPaymentAPI(secret_key=sandbox.secret_key, base_url=sandbox.base_url)
    mock.add_payment(PaymentRecord(reference=MOCKED, amount=5000))
    return mock


def test_a_mock_started_after_a_connection_was_kept_answers_the_next_call(
    sandbox: Sandbox,
) -> None:
    """A kept-alive connection of paysdk's own is passed over while respx runs: the call
    reaches the mock, not the server the connection is open to; afterwards, the server."""
    with paysdk.Client(secret_key=sandbox.secret_key, base_url=sandbox.base_url) as client:
        assert client.verify(COMPLETED_REFERENCE).succeeded  # a connection kept
        with _mock_of(sandbox):
            assert client.verify(MOCKED).reference == MOCKED
        with pytest.raises(paysdk.NotFoundError):
            client.verify(MOCKED)


async def test_a_mock_started_after_an_async_connection_was_kept_answers_the_next_call(
    sandbox: Sandbox,
) -> None:
    async with paysdk.AsyncClient(
        secret_key=sandbox.secret_key, base_url=sandbox.base_url
    ) as client:
        assert (await client.verify(COMPLETED_REFERENCE)).succeeded
        with _mock_of(sandbox):
            assert (await client.verify(MOCKED)).reference == MOCKED
        with pytest.raises(paysdk.NotFoundError):
            await client.verify(MOCKED)


ANSWERS_AND_CONNECTIONS = [
    pytest.param([OK, OK], 1, id="kept alive"),
    pytest.param(
        [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", None, OK],
        2,
        id="the server says it closes",
    ),
    pytest.param(
        [b"HTTP/1.1 100 Continue\r\n\r\n" + OK, OK],
        1,
        id="an informational answer first",
    ),
    pytest.param(
        [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\no\r\n1\r\nk\r\n0\r\n\r\n", OK],
        1,
        id="chunked",
    ),
    pytest.param([b"HTTP/1.0 200 OK\r\n\r\nok", None, OK], 2, id="a body ended by closing"),
]


@pytest.mark.parametrize(("answers", "connections"), ANSWERS_AND_CONNECTIONS)
def test_two_requests_read_whole_on_as_many_connections_as_the_answers_allow(
    scripted: Callable[[list[bytes | None]], Scripted],
    answers: list[bytes | None],
    connections: int,
) -> None:
    server = scripted(answers)
    with httpx.Client(transport=PoolTransport(default_network())) as http:
        for _ in range(2):
            assert http.get(server.url).content == b"ok"
    assert server.connections == connections
    assert server.requests[0].startswith(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:")


@pytest.mark.parametrize(("answers", "connections"), ANSWERS_AND_CONNECTIONS)
async def test_two_async_requests_read_whole_on_as_many_connections_as_the_answers_allow(
    scripted: Callable[[list[bytes | None]], Scripted],
    answers: list[bytes | None],
    connections: int,
) -> None:
    server = scripted(answers)
    async with httpx.AsyncClient(transport=own_transport()) as http:
        for _ in range(2):
            assert (await http.get(server.url)).content == b"ok"
    assert server.connections == connections


FAILURES = [
    pytest.param([None], "Server disconnected without sending a response.", id="no answer"),
    pytest.param([b"NOT HTTP AT ALL\r\n\r\n"], "illegal status line", id="not HTTP"),
]


@pytest.mark.parametrize(("answers", "message"), FAILURES)
def test_a_server_that_breaks_http_is_a_remote_protocol_error(
    scripted: Callable[[list[bytes | None]], Scripted], answers: list[bytes | None], message: str
) -> None:
    server = scripted(answers)
    with (
        httpx.Client(transport=PoolTransport(default_network())) as http,
        pytest.raises(httpx.RemoteProtocolError, match=message) as caught,
    ):
        http.get(server.url)
    assert isinstance(caught.value.__cause__, httpcore.RemoteProtocolError)


@pytest.mark.parametrize(("answers", "message"), FAILURES)
async def test_a_server_that_breaks_http_is_a_remote_protocol_error_to_the_async_client(
    scripted: Callable[[list[bytes | None]], Scripted], answers: list[bytes | None], message: str
) -> None:
    server = scripted(answers)
    async with httpx.AsyncClient(transport=own_transport()) as http:
        with pytest.raises(httpx.RemoteProtocolError, match=message) as caught:
            await http.get(server.url)
    assert isinstance(caught.value.__cause__, httpcore.RemoteProtocolError)


async def test_a_header_h11_refuses_to_send_is_a_local_protocol_error(
    scripted: Callable[[list[bytes | None]], Scripted],
) -> None:
    server = scripted([OK])
    request = httpcore.Request("GET", server.url, headers=[(b"X-Bad", b"a\r\nb")])
    origin = httpcore.URL(server.url).origin
    connection = AsyncDirectConnection(origin, AsyncioBackend(), None, None)
    with pytest.raises(httpcore.LocalProtocolError):
        await connection.handle_async_request(request)
    assert connection.is_closed()
    assert server.requests == []


DECLARED_LENGTHS = [pytest.param("1", id="longer than declared"), pytest.param("9", id="shorter")]


@pytest.mark.parametrize("declared", DECLARED_LENGTHS)
def test_a_body_unlike_its_declared_length_is_h11_s_error_as_httpcore_raises_it(
    scripted: Callable[[list[bytes | None]], Scripted], declared: str
) -> None:
    """The caller's bug, not a network failure: h11's own error, as httpx's own transport
    raises it, never one of httpx's (which paysdk reads as a failed connection)."""
    server = scripted([None, None])  # hangs up on each: nothing written to a closed socket
    headers = {"Content-Length": declared}
    for transport in (httpx.HTTPTransport(), PoolTransport(default_network())):
        with httpx.Client(transport=transport) as http:
            with pytest.raises(h11.LocalProtocolError) as caught:
                http.post(server.url, content=b"abc", headers=headers)
            assert not isinstance(caught.value, httpx.TransportError)


@pytest.mark.parametrize("declared", DECLARED_LENGTHS)
async def test_a_body_unlike_its_declared_length_is_h11_s_error_to_the_async_client(
    scripted: Callable[[list[bytes | None]], Scripted], declared: str
) -> None:
    server = scripted([None, None])  # hangs up on each: nothing written to a closed socket
    headers = {"Content-Length": declared}
    for transport in (httpx.AsyncHTTPTransport(), own_transport()):
        async with httpx.AsyncClient(transport=transport) as http:
            with pytest.raises(h11.LocalProtocolError) as caught:
                await http.post(server.url, content=b"abc", headers=headers)
            assert not isinstance(caught.value, httpx.TransportError)


@pytest.fixture
def h2_sandbox(tls_ca: trustme.CA) -> Iterator[Sandbox]:
    """A TLS sandbox whose handshake picks HTTP/2 (ALPN ``h2``) whenever the client offers it;
    it speaks HTTP/1.1 all the same, so a test can read what was agreed."""
    context = server_context(tls_ca)
    context.set_alpn_protocols(["h2", "http/1.1"])
    with Sandbox(ssl_context=context) as running:
        yield running


def _agreed(response: httpx.Response) -> str | None:
    """The protocol the response's TLS handshake agreed on (ALPN)."""
    tls = response.extensions["network_stream"].get_extra_info("ssl_object")
    agreed: str | None = tls.selected_alpn_protocol()  # an SSLObject, or _ssl's own object
    return agreed


H2_TOO = ["http/1.1", "h2"]
"""What httpcore offers on the context, at each of its connects, for a client with HTTP/2 on
(``httpx.Client(http2=True, verify=context)``): the merchant's, sharing paysdk's context."""


def test_a_new_connection_offers_http_1_1_alone_whatever_the_shared_context_was_set_to(
    h2_sandbox: Sandbox, tls_client_context: ssl.SSLContext
) -> None:
    """The context given as ``verify`` may be shared with a client that offers HTTP/2 on it:
    a connection that agreed on it would speak HTTP/1.1 to an HTTP/2 server."""
    url = f"{h2_sandbox.base_url}/payment/{COMPLETED_REFERENCE}"
    network = Network(tls_client_context, None, trust_env=False)
    with httpx.Client(transport=PoolTransport(network)) as http:
        with http.stream("GET", url, headers={"Connection": "close"}) as first:
            assert _agreed(first) == "http/1.1"
        tls_client_context.set_alpn_protocols(H2_TOO)
        with http.stream("GET", url) as second:
            assert _agreed(second) == "http/1.1"


async def test_a_new_async_connection_offers_http_1_1_alone_whatever_the_context_was_set_to(
    h2_sandbox: Sandbox, tls_client_context: ssl.SSLContext
) -> None:
    url = f"{h2_sandbox.base_url}/payment/{COMPLETED_REFERENCE}"
    network = Network(tls_client_context, None, trust_env=False)
    for backend in (httpcore.AnyIOBackend(), AsyncioBackend()):
        async with httpx.AsyncClient(transport=own_transport(network, backend)) as http:
            async with http.stream("GET", url, headers={"Connection": "close"}) as first:
                assert _agreed(first) == "http/1.1"
            tls_client_context.set_alpn_protocols(H2_TOO)
            async with http.stream("GET", url) as second:
                assert _agreed(second) == "http/1.1"


@pytest.fixture
def silent_tls_url() -> Iterator[str]:
    """An ``https`` URL on 127.0.0.1 whose server takes connections (the kernel's backlog)
    and never answers: a TLS handshake there waits until it is given up."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield f"https://127.0.0.1:{listener.getsockname()[1]}/"


class RecordingBackend(httpcore.AnyIOBackend):
    """httpcore's anyio backend (uvloop's, and the fallback's), keeping each plain stream it
    connects: its ``start_tls`` leaves one open if the handshake is cancelled."""

    def __init__(self) -> None:
        self.streams: list[httpcore.AsyncNetworkStream] = []

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore.AsyncNetworkStream:
        stream = await super().connect_tcp(*args, **kwargs)
        self.streams.append(stream)
        return stream


def _is_shut(stream: httpcore.AsyncNetworkStream | httpcore.NetworkStream) -> bool:
    """Whether the stream's socket (a ``socket.socket``, or asyncio's view of one) is closed."""
    fileno: int = stream.get_extra_info("socket").fileno()
    return fileno == -1


async def test_a_tls_handshake_cancelled_closes_the_plain_connection_under_it(
    silent_tls_url: str, tls_client_context: ssl.SSLContext
) -> None:
    backend = RecordingBackend()
    origin = httpcore.URL(silent_tls_url).origin
    connection = AsyncDirectConnection(origin, backend, tls_client_context, None)
    with anyio.move_on_after(0.2):
        await connection.handle_async_request(httpcore.Request("GET", silent_tls_url))
    assert connection.is_closed()
    [plain] = backend.streams
    for _ in range(100):  # asyncio closes a transport's socket a loop turn later
        if _is_shut(plain):
            break
        await anyio.sleep(0.01)
    assert _is_shut(plain)


class SlowBackend(httpcore.SyncBackend):
    """httpcore's sync backend, keeping each plain stream it connects, whose connects end
    just past a deadline 50 ms away."""

    def __init__(self) -> None:
        self.streams: list[httpcore.NetworkStream] = []

    def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        stream = super().connect_tcp(*args, **kwargs)
        self.streams.append(stream)
        time.sleep(0.1)
        return stream


def test_a_deadline_passed_before_the_tls_handshake_closes_the_plain_connection(
    silent_tls_url: str, tls_client_context: ssl.SSLContext
) -> None:
    """The sync client's deadline backend refuses to start a handshake past the attempt's
    deadline, and closes the connection it was given, as a failed handshake would."""
    backend = SlowBackend()
    origin = httpcore.URL(silent_tls_url).origin
    bounded = deadline._deadline_backend()(backend)
    pool = httpcore.ConnectionPool(ssl_context=tls_client_context, network_backend=bounded)
    connection = pool.create_connection(origin)
    with (
        deadline.attempt_deadline(time.monotonic() + 0.05),
        pytest.raises(httpcore.ConnectTimeout),
    ):
        connection.handle_request(httpcore.Request("GET", silent_tls_url))
    assert connection.is_closed()
    [plain] = backend.streams
    assert _is_shut(plain)


class HeldBackend(httpcore.AnyIOBackend):
    """httpcore's anyio backend, keeping each stream it connects, which it hands over only
    once ``proceed`` is set."""

    def __init__(self) -> None:
        self.streams: list[httpcore.AsyncNetworkStream] = []
        self.connected = anyio.Event()
        self.proceed = anyio.Event()

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore.AsyncNetworkStream:
        stream = await super().connect_tcp(*args, **kwargs)
        self.streams.append(stream)
        self.connected.set()
        await self.proceed.wait()
        return stream


@pytest.mark.parametrize("own", [True, False], ids=["paysdk's connections", "httpcore's"])
async def test_a_connection_the_transport_closed_while_it_connected_is_not_kept_open(
    scripted: Callable[[list[bytes | None]], Scripted], own: bool
) -> None:
    """Closing the transport closes each connection; one still connecting has no socket to
    close yet, so the one it opens is closed once its answer is read."""
    server = scripted([OK])
    backend = HeldBackend()
    transport = (
        own_transport(backend=backend)
        if own
        else AsyncPoolTransport(default_network(), direct_backend=backend)
    )
    async with httpx.AsyncClient(transport=transport) as http, anyio.create_task_group() as group:
        group.start_soon(http.get, server.url)
        await backend.connected.wait()
        await transport.aclose()
        backend.proceed.set()
    [stream] = backend.streams
    for _ in range(100):  # asyncio closes a transport's socket a loop turn later
        if _is_shut(stream):
            break
        await anyio.sleep(0.01)
    assert _is_shut(stream)


class HeldSyncBackend(httpcore.SyncBackend):
    """httpcore's sync backend, keeping each stream it connects, which it hands over only
    once ``proceed`` is set."""

    def __init__(self) -> None:
        self.streams: list[httpcore.NetworkStream] = []
        self.connected = threading.Event()
        self.proceed = threading.Event()

    def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        stream = super().connect_tcp(*args, **kwargs)
        self.streams.append(stream)
        self.connected.set()
        self.proceed.wait(5)
        return stream


def test_a_connection_the_transport_closed_in_another_thread_while_it_connected_is_closed(
    scripted: Callable[[list[bytes | None]], Scripted],
) -> None:
    server = scripted([OK])
    backend = HeldSyncBackend()
    transport = PoolTransport(default_network(), direct_backend=backend)
    with httpx.Client(transport=transport) as http:
        sending = threading.Thread(target=http.get, args=(server.url,))
        sending.start()
        assert backend.connected.wait(5)
        transport.close()
        backend.proceed.set()
        sending.join(5)
    [stream] = backend.streams
    assert _is_shut(stream)

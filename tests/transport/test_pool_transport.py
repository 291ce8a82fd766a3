"""paysdk's own httpx transport: httpx's requests as httpcore's, httpcore's answers and failures
as httpx's, over paysdk's pools, with no help from httpx's own transport."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import httpcore
import httpx
import pytest

import paysdk
from paysdk._transport._async.pool import AsyncPools, AsyncPoolTransport
from paysdk._transport._sync.pool import Pools, PoolTransport
from paysdk._transport.httpcore_edge import HTTPCORE_TO_HTTPX, httpx_error
from paysdk._transport.network import Network
from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox
from tests.support.ports import unused_port

pytestmark = pytest.mark.anyio


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with Sandbox() as running:
        yield running


def _network() -> Network:
    return Network(True, None, trust_env=False)


def _opened(pools: AsyncPools | Pools | None) -> int:
    """How many connections the pools opened, over every route."""
    assert pools is not None
    return sum(connections.opened for connections in pools.by_route.values())


def test_each_httpcore_exception_becomes_the_httpx_exception_of_its_name() -> None:
    """Every httpcore exception maps to httpx's class of the same name, the most specific one
    (a ``ConnectTimeout`` is not merely a ``TimeoutException``), with its message and request."""
    request = httpx.Request("GET", "http://127.0.0.1/")
    assert len(HTTPCORE_TO_HTTPX) == 14
    for core, expected in HTTPCORE_TO_HTTPX.items():
        assert core.__name__ == expected.__name__
        mapped = httpx_error(core("what went wrong"), request)
        assert mapped is not None
        assert type(mapped) is expected
        assert str(mapped) == "what went wrong"
        assert mapped.request is request


def test_the_table_is_httpx_s_own() -> None:
    """paysdk's table is the one httpx's own transport maps by (private to httpx, so read here
    alone): an httpx that maps another exception is noticed. httpx 0.28 builds it in
    ``_load_httpcore_exceptions``; the lowest httpx declared holds it as ``HTTPCORE_EXC_MAP``."""
    from httpx._transports import default

    load = getattr(default, "_load_httpcore_exceptions", None)
    table = load() if load is not None else getattr(default, "HTTPCORE_EXC_MAP")  # noqa: B009
    assert table == HTTPCORE_TO_HTTPX


def test_a_subclass_of_an_httpcore_exception_maps_as_its_nearest_base() -> None:
    class Refused(httpcore.ConnectError):
        pass

    mapped = httpx_error(Refused("no"), httpx.Request("GET", "http://127.0.0.1/"))
    assert type(mapped) is httpx.ConnectError


def test_any_other_exception_is_left_as_it_was() -> None:
    request = httpx.Request("GET", "http://127.0.0.1/")
    assert httpx_error(KeyError("bug"), request) is None
    assert httpx_error(httpx.ReadError("already httpx's"), request) is None


def test_a_request_and_its_answer_cross_the_transport_whole(sandbox: Sandbox) -> None:
    """URL, query, headers and status go out and come back as sent; the body is streamed and
    closing it gives the connection back for the next request."""
    transport = PoolTransport(_network())
    with httpx.Client(transport=transport) as http:
        url = f"{sandbox.base_url}/payment/{COMPLETED_REFERENCE}?x=%2F1"
        with http.stream("GET", url, headers={"Authorization": "Bearer nope"}) as response:
            assert response.status_code == 401
            assert response.headers["content-type"].startswith("application/json")
            assert b"".join(response.iter_raw())
        again = http.get(f"{sandbox.base_url}/payment/{COMPLETED_REFERENCE}")
        assert again.status_code == 401
        assert _opened(transport.routes._pools.current()) == 1


async def test_the_async_transport_sends_and_reads_as_the_sync_one(sandbox: Sandbox) -> None:
    transport = AsyncPoolTransport(_network())
    async with httpx.AsyncClient(transport=transport) as http:
        for _ in range(2):
            response = await http.get(f"{sandbox.base_url}/payment/{COMPLETED_REFERENCE}")
            assert response.status_code == 401
            assert response.json()["success"] is False
        assert _opened(transport.routes._pools.current()) == 1


def test_httpcore_s_failures_reach_the_client_as_httpx_s() -> None:
    """A refused connection is httpx's ``ConnectError``, carrying the request; httpcore's
    exception is its cause."""
    url = f"http://127.0.0.1:{unused_port()}/"
    with (
        httpx.Client(transport=PoolTransport(_network())) as http,
        pytest.raises(httpx.ConnectError) as caught,
    ):
        http.get(url)
    assert isinstance(caught.value.__cause__, httpcore.ConnectError)
    assert caught.value.request.url == url


async def test_httpcore_s_failures_reach_the_async_client_as_httpx_s() -> None:
    url = f"http://127.0.0.1:{unused_port()}/"
    async with httpx.AsyncClient(transport=AsyncPoolTransport(_network())) as http:
        with pytest.raises(httpx.ConnectError) as caught:
            await http.get(url)
    assert isinstance(caught.value.__cause__, httpcore.ConnectError)
    assert caught.value.request.url == url


async def test_paysdk_s_clients_do_not_send_through_httpx_s_own_transport(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The clients paysdk makes send through its transport alone: httpx's ``HTTPTransport``,
    whatever becomes of it, is not in the way."""

    def refuse(*args: object, **kwargs: object) -> httpx.Response:
        raise AssertionError("httpx's own transport was used")

    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", refuse)
    monkeypatch.setattr(httpx.AsyncHTTPTransport, "handle_async_request", refuse)
    with paysdk.Client(secret_key=sandbox.secret_key, base_url=sandbox.base_url) as client:
        assert client.verify(COMPLETED_REFERENCE).reference == COMPLETED_REFERENCE
    async with paysdk.AsyncClient(
        secret_key=sandbox.secret_key, base_url=sandbox.base_url
    ) as aclient:
        assert (await aclient.verify(COMPLETED_REFERENCE)).reference == COMPLETED_REFERENCE


@pytest.fixture
def cut_short() -> Iterator[str]:
    """A loopback server that promises 100 bytes of body, sends 10 and hangs up, for each
    connection; its URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    port = listener.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}/"
    stop.set()
    thread.join(timeout=5)
    listener.close()


def test_a_body_cut_short_fails_as_httpx_s_exception(cut_short: str) -> None:
    """A failure while the body streams is httpx's too, from the response's stream."""
    with (
        httpx.Client(transport=PoolTransport(_network())) as http,
        http.stream("GET", cut_short) as response,
        pytest.raises(httpx.RemoteProtocolError) as caught,
    ):
        response.read()
    assert isinstance(caught.value.__cause__, httpcore.RemoteProtocolError)


async def test_a_body_cut_short_fails_as_httpx_s_exception_in_the_async_client(
    cut_short: str,
) -> None:
    async with (
        httpx.AsyncClient(transport=AsyncPoolTransport(_network())) as http,
        http.stream("GET", cut_short) as response,
    ):
        with pytest.raises(httpx.RemoteProtocolError) as caught:
            await response.aread()
    assert isinstance(caught.value.__cause__, httpcore.RemoteProtocolError)

"""A bug is not an outage: on every backend, an exception the HTTP library does not document as a
network failure reaches the caller as it was raised, after one attempt, and is not logged as a
retry; a real network failure on the same setup is retried and is an ``APIConnectionError``.

The bug is injected into the library where paysdk calls it (sending, then reading the body),
after the request went out, so the loopback server's count of requests shows any retry.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import aiohttp
import httpcore
import httpx
import pytest

import paysdk
from paysdk._transport._async.pool import AsyncRoutes
from paysdk._transport._sync.pool import Routes
from tests.conftest import EitherClient, MakeClient, listed_body, verify_body
from tests.support.hostile import Behaviour, Connection, HostileServer, Request, reset, respond_json
from tests.support.ports import unused_port

pytestmark = pytest.mark.anyio

REFERENCE = "order-1042"


def ok() -> Behaviour:
    """The documented 200 of whichever endpoint was asked."""
    verify = respond_json(200, verify_body(REFERENCE))
    listing = respond_json(200, {"data": [listed_body(REFERENCE)]})

    def behave(conn: Connection, request: Request) -> bool:
        return (verify if request.path.startswith("/payment/") else listing)(conn, request)

    return behave


async def verify(client: EitherClient) -> object:
    return await client.verify(REFERENCE)


async def list_payments(client: EitherClient) -> object:
    return await client.list_payments()


async def iter_payments(client: EitherClient) -> object:
    return await client.drain()


CALLS = {"verify": verify, "list_payments": list_payments, "iter_payments": iter_payments}
Call = Callable[[EitherClient], Any]


@pytest.fixture(params=list(CALLS))
def call(request: pytest.FixtureRequest) -> Call:
    """Each way a call reads its answer: whole (verify, list_payments) or streamed."""
    return CALLS[request.param]


class Broken:
    """An iterator, sync and async, whose first step raises ``error``: a body that cannot be
    read because of a bug."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        raise self.error

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        raise self.error


class Injected:
    """Where the bug was raised: one entry per call of a patched function."""

    def __init__(self, error: TypeError) -> None:
        self.error = error
        self.calls: list[str] = []


@pytest.fixture
def bug_in_send(monkeypatch: pytest.MonkeyPatch) -> Injected:
    """The method each backend sends with (the clients' own pools ``Routes.handle_request`` and
    ``AsyncRoutes.handle_async_request``, ``aiohttp.ClientSession.request``) sends the request,
    then raises a TypeError. Not httpx's client's ``send``: replacing it has paysdk's own
    clients send through it (``sends_past``), and the bug would be injected twice."""
    injected = Injected(TypeError("send() got an unexpected keyword argument 'stream'"))
    sync_routes_send, routes_send = Routes.handle_request, AsyncRoutes.handle_async_request
    aiohttp_request = aiohttp.ClientSession.request

    def routes_sync_send(self: Routes, request: httpcore.Request) -> httpcore.Response:
        injected.calls.append("Routes.handle_request")
        sync_routes_send(self, request).close()
        raise injected.error

    async def asend(self: AsyncRoutes, request: httpcore.Request) -> httpcore.Response:
        injected.calls.append("AsyncRoutes.handle_async_request")
        await (await routes_send(self, request)).aclose()
        raise injected.error

    async def arequest(
        self: aiohttp.ClientSession, method: str, url: Any, **kwargs: Any
    ) -> aiohttp.ClientResponse:
        injected.calls.append("aiohttp.ClientSession.request")
        (await aiohttp_request(self, method, url, **kwargs)).release()
        raise injected.error

    monkeypatch.setattr(Routes, "handle_request", routes_sync_send)
    monkeypatch.setattr(AsyncRoutes, "handle_async_request", asend)
    monkeypatch.setattr(aiohttp.ClientSession, "request", arequest)
    return injected


@pytest.fixture
def bug_in_body(monkeypatch: pytest.MonkeyPatch) -> Injected:
    """Reading an answer's body raises a TypeError, where each backend reads it: httpx's
    ``Response.iter_raw``, httpcore's ``Response.iter_stream`` and ``aiter_stream`` (the
    clients' own), aiohttp's ``StreamReader.iter_any`` (a stream, or a body of unknown length) and
    ``ClientResponse.read`` (a body of known length)."""
    injected = Injected(TypeError("'NoneType' object is not subscriptable"))

    def patch(owner: type, name: str, asynchronous: bool = False) -> None:
        label = f"{owner.__module__.split('.')[0]}.{owner.__name__}.{name}"

        def broken(self: object, *args: Any, **kwargs: Any) -> Broken:
            injected.calls.append(label)
            return Broken(injected.error)

        async def broken_read(self: object) -> bytes:
            injected.calls.append(label)
            raise injected.error

        monkeypatch.setattr(owner, name, broken_read if asynchronous else broken)

    patch(httpx.Response, "iter_raw")
    patch(httpcore.Response, "iter_stream")
    patch(httpcore.Response, "aiter_stream")
    patch(aiohttp.StreamReader, "iter_any")
    patch(aiohttp.ClientResponse, "read", asynchronous=True)
    return injected


def retry_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the ``paysdk`` logger said about retrying."""
    said = [record.getMessage() for record in caplog.records if record.name == "paysdk"]
    return [message for message in said if "retry" in message]


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """The ``paysdk`` logger's records, from DEBUG (each send) and INFO (each retry) up."""
    caplog.set_level(logging.DEBUG, logger="paysdk")
    return caplog


@pytest.fixture(params=["bug_in_send", "bug_in_body"])
def bug(request: pytest.FixtureRequest) -> Injected:
    """A bug where the request is sent, or where its answer's body is read."""
    injected = request.getfixturevalue(request.param)
    assert isinstance(injected, Injected)
    return injected


async def test_a_bug_reaches_the_caller_after_one_attempt(
    call: Call,
    bug: Injected,
    hostile: HostileServer,
    make_loopback_client: MakeClient,
    logs: pytest.LogCaptureFixture,
) -> None:
    """The TypeError itself, after one request, with no wait and no retry logged: a bug is not
    an outage, whether it is raised sending or reading the body."""
    hostile.script(ok())
    client = make_loopback_client(base_url=hostile.base_url, max_retries=2)
    with pytest.raises(TypeError) as caught:
        await call(client)
    assert caught.value is bug.error
    assert len(bug.calls) == 1, bug.calls
    assert hostile.attempts == 1
    assert client.sleeps == []
    assert retry_lines(logs) == []


async def test_a_reset_connection_on_the_same_setup_is_an_outage_and_retried(
    call: Call,
    hostile: HostileServer,
    make_loopback_client: MakeClient,
    logs: pytest.LogCaptureFixture,
) -> None:
    hostile.script(reset())
    client = make_loopback_client(base_url=hostile.base_url, max_retries=2)
    with pytest.raises(paysdk.APIConnectionError) as caught:
        await call(client)
    assert caught.value.attempts == 3
    assert hostile.attempts == 3
    assert len(client.sleeps) == 2
    assert len(retry_lines(logs)) == 2


async def test_a_refused_connection_is_an_outage_and_retried(
    call: Call, make_loopback_client: MakeClient, logs: pytest.LogCaptureFixture
) -> None:
    port = unused_port()
    client = make_loopback_client(base_url=f"http://127.0.0.1:{port}", max_retries=2)
    with pytest.raises(paysdk.APIConnectionError) as caught:
        await call(client)
    assert caught.value.attempts == 3
    assert len(client.sleeps) == 2
    assert len(retry_lines(logs)) == 2

"""The httpx ``AsyncClient`` paysdk makes itself sends each untraced attempt straight to its own
pools as httpcore's request: no ``httpx.Request`` is built and ``httpx.AsyncClient.send`` is
never called, yet calls, streams, retries, timeouts and failures behave as through httpx. A
merchant's client, and paysdk's own while OpenTelemetry's httpx instrumentation is on, still
send through httpx."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from types import SimpleNamespace
from typing import Any

import httpcore
import httpx
import pytest

import paysdk
from paysdk._core.config import SealedHeaders, Timeout
from paysdk._core.steps import Send
from paysdk._transport import httpx_tracing
from paysdk._transport._async.pool import AsyncPoolTransport
from paysdk._transport.httpx_async import own_async_client
from paysdk._transport.httpx_common import HttpxDefaults, RequestBuilder, failure_from_httpcore
from paysdk._transport.network import Network
from paysdk.sandbox import COMPLETED_REFERENCE, Fault, Sandbox
from tests.support.ports import unused_port

pytestmark = pytest.mark.anyio


class Sends:
    """How many times ``httpx.AsyncClient.send`` was called."""

    def __init__(self) -> None:
        self.count = 0


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with Sandbox() as running:
        yield running


@pytest.fixture
def no_httpx_machinery(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building an ``httpx.Request`` or asking ``httpx.AsyncClient`` to build one raises (not
    its ``send``: a replaced ``send``, a tracer's, has the client send through it)."""

    def refused(*args: object, **kwargs: object) -> Any:
        raise AssertionError("httpx's request machinery was used")

    monkeypatch.setattr(httpx.Request, "__init__", refused)
    monkeypatch.setattr(httpx.AsyncClient, "build_request", refused)


@pytest.fixture
def sends(monkeypatch: pytest.MonkeyPatch) -> Sends:
    """The requests ``httpx.AsyncClient`` builds, each sent through it, counted (not by its
    ``send``: a replaced ``send``, a tracer's, has the client send through it)."""
    counted = Sends()
    build = httpx.AsyncClient.build_request

    def counting(self: httpx.AsyncClient, *args: Any, **kwargs: Any) -> httpx.Request:
        counted.count += 1
        return build(self, *args, **kwargs)

    monkeypatch.setattr(httpx.AsyncClient, "build_request", counting)
    return counted


@pytest.fixture
async def client(sandbox: Sandbox) -> AsyncIterator[paysdk.AsyncClient]:
    async with paysdk.AsyncClient(
        secret_key=sandbox.secret_key, base_url=sandbox.base_url, max_retries=1
    ) as made:
        yield made


@pytest.mark.usefixtures("no_httpx_machinery")
async def test_calls_and_streams_go_past_httpx_s_client(
    client: paysdk.AsyncClient, sandbox: Sandbox
) -> None:
    payment = await client.verify(COMPLETED_REFERENCE)
    assert payment.reference == COMPLETED_REFERENCE
    listed = await client.list_payments()
    streamed = [p async for p in client.iter_payments()]
    assert [p.reference for p in streamed] == [p.reference for p in listed]
    assert len(sandbox.requests) == 3
    for seen in sandbox.requests:
        assert seen.headers["User-Agent"].startswith("paysdk/")


@pytest.mark.usefixtures("no_httpx_machinery")
async def test_a_retry_and_a_timeout_go_past_httpx_s_client(
    client: paysdk.AsyncClient, sandbox: Sandbox
) -> None:
    sandbox.inject(Fault.server_error(503), path=f"/payment/{COMPLETED_REFERENCE}", times=1)
    assert (await client.verify(COMPLETED_REFERENCE)).reference == COMPLETED_REFERENCE
    assert len(sandbox.requests) == 2
    sandbox.inject(Fault(delay=2.0), path="/payments", times=1)
    with pytest.raises(paysdk.APITimeoutError):
        await client.with_options(timeout=0.2, max_retries=0).list_payments()
    sandbox.inject(Fault(delay=2.0), path="/payments", times=1)
    with pytest.raises(paysdk.APITimeoutError):
        [p async for p in client.with_options(timeout=0.2, max_retries=0).iter_payments()]


async def test_a_refused_connection_is_the_same_failure_past_httpx_s_client(sends: Sends) -> None:
    """As through httpx's client, its httpx exception carries the request (its method and URL;
    not the headers, which hold the key)."""
    port = unused_port()
    async with paysdk.AsyncClient(
        secret_key="sk_test_x", base_url=f"http://127.0.0.1:{port}", max_retries=0
    ) as client:
        with pytest.raises(paysdk.APIConnectionError) as caught:
            await client.verify(COMPLETED_REFERENCE)
    cause = caught.value.__cause__
    assert isinstance(cause, httpx.ConnectError)
    assert (cause.request.method, str(cause.request.url)) == (
        "GET",
        f"http://127.0.0.1:{port}/payment/{COMPLETED_REFERENCE}",
    )
    assert "authorization" not in cause.request.headers
    assert sends.count == 0


async def test_a_merchant_s_client_still_sends_through_httpx(
    sandbox: Sandbox, sends: Sends
) -> None:
    async with (
        httpx.AsyncClient() as http,
        paysdk.AsyncClient(
            secret_key=sandbox.secret_key, base_url=sandbox.base_url, http_client=http
        ) as client,
    ):
        await client.verify(COMPLETED_REFERENCE)
        assert [p async for p in client.iter_payments()]
    assert sends.count == 2


async def test_while_httpx_is_instrumented_paysdk_s_client_sends_through_httpx(
    client: paysdk.AsyncClient, sends: Sends, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The instrumentation's tracing transport (a stand-in here) sees each attempt."""
    traced: list[str] = []

    class Tracing(httpx.AsyncBaseTransport):
        def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
            self.transport = transport

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            traced.append(request.url.path)
            return await self.transport.handle_async_request(request)

    module = SimpleNamespace(AsyncOpenTelemetryTransport=Tracing)
    monkeypatch.setattr(httpx_tracing, "instrumentation", lambda: module)
    await client.verify(COMPLETED_REFERENCE)
    assert sends.count == 1
    assert traced == [f"/payment/{COMPLETED_REFERENCE}"]


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize(
    "headers",
    [
        {"user-agent": "paysdk/1", "authorization": "Bearer sk_test_x"},
        {"user-agent": "paysdk/2", "authorization": "Bearer sk_test_x", "x-extra": "1"},
        {"authorization": "Bearer sk_test_x", "host": "elsewhere.test"},
    ],
)
async def test_httpcore_s_request_is_the_one_httpx_would_hand_its_transport(
    method: str, headers: dict[str, str]
) -> None:
    """Method, URL, headers in their order, and timeouts, as ``httpx.AsyncClient`` builds them
    from the same client and step, a per-call timeout too."""
    defaults = HttpxDefaults({"user-agent": "paysdk/1", "x-fixed": "yes"}, Timeout(5, 6, 7, 8))
    network = Network(True, None, trust_env=False)
    async with own_async_client(AsyncPoolTransport(network), defaults) as http:
        builder = RequestBuilder(defaults)
        for url, timeout in (
            ("https://api.example.test/payment/a%2Fb?x=1", Timeout(5, 6, 7, 8)),
            ("http://127.0.0.1:8080/payments", Timeout(1, None, 2, 3)),
        ):
            step = Send(method, url, SealedHeaders(headers), timeout)
            core = builder.core(http, step)
            through = builder.build(http, step)
            assert core.method == through.method.encode()
            assert core.url.scheme == through.url.raw_scheme
            assert core.url.host == through.url.raw_host
            assert core.url.port == through.url.port
            assert core.url.target == through.url.raw_path
            assert core.headers == through.headers.raw
            timeouts = through.extensions.get("timeout") or http.timeout.as_dict()
            assert core.extensions == {"timeout": timeouts}


def test_an_httpcore_failure_is_read_as_the_httpx_one_it_stands_for() -> None:
    sent = Send(
        "GET", "https://api.example.test/payment/ref-1", SealedHeaders({}), Timeout(5, 6, 7, 8)
    )
    original = httpcore.ConnectTimeout("too slow")
    failure = failure_from_httpcore(original, sent)
    assert failure is not None
    assert failure.kind == "timeout"
    assert type(failure.cause) is httpx.ConnectTimeout
    assert failure.cause.__cause__ is original
    assert str(failure.cause.request.url) == sent.url
    refused = failure_from_httpcore(httpcore.ConnectError("refused"), sent)
    assert refused is not None
    assert (refused.kind, refused.detail) == ("connect", "refused")
    assert failure_from_httpcore(KeyError("a bug"), sent) is None

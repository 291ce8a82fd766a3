"""paysdk's OpenTelemetry spans over loopback against the sandbox, on every backend.

The spans go to an in-memory exporter on a provider of this module's own, which paysdk's tracer
is pointed at for each test (monkeypatched): the process-wide provider is never set, so no
other test records spans. Each test runs sync, async and async over aiohttp through conftest's
``make_loopback_client`` (which records backoff waits instead of sleeping).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from opentelemetry import trace
from opentelemetry.instrumentation.aiohttp_client import AioHttpClientInstrumentor
from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import paysdk
from paysdk._client import tracing
from paysdk.ledger import AsyncLedger, Ledger, Outcome
from paysdk.sandbox import (
    COMPLETED_REFERENCE,
    NOT_FOUND_BODY,
    UNKNOWN_REFERENCE,
    Fault,
    Sandbox,
)
from tests.conftest import EitherClient, MakeClient
from tests.support.hostile import HostileServer, raw
from tests.support.ports import unused_port

pytestmark = pytest.mark.anyio

KEY = "sk_test_0tel-Never-In-A-Span-7Qx"
"""The sandbox's key: distinctive, so a span that carried it would be found."""


@pytest.fixture(scope="module")
def provider() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """This module's tracer provider and the exporter that keeps what it records."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


@pytest.fixture
def spans(
    provider: tuple[TracerProvider, InMemorySpanExporter], monkeypatch: pytest.MonkeyPatch
) -> Iterator[InMemorySpanExporter]:
    """The exporter, empty, with paysdk's calls traced on this module's provider."""
    tracer_provider, exporter = provider
    tracer = tracer_provider.get_tracer("paysdk", paysdk.__version__)
    monkeypatch.setattr(tracing, "_tracer", lambda _trace: tracer)
    exporter.clear()
    yield exporter
    exporter.clear()


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    """A running sandbox whose key is :data:`KEY`."""
    with Sandbox(secret_key=KEY) as running:
        yield running


def paysdk_spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [span for span in exporter.get_finished_spans() if span.name.startswith("paysdk.")]


def only(exporter: InMemorySpanExporter, name: str) -> ReadableSpan:
    """The one finished paysdk span, which must be named ``name``."""
    finished = paysdk_spans(exporter)
    assert [span.name for span in finished] == [name]
    return finished[0]


def attributes(span: ReadableSpan) -> dict[str, Any]:
    """The span's attributes but the request id, which the sandbox makes up anew for each
    answer: :func:`test_a_verify_is_one_span_with_its_reference_attempts_and_status` checks it."""
    return {k: v for k, v in (span.attributes or {}).items() if k != "paysdk.request_id"}


def retries(span: ReadableSpan) -> list[tuple[Any, Any]]:
    return [
        (
            dict(event.attributes or {})["paysdk.retry.reason"],
            (event.attributes or {})["paysdk.retry.wait_s"],
        )
        for event in span.events
        if event.name == "retry"
    ]


def assert_no_key(exporter: InMemorySpanExporter) -> None:
    """No span, attribute or event of any finished span holds the key."""
    for span in exporter.get_finished_spans():
        texts = [span.name, *map(str, attributes(span).items())]
        for event in span.events:
            texts += [event.name, *map(str, dict(event.attributes or {}).items())]
        if span.status.description:
            texts.append(span.status.description)
        assert not [text for text in texts if KEY in text], span.name


async def test_a_verify_is_one_span_with_its_reference_attempts_and_status(
    connect: MakeClient, spans: InMemorySpanExporter, sandbox: Sandbox
) -> None:
    """A plain verify: one ``paysdk.verify`` span, one attempt, the answer's status and request
    id, no error."""
    await connect().verify(COMPLETED_REFERENCE)
    span = only(spans, "paysdk.verify")
    (request,) = sandbox.requests
    assert (span.attributes or {})["paysdk.request_id"] == request.request_id
    assert attributes(span) == {
        "paysdk.reference": COMPLETED_REFERENCE,
        "paysdk.attempts": 1,
        "http.response.status_code": 200,
    }
    assert span.status.status_code is StatusCode.UNSET
    assert span.kind is SpanKind.INTERNAL
    assert span.instrumentation_scope is not None
    assert span.instrumentation_scope.name == "paysdk"
    assert span.events == ()
    assert_no_key(spans)


async def test_retries_are_events_with_their_reason_and_the_wait(
    sandbox: Sandbox, connect: MakeClient, spans: InMemorySpanExporter
) -> None:
    """Two 500s then the payment: three attempts, two ``retry`` events with the waits slept."""
    sandbox.inject(Fault.server_error(), path=f"/payment/{COMPLETED_REFERENCE}", times=2)
    client = connect(max_retries=2)
    await client.verify(COMPLETED_REFERENCE)
    span = only(spans, "paysdk.verify")
    assert attributes(span)["paysdk.attempts"] == 3
    assert attributes(span)["http.response.status_code"] == 200
    assert len(client.sleeps) == 2
    assert retries(span) == [("HTTP 500", wait) for wait in client.sleeps]
    assert span.status.status_code is StatusCode.UNSET


async def test_a_failed_call_is_an_error_span_with_its_type_and_request_id(
    sandbox: Sandbox, connect: MakeClient, spans: InMemorySpanExporter
) -> None:
    """A 404 ends the span in ERROR with ``error.type``, the status and the X-Request-Id."""
    headers = {"X-Request-Id": "req_otel_404"}
    sandbox.inject(
        Fault.json(404, dict(NOT_FOUND_BODY), headers), path=f"/payment/{UNKNOWN_REFERENCE}"
    )
    with pytest.raises(paysdk.PaymentNotFoundError):
        await connect().verify(UNKNOWN_REFERENCE)
    span = only(spans, "paysdk.verify")
    assert (span.attributes or {})["paysdk.request_id"] == "req_otel_404"
    assert attributes(span) == {
        "paysdk.reference": UNKNOWN_REFERENCE,
        "paysdk.attempts": 1,
        "http.response.status_code": 404,
        "error.type": "paysdk.PaymentNotFoundError",
    }
    assert span.status.status_code is StatusCode.ERROR
    assert_no_key(spans)


async def test_a_hostile_request_id_reaches_the_span_blotted_and_cut(
    sandbox: Sandbox, connect: MakeClient, spans: InMemorySpanExporter
) -> None:
    """A request id that echoes the key, holds a character beyond ASCII and runs to thousands
    of characters is, on the span, one short printable ASCII line without the key."""
    headers = {"X-Request-Id": f"req-\xe9-{KEY}" + "x" * 5000}
    sandbox.inject(
        Fault.json(404, dict(NOT_FOUND_BODY), headers), path=f"/payment/{UNKNOWN_REFERENCE}"
    )
    with pytest.raises(paysdk.PaymentNotFoundError):
        await connect().verify(UNKNOWN_REFERENCE)
    shown = str((only(spans, "paysdk.verify").attributes or {})["paysdk.request_id"])
    assert shown.startswith("req-?-<secret key>xxx")
    assert len(shown) == 200 and shown.isprintable() and shown.isascii()
    assert_no_key(spans)


async def test_the_request_id_is_the_last_answers_even_when_it_had_none(
    sandbox: Sandbox, connect: MakeClient, spans: InMemorySpanExporter
) -> None:
    """A 503 with an id, retried into a 404 without one: the span shows the 404 and no id."""
    path = f"/payment/{UNKNOWN_REFERENCE}"
    busy = {"status": False, "message": "busy"}
    sandbox.inject(Fault.json(503, busy, {"X-Request-Id": "req_the_503"}), path=path)
    sandbox.inject(Fault.json(404, dict(NOT_FOUND_BODY), {"X-Request-Id": " "}), path=path)
    with pytest.raises(paysdk.PaymentNotFoundError) as raised:
        await connect().verify(UNKNOWN_REFERENCE)
    assert raised.value.request_id is None
    span = only(spans, "paysdk.verify")
    assert "paysdk.request_id" not in (span.attributes or {})
    assert attributes(span) == {
        "paysdk.reference": UNKNOWN_REFERENCE,
        "paysdk.attempts": 2,
        "http.response.status_code": 404,
        "error.type": "paysdk.PaymentNotFoundError",
    }


async def test_a_refused_connection_is_retried_then_an_error_span(
    make_loopback_client: MakeClient, spans: InMemorySpanExporter
) -> None:
    """Nothing listening: every attempt counted, each retry a ``connect`` event, then
    ``paysdk.APIConnectionError`` with no status."""
    client = make_loopback_client(
        secret_key=KEY, base_url=f"http://127.0.0.1:{unused_port()}", max_retries=2
    )
    with pytest.raises(paysdk.APIConnectionError):
        await client.verify(COMPLETED_REFERENCE)
    span = only(spans, "paysdk.verify")
    assert attributes(span)["paysdk.attempts"] == 3
    assert attributes(span)["error.type"] == "paysdk.APIConnectionError"
    assert "http.response.status_code" not in attributes(span)
    assert retries(span) == [("connect", wait) for wait in client.sleeps]
    assert len(client.sleeps) == 2
    assert span.status.status_code is StatusCode.ERROR


async def first_then_close(client: EitherClient) -> paysdk.ListedPayment:
    """The first payment ``iter_payments`` yields, the iteration then closed."""
    if isinstance(client.client, paysdk.AsyncClient):
        iterator = client.client.iter_payments()
        first = await iterator.__anext__()
        await iterator.aclose()
        return first
    with client.client.iter_payments() as payments:
        return next(payments)


async def test_iter_payments_stopped_early_is_marked_so_and_ended(
    sandbox: Sandbox, connect: MakeClient, spans: InMemorySpanExporter
) -> None:
    """Closing ``iter_payments`` after its first payment ends its span, stopped early, no error."""
    first = await first_then_close(connect())
    assert first.reference == sandbox.payments[0].reference
    span = only(spans, "paysdk.iter_payments")
    assert attributes(span) == {
        "paysdk.attempts": 1,
        "http.response.status_code": 200,
        "paysdk.stopped_early": True,
    }
    assert span.status.status_code is StatusCode.UNSET


def test_a_sync_iteration_left_by_break_is_stopped_early(
    sandbox: Sandbox, spans: InMemorySpanExporter
) -> None:
    """``break`` out of a sync ``for`` over ``iter_payments``: the span ends, stopped early, as
    the iterator goes."""
    with paysdk.Client(secret_key=KEY, base_url=sandbox.base_url) as client:
        for _payment in client.iter_payments():
            break
        span = only(spans, "paysdk.iter_payments")
    assert attributes(span)["paysdk.stopped_early"] is True


async def test_iter_payments_not_iterated_records_nothing(
    connect: MakeClient, spans: InMemorySpanExporter
) -> None:
    """An ``iter_payments`` never iterated sends nothing and starts no span."""
    connect().client.iter_payments()
    assert paysdk_spans(spans) == []


async def test_iter_payments_run_out_is_not_stopped_early(
    sandbox: Sandbox, connect: MakeClient, spans: InMemorySpanExporter
) -> None:
    """An iteration read to its end: one span, ended, with no ``paysdk.stopped_early``."""
    assert len(await connect().drain()) == len(sandbox.payments)
    span = only(spans, "paysdk.iter_payments")
    assert attributes(span) == {"paysdk.attempts": 1, "http.response.status_code": 200}
    assert span.status.status_code is StatusCode.UNSET


async def test_list_payments_is_one_span(connect: MakeClient, spans: InMemorySpanExporter) -> None:
    """``list_payments``: a ``paysdk.list_payments`` span with no reference."""
    await connect().list_payments()
    span = only(spans, "paysdk.list_payments")
    assert attributes(span) == {"paysdk.attempts": 1, "http.response.status_code": 200}


async def test_confirm_and_its_refusal_are_spans(
    connect: MakeClient, spans: InMemorySpanExporter
) -> None:
    """``confirm``: a span per call; one whose amount differs ends in ERROR with its type."""
    client = connect()
    await client.confirm(COMPLETED_REFERENCE, amount=2_500_000, currency="NGN")
    with pytest.raises(paysdk.PaymentMismatchError):
        await client.confirm(COMPLETED_REFERENCE, amount=1, currency="NGN")
    good, mismatched = paysdk_spans(spans)
    assert (good.name, mismatched.name) == ("paysdk.confirm", "paysdk.confirm")
    assert attributes(good) == {
        "paysdk.reference": COMPLETED_REFERENCE,
        "paysdk.attempts": 1,
        "http.response.status_code": 200,
    }
    assert good.status.status_code is StatusCode.UNSET
    assert attributes(mismatched)["error.type"] == "paysdk.PaymentMismatchError"
    assert mismatched.status.status_code is StatusCode.ERROR
    assert_no_key(spans)


async def test_verify_callback_is_a_span_named_by_the_callback_s_reference(
    connect: MakeClient, spans: InMemorySpanExporter
) -> None:
    """A callback confirmed: a ``paysdk.verify_callback`` span with the reference it named."""
    url = f"https://shop.example/callback?reference={COMPLETED_REFERENCE}"
    await connect().verify_callback(url, amount=2_500_000, currency="NGN")
    span = only(spans, "paysdk.verify_callback")
    assert attributes(span) == {
        "paysdk.reference": COMPLETED_REFERENCE,
        "paysdk.attempts": 1,
        "http.response.status_code": 200,
    }


async def test_a_callback_refused_before_any_request_is_an_error_span(
    sandbox: Sandbox, connect: MakeClient, spans: InMemorySpanExporter
) -> None:
    """A callback for an order the lookup does not know: an ERROR span with no attempt."""
    url = "https://shop.example/callback?reference=order-made-up"
    with pytest.raises(paysdk.UnknownOrderError):
        await connect().verify_callback(url, lookup=lambda reference: None)
    span = only(spans, "paysdk.verify_callback")
    assert attributes(span) == {
        "paysdk.reference": "order-made-up",
        "paysdk.attempts": 0,
        "error.type": "paysdk.UnknownOrderError",
    }
    assert span.status.status_code is StatusCode.ERROR
    assert sandbox.requests == []


def paid(reference: str = "order-1") -> paysdk.VerifiedPayment:
    return paysdk.VerifiedPayment(reference=reference, amount=2500, currency="NGN", success=True)


def test_a_ledger_fulfilment_is_a_span_with_its_outcome(
    tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    """``Ledger.fulfil_once``: a ``paysdk.fulfil_once`` span whose outcome is ``fulfilled``,
    then ``already_fulfilled``."""
    shipped: list[paysdk.VerifiedPayment] = []
    with Ledger(tmp_path / "ledger.db") as ledger:
        ledger.fulfil_once(paid(), shipped.append)
        ledger.fulfil_once(paid(), shipped.append)
    assert len(shipped) == 1
    first, again = paysdk_spans(spans)
    assert attributes(first) == {
        "paysdk.reference": "order-1",
        "paysdk.attempts": 0,
        "paysdk.fulfilment.outcome": Outcome.FULFILLED.value,
    }
    assert attributes(again)["paysdk.fulfilment.outcome"] == Outcome.ALREADY_FULFILLED.value
    assert {first.name, again.name} == {"paysdk.fulfil_once"}


def test_spans_made_by_the_fulfilment_action_nest_under_fulfil_once(
    tmp_path: Path, spans: InMemorySpanExporter, provider: tuple[TracerProvider, Any]
) -> None:
    """The action runs with ``paysdk.fulfil_once`` current, so what it traces (the warehouse
    call that ships the order) shows as part of the fulfilment."""
    tracer = provider[0].get_tracer("shop")

    def ship(payment: paysdk.VerifiedPayment) -> None:
        with tracer.start_as_current_span("warehouse.ship"):
            pass

    with Ledger(tmp_path / "ledger.db") as ledger:
        ledger.fulfil_once(paid(), ship)
    finished = spans.get_finished_spans()
    (fulfil,) = [span for span in finished if span.name == "paysdk.fulfil_once"]
    (shipping,) = [span for span in finished if span.name == "warehouse.ship"]
    assert fulfil.context is not None and shipping.parent is not None
    assert shipping.parent.span_id == fulfil.context.span_id


async def test_an_async_ledger_fulfilment_is_a_span_with_its_outcome(
    tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    """``AsyncLedger.fulfil_once``: the same spans as the sync ledger's; an action that raises
    ends its span in ERROR with its type."""

    async def ship(payment: paysdk.VerifiedPayment) -> str:
        return payment.reference

    async def fail(payment: paysdk.VerifiedPayment) -> None:
        raise LookupError(payment.reference)

    async with AsyncLedger(tmp_path / "ledger.db") as ledger:
        with pytest.raises(LookupError):
            await ledger.fulfil_once(paid(), fail)
        await ledger.fulfil_once(paid(), ship)
        await ledger.fulfil_once(paid(), ship)
    failed, first, again = paysdk_spans(spans)
    assert attributes(failed)["error.type"] == "builtins.LookupError"
    assert failed.status.status_code is StatusCode.ERROR
    assert attributes(first)["paysdk.fulfilment.outcome"] == "fulfilled"
    assert attributes(again)["paysdk.fulfilment.outcome"] == "already_fulfilled"


@pytest.fixture
def instrumented(
    provider: tuple[TracerProvider, InMemorySpanExporter],
    spans: InMemorySpanExporter,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[InMemorySpanExporter]:
    """httpx (sync and async) and aiohttp instrumented on this module's provider; undone after.

    This module's provider is the application's global one too: paysdk's own httpx clients are
    traced by the instrumentation's transport, on the global providers."""
    tracer_provider, _ = provider
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: tracer_provider)
    httpx_instrumentor, aiohttp_instrumentor = (
        HTTPXClientInstrumentor(),
        AioHttpClientInstrumentor(),
    )
    httpx_instrumentor.instrument(tracer_provider=tracer_provider)
    aiohttp_instrumentor.instrument(tracer_provider=tracer_provider)
    try:
        yield spans
    finally:
        httpx_instrumentor.uninstrument()
        aiohttp_instrumentor.uninstrument()


async def test_http_spans_nest_under_the_call_s_span(
    sandbox: Sandbox,
    make_loopback_client: MakeClient,
    instrumented: InMemorySpanExporter,
) -> None:
    """Each HTTP client span of a retried verify is a child of the ``paysdk.verify`` span, in
    its trace, on the connections paysdk makes itself (its httpx transport sends through the
    instrumentation's tracing transport); none of the spans holds the key."""
    sandbox.inject(Fault.server_error(), path=f"/payment/{COMPLETED_REFERENCE}", times=1)
    client = make_loopback_client(secret_key=KEY, base_url=sandbox.base_url, max_retries=1)
    await client.verify(COMPLETED_REFERENCE)
    finished = instrumented.get_finished_spans()
    (call,) = [span for span in finished if span.name == "paysdk.verify"]
    http_spans = [span for span in finished if span.kind is SpanKind.CLIENT]
    assert len(http_spans) == 2
    assert call.context is not None
    for span in http_spans:
        assert span.parent is not None
        assert span.parent.span_id == call.context.span_id
        assert span.context is not None
        assert span.context.trace_id == call.context.trace_id
    assert_no_key(instrumented)


async def test_traced_requests_send_no_cookie_back(
    sandbox: Sandbox,
    make_loopback_client: MakeClient,
    instrumented: InMemorySpanExporter,
) -> None:
    """Traced, paysdk's own clients send through httpx's client, and still keep no cookie."""
    cookie = {"Set-Cookie": "session=merchant-a; Path=/"}
    sandbox.inject(Fault.json(503, {"error": "busy"}, headers=cookie), path="/payment/*")
    client = make_loopback_client(secret_key=KEY, base_url=sandbox.base_url, max_retries=1)
    await client.verify(COMPLETED_REFERENCE)
    await client.verify(COMPLETED_REFERENCE)
    sent = [{name.lower() for name in request.headers} for request in sandbox.requests]
    assert len(sent) == 3
    assert [names for names in sent if "cookie" in names] == []
    assert any(span.kind is SpanKind.CLIENT for span in instrumented.get_finished_spans())


async def test_no_span_is_current_after_a_call(
    connect: MakeClient, spans: InMemorySpanExporter
) -> None:
    """The call's span is current only while it sends: none is left current after it."""
    await connect().verify(COMPLETED_REFERENCE)
    assert not trace.get_current_span().get_span_context().is_valid


@pytest.mark.parametrize("make_loopback_client", ["async", "aiohttp"], indirect=True)
async def test_a_call_cancelled_while_it_waits_for_its_answer_ends_its_span_as_an_error(
    sandbox: Sandbox, connect: MakeClient, spans: InMemorySpanExporter
) -> None:
    """A timeout of the caller's (or a client's disconnect) cancels the call mid-attempt: the
    span ends in ERROR with the cancellation's type, the attempt under way counted."""
    client = connect(max_retries=0)  # an async call's case: a sync call is not cancelled
    sandbox.inject(Fault(delay=30), path=f"/payment/{COMPLETED_REFERENCE}")
    with anyio.move_on_after(0.5) as waiting:
        await client.verify(COMPLETED_REFERENCE)
    assert waiting.cancelled_caught
    span = only(spans, "paysdk.verify")
    assert attributes(span) == {
        "paysdk.reference": COMPLETED_REFERENCE,
        "paysdk.attempts": 1,
        "error.type": "asyncio.exceptions.CancelledError",
    }
    assert span.status.status_code is StatusCode.ERROR


class CarelessHookError(Exception):
    """What a careless event hook of the application's own client raises."""


def quoting_hook(request: httpx.Request) -> None:
    """An application's request hook that fails quoting the request's Authorization header,
    as a hook's ``raise_for_status`` quotes a server's reason phrase that echoes the key."""
    raise CarelessHookError(f"refused {request.headers['authorization']}")


async def async_quoting_hook(request: httpx.Request) -> None:
    quoting_hook(request)


def assert_the_error_alone(exporter: InMemorySpanExporter) -> None:
    """The one ``paysdk.verify`` span says the hook's error by its type alone."""
    span = only(exporter, "paysdk.verify")
    assert span.events == ()
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "CarelessHookError"
    assert attributes(span)["error.type"] == f"{__name__}.CarelessHookError"
    assert_no_key(exporter)


def test_an_exception_raised_while_sending_is_no_event_and_its_words_stay_out(
    sandbox: Sandbox, spans: InMemorySpanExporter
) -> None:
    """An exception that is no network failure (a bug, an application's event hook) reaches
    the caller as raised, and its words may hold anything (the key here): the span keeps its
    type as ``error.type``, not an ``exception`` event with its message and stack."""
    with (
        httpx.Client(event_hooks={"request": [quoting_hook]}) as http,
        paysdk.Client(secret_key=KEY, base_url=sandbox.base_url, http_client=http) as client,
        pytest.raises(CarelessHookError),
    ):
        client.verify(COMPLETED_REFERENCE)
    assert_the_error_alone(spans)


async def test_an_exception_raised_while_sending_async_is_no_event_either(
    sandbox: Sandbox, spans: InMemorySpanExporter
) -> None:
    """The async twin of the test above."""
    async with (
        httpx.AsyncClient(event_hooks={"request": [async_quoting_hook]}) as http,
        paysdk.AsyncClient(secret_key=KEY, base_url=sandbox.base_url, http_client=http) as client,
    ):
        with pytest.raises(CarelessHookError):
            await client.verify(COMPLETED_REFERENCE)
    assert_the_error_alone(spans)


@pytest.mark.parametrize("make_loopback_client", ["sync", "async"], indirect=True)
async def test_a_malformed_answer_echoing_the_key_leaves_it_out_of_the_http_span(
    hostile: HostileServer, make_loopback_client: MakeClient, instrumented: InMemorySpanExporter
) -> None:
    """A header line the HTTP library refuses is quoted in its error, which httpx's
    instrumentation records on its span (message, status, and the traceback of the chain):
    one that echoes the key has it blotted out, on the backends whose transport is paysdk's."""
    hostile.script(raw(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n" + KEY.encode() + b"\r\n\r\n{}"))
    client = make_loopback_client(secret_key=KEY, base_url=hostile.base_url, max_retries=0)
    with pytest.raises(paysdk.APIConnectionError):
        await client.verify(COMPLETED_REFERENCE)
    (http_span,) = [s for s in instrumented.get_finished_spans() if s.kind is SpanKind.CLIENT]
    assert "<secret key>" in (http_span.status.description or "")
    assert [event.name for event in http_span.events] == ["exception"]
    assert_no_key(instrumented)

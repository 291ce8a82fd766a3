"""The real Client and AsyncClient over loopback against the sandbox: every endpoint and error.

Each test runs three times, sync, async and async over aiohttp, through conftest's
``make_loopback_client`` (which records backoff waits instead of sleeping, so retry tests stay
fast).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import inspect
import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote, unquote

import anyio
import anyio.to_thread
import pytest

import paysdk
from paysdk.sandbox import (
    COMPLETED_REFERENCE,
    FAILED_REFERENCE,
    NON_CARD_REFERENCE,
    UNKNOWN_REFERENCE,
    Fault,
    Sandbox,
)
from tests.conftest import EitherClient, MakeClient
from tests.support.hostile import HostileServer, trickle_body

pytestmark = pytest.mark.anyio


def attempts(sandbox: Sandbox) -> list[str]:
    return [request.path for request in sandbox.requests]


async def test_verify_returns_the_payment_the_sandbox_holds(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    client = connect()
    payment = await client.verify(COMPLETED_REFERENCE)
    assert isinstance(payment, paysdk.VerifiedPayment)
    record = sandbox.get_payment(COMPLETED_REFERENCE)
    assert record is not None
    assert payment.model_dump(mode="json", exclude_unset=True) == record.verify_shape()
    assert payment.succeeded
    assert payment.authorization is not None
    assert payment.authorization.card_type == "visa"
    assert not (await client.verify(FAILED_REFERENCE)).succeeded
    assert (await client.verify(NON_CARD_REFERENCE)).authorization is None


async def test_list_payments_returns_every_payment(sandbox: Sandbox, connect: MakeClient) -> None:
    payments = await connect().list_payments()
    assert [p.reference for p in payments] == [r.reference for r in sandbox.payments]
    for payment, record in zip(payments, sandbox.payments, strict=True):
        assert payment.status == record.status
        assert payment.succeeded is record.succeeded
        assert payment.created_at == record.created_at
        assert payment.created_at is not None
        assert payment.created_at.tzinfo is not None


async def test_confirm_and_verify_callback(connect: MakeClient) -> None:
    client = connect()
    payment = await client.confirm(COMPLETED_REFERENCE, amount=2_500_000, currency="NGN")
    assert payment.reference == COMPLETED_REFERENCE
    with pytest.raises(paysdk.PaymentFailedError):
        await client.confirm(FAILED_REFERENCE, amount=4999, currency="USD")
    with pytest.raises(paysdk.PaymentMismatchError):
        await client.confirm(COMPLETED_REFERENCE, amount=1, currency="NGN")
    url = f"https://shop.example/callback?reference={NON_CARD_REFERENCE}"
    paid = await client.verify_callback(url, amount=85_000, currency="GHS")
    assert paid.reference == NON_CARD_REFERENCE


@pytest.mark.parametrize("path", ["/payment", "/payments/", "/v1/payment/order-1042"])
async def test_a_base_url_holding_an_endpoint_s_path_is_told_to_leave_it_out(
    sandbox: Sandbox, make_loopback_client: MakeClient, path: str
) -> None:
    """The service documents ``GET {base_url}/payment/:reference``: a base URL copied with
    ``/payment`` in it is answered 404 by the service's router, and the error says why."""

    def connect(base_url: str) -> EitherClient:
        return make_loopback_client(base_url=base_url, secret_key=sandbox.secret_key)

    client = connect(f"{sandbox.base_url}{path}")
    hint = "is base_url right? (its path holds /payment or /payments, which paysdk adds itself"
    with pytest.raises(paysdk.NotFoundError, match=hint.replace("?", r"\?").replace("(", r"\(")):
        await client.verify(COMPLETED_REFERENCE)
    with pytest.raises(paysdk.NotFoundError) as listed:
        await client.list_payments()
    assert type(listed.value) is paysdk.NotFoundError
    assert hint in str(listed.value)
    with pytest.raises(paysdk.NotFoundError) as elsewhere:
        await connect(f"{sandbox.base_url}/v9").verify(COMPLETED_REFERENCE)
    assert "not found; is base_url right?: Not Found" in str(elsewhere.value)


async def test_unknown_reference(sandbox: Sandbox, connect: MakeClient) -> None:
    with pytest.raises(paysdk.PaymentNotFoundError) as caught:
        await connect().verify(UNKNOWN_REFERENCE)
    assert caught.value.reference == UNKNOWN_REFERENCE
    assert caught.value.status_code == 404
    assert caught.value.body == {
        "success": False,
        "error": "Error in request",
        "message": "reference not found",
    }
    assert len(sandbox.requests) == 1  # not retried


async def test_a_stopped_sandbox_is_named_as_what_no_longer_listens(
    make_loopback_client: MakeClient,
) -> None:
    """A loopback base URL where nothing listens (the sandbox of a closed terminal): the error
    says so, and how to find one that runs, on every backend."""
    with Sandbox() as stopped:
        base_url = stopped.base_url
    client = make_loopback_client(base_url=base_url, secret_key="sk_x", max_retries=0)
    with pytest.raises(paysdk.APIConnectionError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    address = base_url.removeprefix("http://")
    assert f"; nothing listens at {address}: if that was a paysdk sandbox, it has stopped" in str(
        caught.value
    )
    assert "`paysdk sandbox status`" in str(caught.value)


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_under_trio_a_stopped_sandbox_is_named_as_what_no_longer_listens_too(
    anyio_backend: str,
) -> None:
    """trio tries each address and raises a group of their refusals: refused all the same."""
    with Sandbox() as stopped:
        base_url = stopped.base_url
    async with paysdk.AsyncClient(base_url=base_url, secret_key="sk_x", max_retries=0) as client:
        with pytest.raises(paysdk.APIConnectionError) as caught:
            await client.verify(COMPLETED_REFERENCE)
    address = base_url.removeprefix("http://")
    assert f"; nothing listens at {address}: if that was a paysdk sandbox" in str(caught.value)


async def test_wrong_key_is_an_authentication_error(sandbox: Sandbox, connect: MakeClient) -> None:
    with pytest.raises(paysdk.AuthenticationError) as caught:
        await connect(secret_key="sk_wrong").list_payments()
    assert caught.value.status_code == 401
    assert str(caught.value).startswith(
        "the secret key was not accepted; is it the key of the service at base_url?"
    )
    assert "sk_wrong" not in str(caught.value)
    assert len(sandbox.requests) == 1


async def test_list_connection_error_is_retried_then_raised(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    sandbox.inject(Fault.list_unavailable(), path="/payments", times=2)
    assert len(await connect(max_retries=2).list_payments()) == len(sandbox.payments)
    assert attempts(sandbox) == ["/payments"] * 3
    sandbox.inject(Fault.list_unavailable(), path="/payments")
    with pytest.raises(paysdk.ListUnavailableError) as caught:
        await connect(max_retries=0).list_payments()
    assert caught.value.body == {"error": "Connection Error"}


async def test_html_502_is_a_server_error_and_is_retried(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    sandbox.inject(Fault.html_502())
    with pytest.raises(paysdk.ServerError) as caught:
        await connect(max_retries=0).verify(COMPLETED_REFERENCE)
    assert caught.value.status_code == 502
    assert "Bad Gateway" in caught.value.text
    sandbox.inject(Fault.html_502(), times=2)
    assert (await connect(max_retries=2).verify(COMPLETED_REFERENCE)).succeeded


async def test_a_verify_envelope_reporting_failure_is_never_a_success(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    """A 200 saying ``"status": false`` with ``data.success`` true: an error, not retried, for
    every call that reads verify's answer; nothing comes back a payment to fulfil."""
    record = sandbox.get_payment(COMPLETED_REFERENCE)
    assert record is not None
    data = record.verify_shape()
    assert data["success"] is True
    body = {"status": False, "message": "Verification failed", "data": data}
    path = f"/payment/{COMPLETED_REFERENCE}"
    client = connect()
    callback = f"https://shop.example/cb?reference={COMPLETED_REFERENCE}"
    calls: list[Callable[[], Awaitable[Any]]] = [
        lambda: client.verify(COMPLETED_REFERENCE),
        lambda: client.confirm(COMPLETED_REFERENCE, amount=record.amount, currency="NGN"),
        lambda: client.verify_callback(callback, amount=record.amount, currency="NGN"),
    ]
    for call in calls:
        sandbox.clear_requests()
        sandbox.inject(Fault(status=200, body=json.dumps(body)), path=path, times=None)
        with pytest.raises(paysdk.ResponseValidationError) as caught:
            await call()
        assert caught.value.errors[0]["type"] == "envelope_failed"
        assert caught.value.body == body
        assert attempts(sandbox) == [path]  # not retried: the service contradicted itself
        sandbox.clear_faults()
    sandbox.inject(Fault(status=200, body=json.dumps(body)), path=path, times=None)
    raw = client.client.with_raw_response.verify(COMPLETED_REFERENCE)
    raw = await raw if inspect.isawaitable(raw) else raw
    assert raw.status is False
    with pytest.raises(paysdk.ResponseValidationError):
        raw.parse()


async def test_half_an_emoji_in_a_name_reads_as_the_replacement_character(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    """A lone surrogate escape (the sandbox serves text; a Latin-1 byte is no text it can send)."""
    record = sandbox.get_payment(COMPLETED_REFERENCE)
    assert record is not None
    verified, listed = record.verify_shape(), record.list_shape()
    verified["customer"] = listed["customer"] = {"name": "Ada \ud83d"}
    other = {**record.list_shape(), "reference": "order-2"}
    path = f"/payment/{COMPLETED_REFERENCE}"
    sandbox.inject(Fault.json(200, {"status": True, "data": verified}), path=path, times=None)
    sandbox.inject(Fault.json(200, {"data": [listed, other]}), path="/payments", times=None)
    client = connect()

    payment = await client.verify(COMPLETED_REFERENCE)
    payments, streamed = await client.list_payments(), await client.drain()

    assert payment.customer is not None and payment.customer.name == "Ada \ufffd"
    assert [p.customer.name if p.customer else None for p in payments] == [
        "Ada \ufffd",
        record.customer["name"],
    ]
    assert streamed == payments


async def test_a_list_naming_data_twice_reads_the_last_and_stops_a_stream(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    """``list_payments`` reads the last ``data``, as JSON parsers do; ``iter_payments`` has
    handed out the first list's payments already, so it stops there with an error."""
    first, last = sandbox.payments[:1], sandbox.payments[1:]
    body = json.dumps({"data": [p.list_shape() for p in first]})[:-1]
    body += ', "data": ' + json.dumps([p.list_shape() for p in last]) + "}"
    sandbox.inject(Fault(status=200, body=body), path="/payments", times=None)
    client = connect()

    payments = await client.list_payments()

    assert [p.reference for p in payments] == [p.reference for p in last]
    with pytest.raises(paysdk.ResponseValidationError, match="data: given twice"):
        await client.drain()


@pytest.mark.parametrize(
    "references",
    [COMPLETED_REFERENCE, COMPLETED_REFERENCE.encode(), bytearray(b"order-1"), memoryview(b"o")],
    ids=["str", "bytes", "bytearray", "memoryview"],
)
async def test_verify_many_refuses_one_string_before_any_request(
    sandbox: Sandbox, connect: MakeClient, references: object
) -> None:
    """A string is iterable: taken as references, each character would be verified."""
    client = connect()
    with pytest.raises(
        TypeError, match=r"not (str|bytes|bytearray|memoryview) \(.*verify_many\(\[reference\]\)"
    ):
        await client.verify_many(references, concurrency=2)
    assert attempts(sandbox) == []
    bulk = await client.verify_many([COMPLETED_REFERENCE], concurrency=2)
    results = [result async for result in bulk] if client.is_async else list(bulk)
    assert [result.unwrap().reference for result in results] == [COMPLETED_REFERENCE]
    assert attempts(sandbox) == [f"/payment/{COMPLETED_REFERENCE}"]


async def test_429_waits_as_long_as_retry_after_says(sandbox: Sandbox, connect: MakeClient) -> None:
    sandbox.inject(Fault.rate_limited(retry_after=3), path="/payments")
    client = connect(max_retries=1)
    assert await client.list_payments()
    assert client.sleeps == [3.0]
    sandbox.inject(Fault.rate_limited(retry_after=3), path="/payments")
    with pytest.raises(paysdk.RateLimitError) as caught:
        await connect(max_retries=0).list_payments()
    assert caught.value.retry_after == 3.0


SKEWED_CLIENT = """
import os, sys
import paysdk

with paysdk.Client(base_url=sys.argv[1], secret_key=os.environ["KEY"], max_retries=0) as client:
    try:
        client.list_payments()
    except paysdk.RateLimitError as exc:
        print(exc.retry_after)
"""
"""A client whose clock libfaketime moves, printing the wait a 429 asks of it."""


@pytest.mark.parametrize("skew", ["+10m", "-10m"])
def test_a_retry_after_date_is_counted_from_the_answers_date_not_a_skewed_clock(
    sandbox: Sandbox, skew: str
) -> None:
    """A client whose clock is ten minutes off the sandbox's: a ``Retry-After`` date thirty
    seconds on is a wait of up to thirty seconds from the sandbox's ``Date``, not none (a clock
    ahead) nor ten minutes and more, too long to wait (a clock behind)."""
    from tests.support.postgres import tool

    later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=30)
    retry_after = email.utils.format_datetime(later.replace(microsecond=0), usegmt=True)
    sandbox.inject(
        Fault.json(429, {"error": "slow down"}, {"Retry-After": retry_after}), path="/payments"
    )
    env = {**os.environ, "KEY": sandbox.secret_key, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
    command = [str(tool("faketime")), "-f", skew, sys.executable, "-c", SKEWED_CLIENT]
    done = subprocess.run(
        [*command, sandbox.base_url], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert 15 <= float(done.stdout) <= 30


async def test_500_is_retried_then_succeeds(sandbox: Sandbox, connect: MakeClient) -> None:
    sandbox.inject(Fault.server_error(), path=f"/payment/{COMPLETED_REFERENCE}")
    client = connect(max_retries=2)
    assert (await client.verify(COMPLETED_REFERENCE)).succeeded
    assert len(sandbox.requests) == 2
    assert len(client.sleeps) == 1


async def test_a_cookie_the_service_sets_is_never_sent_back(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    """Not by a retry, a later call, or a copy for another merchant account (``with_options``),
    which shares the connections: the API takes no cookie."""
    busy = Fault.json(503, {"error": "busy"}, headers={"Set-Cookie": "session=merchant-a; Path=/"})
    sandbox.inject(busy, path="/payment/*")
    client = connect(max_retries=1)
    assert (await client.verify(COMPLETED_REFERENCE)).succeeded
    await client.verify(FAILED_REFERENCE)
    await EitherClient(client.client.with_options(account="merchant-b")).list_payments()
    assert attempts(sandbox) == [
        f"/payment/{COMPLETED_REFERENCE}",
        f"/payment/{COMPLETED_REFERENCE}",
        f"/payment/{FAILED_REFERENCE}",
        "/payments",
    ]
    sent = [{name.lower() for name in request.headers} for request in sandbox.requests]
    assert [names for names in sent if "cookie" in names] == []
    assert all("authorization" in names for names in sent)  # the names are the ones sent


async def test_a_slow_answer_is_a_timeout(sandbox: Sandbox, connect: MakeClient) -> None:
    sandbox.inject(Fault(delay=2))
    with pytest.raises(paysdk.APITimeoutError):
        await connect(timeout=0.1, max_retries=0).verify(COMPLETED_REFERENCE)


@pytest.mark.parametrize("disconnect", ["before_response", "mid_body", "truncated"])
async def test_cut_connections_are_connection_errors_and_retried(
    sandbox: Sandbox, connect: MakeClient, disconnect: str
) -> None:
    sandbox.inject(Fault.from_json({"disconnect": disconnect}), path="/payments")
    with pytest.raises(paysdk.APIConnectionError):
        await connect(max_retries=0).list_payments()
    sandbox.inject(Fault.from_json({"disconnect": disconnect}), path="/payments")
    assert await connect(max_retries=1).list_payments()


@pytest.mark.parametrize("reference", ["../payments", "a/b", "a?b=c", "a#b", "100% sure", "é"])
async def test_awkward_references_reach_only_their_own_verify_path(
    sandbox: Sandbox, connect: MakeClient, reference: str
) -> None:
    sandbox.add_payment(reference, amount=321, currency="KES")
    payment = await connect().verify(reference)
    assert (payment.reference, payment.amount) == (reference, 321)
    (request,) = sandbox.requests
    assert request.target == request.path  # nothing leaked into a query string
    segments = request.path.split("/")
    assert segments[:2] == ["", "payment"]
    assert len(segments) == 3
    assert unquote(segments[2]) == reference
    assert segments[2] == quote(reference, safe="")


async def test_iter_payments_streams_what_list_payments_returns(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    for n in range(300):
        sandbox.add_payment(f"bulk-{n}", amount=n + 1, currency="NGN")
    client = connect()
    assert await client.drain() == await client.list_payments()
    assert len(await client.drain(max_response_bytes=4096)) == len(sandbox.payments)


async def test_iter_payments_retries_before_the_first_payment(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    sandbox.inject(Fault.list_unavailable(), path="/payments")
    sandbox.inject(Fault.from_json({"disconnect": "before_response"}), path="/payments")
    client = connect(max_retries=2)
    assert len(await client.drain()) == len(sandbox.payments)
    assert attempts(sandbox) == ["/payments"] * 3
    assert len(client.sleeps) == 2


async def test_iter_payments_raises_the_documented_errors(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    with pytest.raises(paysdk.AuthenticationError):
        await connect(secret_key="sk_wrong").drain()
    sandbox.inject(Fault.html_502(), path="/payments")
    with pytest.raises(paysdk.ServerError):
        await connect(max_retries=0).drain()
    sandbox.inject(Fault(delay=2), path="/payments")
    with pytest.raises(paysdk.APITimeoutError):
        await connect(timeout=0.1, max_retries=0).drain()


async def test_verify_many_over_loopback(sandbox: Sandbox, connect: MakeClient) -> None:
    client = connect()
    references = [COMPLETED_REFERENCE, UNKNOWN_REFERENCE, FAILED_REFERENCE, NON_CARD_REFERENCE] * 5
    results: Any = client.client.verify_many(references, concurrency=4)
    got = [r async for r in results] if client.is_async else list(results)
    assert [r.reference for r in got] == references
    assert [r.ok for r in got] == [True, False, True, True] * 5
    assert all(isinstance(r.error, paysdk.PaymentNotFoundError) for r in got[1::4])


async def test_raw_response_over_loopback(connect: MakeClient) -> None:
    client = connect()
    raw: Any = client.client.with_raw_response.verify(COMPLETED_REFERENCE)
    raw = await raw if client.is_async else raw
    assert raw.status_code == 200
    assert raw.headers["content-type"].startswith("application/json")
    assert raw.message == "Verification successful"
    assert raw.parse().succeeded


async def test_a_closed_client_refuses_calls(connect: MakeClient) -> None:
    client = connect()
    await client.close()
    with pytest.raises(paysdk.ClientClosedError):
        await client.verify(COMPLETED_REFERENCE)


async def test_a_call_under_way_when_the_client_is_closed_raises_client_closed_error_at_once(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    """An app shutting down closes the client while a worker's call waits for its answer: the
    call ends at once with ``ClientClosedError``, not with a connection error, nor after the
    server's answer or the timeout."""
    client = connect(max_retries=0)
    sandbox.inject(Fault(delay=30), path=f"/payment/{COMPLETED_REFERENCE}")
    raised: list[Exception] = []

    async def call() -> None:
        try:
            if isinstance(client.client, paysdk.Client):  # a worker thread's call
                await anyio.to_thread.run_sync(client.client.verify, COMPLETED_REFERENCE)
            else:
                await client.verify(COMPLETED_REFERENCE)
        except paysdk.PaySDKError as exc:
            raised.append(exc)

    started = time.monotonic()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(call)
        for _ in range(1000):  # until the request reaches the service: its answer is awaited
            if sandbox.requests:
                break
            await anyio.sleep(0.01)
        await client.close()
    assert time.monotonic() - started < 10
    assert [type(exc) for exc in raised] == [paysdk.ClientClosedError]


class RetryLogged(logging.Handler):
    """Sets ``logged`` when paysdk logs a retry: the call has its answer and waits to retry."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.logged = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().split(";")[-1].strip().startswith("retry 1 of"):
            self.logged.set()


@pytest.mark.parametrize("backend", ["sync", "httpx", "aiohttp"])
async def test_a_call_waiting_to_retry_when_the_client_is_closed_raises_client_closed_error_at_once(
    sandbox: Sandbox, backend: str
) -> None:
    """The service asked for a minute's wait before another try: closing the client (an app
    shutting down) ends the wait, and the call ends at once with ``ClientClosedError``, as a
    call waiting for its answer does, not a minute later. (The clients of ``connect`` record
    their waits rather than wait.)"""
    options: dict[str, Any] = {"secret_key": sandbox.secret_key, "base_url": sandbox.base_url}
    client: paysdk.Client | paysdk.AsyncClient = (
        paysdk.Client(**options)
        if backend == "sync"
        else paysdk.AsyncClient(
            **options, http_backend="aiohttp" if backend == "aiohttp" else "httpx"
        )
    )
    sandbox.inject(Fault.rate_limited(retry_after=60), path=f"/payment/{COMPLETED_REFERENCE}")
    logger, retry = logging.getLogger("paysdk"), RetryLogged()
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(retry)
    raised: list[Exception] = []

    async def call() -> None:
        try:
            if isinstance(client, paysdk.Client):  # a worker thread's call
                await anyio.to_thread.run_sync(client.verify, COMPLETED_REFERENCE)
            else:
                await client.verify(COMPLETED_REFERENCE)
        except paysdk.PaySDKError as exc:
            raised.append(exc)

    try:
        started = time.monotonic()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call)
            assert await anyio.to_thread.run_sync(retry.logged.wait, 10)
            if isinstance(client, paysdk.Client):
                client.close()
            else:
                await client.aclose()
    finally:
        logger.removeHandler(retry)
        logger.setLevel(level)
    assert time.monotonic() - started < 30  # not the minute's wait
    assert [type(exc) for exc in raised] == [paysdk.ClientClosedError]
    assert attempts(sandbox) == [f"/payment/{COMPLETED_REFERENCE}"]


async def test_a_header_named_twice_in_any_case_is_sent_once_with_both_values(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    # HTTP folds a repeated header into one, values joined by ", ": every backend sends the
    # merchant's user-agent beside paysdk's own, and an option beside the default it repeats.
    client = connect(default_headers={"user-agent": "shop/1.4", "X-Trace": "0"})
    await client.verify(COMPLETED_REFERENCE, extra_headers={"x-trace": "1"})
    (request,) = sandbox.requests
    sent = {name.lower(): value for name, value in request.headers.items()}
    assert sent["user-agent"].startswith("paysdk/")
    assert sent["user-agent"].endswith(", shop/1.4")
    assert sent["x-trace"] == "0, 1"


HOSTILE_KEY = "note\x1b[2J\x1b]0;pwned\x07\u202e\u200d\x9b1A\rpaid"
"""A field name the service may send beside the documented ones: kept, never shown raw."""


async def test_a_payments_repr_shows_an_unknown_fields_name_escaped(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    """A merchant logs ``%r`` of a payment: a field name holding escape sequences is quoted as
    Python quotes a string, as its value is, never written raw to a terminal or a log."""
    record = sandbox.get_payment(COMPLETED_REFERENCE)
    assert record is not None
    data = record.verify_shape()
    data[HOSTILE_KEY] = "x"
    data["customer"][HOSTILE_KEY] = 1
    data["products"][0][HOSTILE_KEY] = 2
    body = {"status": True, "message": "Verification successful", "data": data}
    sandbox.inject(Fault(status=200, body=json.dumps(body)), path=f"/payment/{COMPLETED_REFERENCE}")
    listed = {**record.list_shape(), HOSTILE_KEY: 3}
    sandbox.inject(Fault(status=200, body=json.dumps({"data": [listed]})), path="/payments")
    client = connect()
    payment = await client.verify(COMPLETED_REFERENCE)
    [in_list] = await client.list_payments()
    assert payment.model_extra == {HOSTILE_KEY: "x"}
    assert in_list.model_extra == {HOSTILE_KEY: 3}
    for shown in (repr(payment), str(payment), repr(in_list), str(in_list)):
        assert not any(char in shown for char in "\x1b\x07\u202e\u200d\x9b\r"), shown
        assert f"{HOSTILE_KEY!r}=" in shown
    assert f"{HOSTILE_KEY!r}=1" in repr(payment.customer)
    assert f"{HOSTILE_KEY!r}=2" in repr(payment.products[0])
    assert "reference='order-1042'" in repr(payment)  # a field name stays bare


@pytest.mark.parametrize("make_loopback_client", ["async", "aiohttp"], indirect=True)
@pytest.mark.parametrize("call", ["verify", "iter_payments"])
async def test_a_call_reading_its_body_when_the_client_is_closed_raises_at_once(
    hostile: HostileServer, make_loopback_client: MakeClient, call: str
) -> None:
    """The head arrived and the body trickles in: closing the client ends the call at once
    with ``ClientClosedError``, on every async backend, not when the attempt's budget runs out
    (a sync call waits in a thread of its own)."""
    hostile.script(trickle_body(interval=0.2))
    client = make_loopback_client(base_url=hostile.base_url, timeout=20, max_retries=0)
    raised: list[Exception] = []

    async def read() -> None:
        try:
            if call == "verify":
                await client.verify(COMPLETED_REFERENCE)
            else:
                await client.drain()
        except paysdk.PaySDKError as exc:
            raised.append(exc)

    started = time.monotonic()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        await anyio.sleep(0.5)  # the head is in, the body is being read
        await client.close()
    assert time.monotonic() - started < 5
    assert [type(exc) for exc in raised] == [paysdk.ClientClosedError]

"""Client and AsyncClient against respx; each test runs for both (see conftest.make_client)."""

from __future__ import annotations

import datetime as dt
import json
import logging
import platform
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
import respx

import paysdk
from tests.conftest import (
    BASE_URL,
    LIST_UNAVAILABLE_BODY,
    NOT_FOUND_BODY,
    SAMPLE,
    SECRET,
    EitherClient,
    MakeClient,
    listed_body,
    verify_body,
)

pytestmark = pytest.mark.anyio

VERIFY_URL = f"{BASE_URL}/payment/order-1042"
LIST_URL = f"{BASE_URL}/payments"


# --- the two payment shapes ---------------------------------------------------------------------


async def test_verify_parses_a_card_payment(client: EitherClient, respx_mock: respx.Router) -> None:
    respx_mock.get(VERIFY_URL).respond(200, json=verify_body())

    payment = await client.verify("order-1042")

    assert isinstance(payment, paysdk.VerifiedPayment)
    assert payment.reference == "order-1042"
    assert payment.transaction_id == SAMPLE.transaction_id
    assert (payment.amount, payment.fee, payment.currency) == (250000, 3750, "NGN")
    assert payment.success is True
    assert payment.succeeded is True
    assert payment.customer == paysdk.Customer(
        name="Adaeze Okafor", email="adaeze.okafor@example.com", phone="+2348031234567"
    )
    assert [p.name for p in payment.products] == ["Wireless headphones"]
    assert payment.products[0].amount == 250000
    assert payment.metadata == {"order_id": "1042", "channel": "web"}
    assert payment.authorization == paysdk.CardAuthorization(
        card_type="visa", first_six="408408", last_four="4081", expiry="09/28"
    )


async def test_verify_accepts_a_non_card_failed_payment_with_fields_missing(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    body = verify_body(success=False)
    for optional in ("authorization", "customer", "products", "metadata", "fee", "transaction_id"):
        del body["data"][optional]
    respx_mock.get(VERIFY_URL).respond(200, json=body)

    payment = await client.verify("order-1042")

    assert payment.succeeded is False
    assert payment.authorization is None
    assert payment.customer is None
    assert payment.products == []
    assert payment.metadata == {}
    assert payment.fee is None


async def test_fields_the_server_adds_are_kept(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    body = verify_body(channel="card", customer={"name": "Ada", "country": "NG"})
    body["data"]["authorization"]["bank"] = "Zenith"
    respx_mock.get(VERIFY_URL).respond(200, json=body)

    payment = await client.verify("order-1042")

    assert payment.model_extra == {"channel": "card"}
    assert payment.customer is not None and payment.customer.model_extra == {"country": "NG"}
    dumped = payment.model_dump(mode="json")
    assert dumped["channel"] == "card"
    assert dumped["authorization"]["bank"] == "Zenith"


async def test_list_parses_payments_and_keeps_unknown_statuses(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    items = [
        listed_body("order-1"),
        listed_body("order-2", status="FAILED", customer_paid=False),
        listed_body("order-3", status="PENDING_REVIEW"),
    ]
    respx_mock.get(LIST_URL).respond(200, json={"data": items})

    payments = await client.list_payments()

    assert [p.reference for p in payments] == ["order-1", "order-2", "order-3"]
    assert all(isinstance(p, paysdk.ListedPayment) for p in payments)
    assert payments[0].status is paysdk.PaymentStatus.COMPLETED
    assert payments[1].status is paysdk.PaymentStatus.FAILED
    assert payments[2].status == "PENDING_REVIEW"
    assert [p.succeeded for p in payments] == [True, False, False]
    assert payments[0].created_at == dt.datetime(
        2026, 11, 2, 9, 15, 27, 123456, tzinfo=dt.timezone.utc
    )


def test_listed_payment_round_trips_to_the_wire_text() -> None:
    item = listed_body(status="PARTIALLY_REFUNDED", extra_field={"kept": True})

    payment = paysdk.ListedPayment.model_validate_json(json.dumps(item))

    assert payment.model_dump(mode="json", exclude_none=True) == item
    assert payment.created_at is not None and payment.created_at.utcoffset() == dt.timedelta(0)


def test_timestamps_with_an_offset_or_none_become_utc() -> None:
    payment = paysdk.ListedPayment.model_validate(
        listed_body(created_at="2026-11-02T10:15:27.5+01:00", updated_at="2026-11-02T09:00:00")
    )

    assert payment.created_at == dt.datetime(2026, 11, 2, 9, 15, 27, 500000, tzinfo=dt.timezone.utc)
    assert payment.model_dump(mode="json")["created_at"] == "2026-11-02T09:15:27.500000Z"
    assert payment.updated_at is not None and payment.updated_at.tzinfo is dt.timezone.utc


async def test_list_of_none(client: EitherClient, respx_mock: respx.Router) -> None:
    respx_mock.get(LIST_URL).respond(200, json={"data": []})
    assert await client.list_payments() == []


# --- what is sent ------------------------------------------------------------------------------


async def test_requests_carry_the_key_and_a_user_agent(
    make_client: MakeClient, respx_mock: respx.Router
) -> None:
    route = respx_mock.get(VERIFY_URL).respond(200, json=verify_body())
    client = make_client(default_headers={"X-Merchant": "shop-9"})

    await client.verify("order-1042", extra_headers={"X-Request-Id": "r-1"})

    headers = route.calls.last.request.headers
    assert headers["authorization"] == f"Bearer {SECRET}"
    assert headers["accept"] == "application/json"
    assert f"paysdk/{paysdk.__version__}" in headers["user-agent"]
    assert f"Python/{platform.python_version()}" in headers["user-agent"]
    assert headers["x-merchant"] == "shop-9"
    assert headers["x-request-id"] == "r-1"
    assert headers["accept-encoding"] == "gzip, deflate"  # what paysdk inflates in bounded steps


async def test_headers_the_client_sends_by_default_can_still_be_changed_per_call(
    make_client: MakeClient, respx_mock: respx.Router
) -> None:
    """paysdk's own client carries the fixed headers; a call's own still win, and the next call
    without them is back to the defaults."""
    route = respx_mock.get(VERIFY_URL).respond(200, json=verify_body())
    client = make_client()
    await client.verify("order-1042", extra_headers={"Accept": "application/vnd.pay+json"})
    await client.verify("order-1042")
    first, second = (call.request.headers for call in route.calls)
    assert (first["accept"], second["accept"]) == ("application/vnd.pay+json", "application/json")
    assert first["authorization"] == second["authorization"] == f"Bearer {SECRET}"


@pytest.mark.parametrize(
    ("reference", "raw_path"),
    [
        ("../payments", "/v1/payment/..%2Fpayments"),
        ("a/b", "/v1/payment/a%2Fb"),
        ("a?b=c", "/v1/payment/a%3Fb%3Dc"),
        ("a#b", "/v1/payment/a%23b"),
        ("100%", "/v1/payment/100%25"),
        ("ordre é", "/v1/payment/ordre%20%C3%A9"),
        ("a;b&c=d+e", "/v1/payment/a%3Bb%26c%3Dd%2Be"),
    ],
)
async def test_reference_is_one_encoded_path_segment(
    client: EitherClient, respx_mock: respx.Router, reference: str, raw_path: str
) -> None:
    route = respx_mock.get(url__regex=r".*").respond(200, json=verify_body(reference))

    payment = await client.verify(reference)

    request = route.calls.last.request
    assert request.url.raw_path == raw_path.encode()
    assert request.url.query == b""
    assert payment.reference == reference


BAD_REFERENCES = [
    "",
    "   ",
    ".",
    "..",
    "a\x00b",
    "line\nbreak",
    "tab\there",
    "\x7f",
    "order\u202e2401",  # right-to-left override
    "order\u200b1042",  # zero-width space
    "line\u2028sep",
    " padded",
    "padded ",
    "x" * 257,
]


@pytest.mark.parametrize("reference", BAD_REFERENCES)
async def test_bad_references_are_refused_before_any_request(
    client: EitherClient, respx_mock: respx.Router, reference: str
) -> None:
    with pytest.raises(paysdk.InvalidReferenceError) as caught:
        await client.verify(reference)
    assert isinstance(caught.value, ValueError)
    assert not respx_mock.calls


@pytest.mark.parametrize("reference", [None, 1042, b"order-1042"])
async def test_non_string_references_are_refused(
    client: EitherClient, respx_mock: respx.Router, reference: Any
) -> None:
    with pytest.raises(paysdk.InvalidReferenceError, match="must be a str"):
        await client.verify(reference)
    assert not respx_mock.calls


async def test_the_longest_allowed_reference_is_sent(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    respx_mock.get(url__regex=r".*").respond(200, json=verify_body("x" * 256))
    assert (await client.verify("x" * 256)).reference == "x" * 256


# --- errors ------------------------------------------------------------------------------------


async def test_unknown_reference_raises_payment_not_found(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    route = respx_mock.get(f"{BASE_URL}/payment/order-9").respond(
        404, json=NOT_FOUND_BODY, headers={"X-Trace": "t-1"}
    )

    with pytest.raises(paysdk.PaymentNotFoundError) as caught:
        await client.verify("order-9")

    error = caught.value
    assert route.call_count == 1  # a documented answer is not retried
    assert error.reference == "order-9"
    assert error.status_code == 404
    assert error.headers["x-trace"] == "t-1"
    assert error.body == NOT_FOUND_BODY
    assert json.loads(error.text) == NOT_FOUND_BODY
    assert "order-9" in str(error) and "reference not found" in str(error)
    assert isinstance(error, paysdk.NotFoundError)


async def test_list_connection_error_is_retried_then_raised(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    route = respx_mock.get(LIST_URL).respond(404, json=LIST_UNAVAILABLE_BODY)

    with pytest.raises(paysdk.ListUnavailableError) as caught:
        await client.list_payments()

    assert route.call_count == 3
    assert len(client.sleeps) == 2
    assert caught.value.body == LIST_UNAVAILABLE_BODY
    assert "Connection Error" in str(caught.value)


async def test_list_connection_error_then_success(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    respx_mock.get(LIST_URL).mock(
        side_effect=[
            httpx.Response(404, json=LIST_UNAVAILABLE_BODY),
            httpx.Response(200, json={"data": [listed_body()]}),
        ]
    )
    assert [p.reference for p in await client.list_payments()] == ["order-1042"]


@pytest.mark.parametrize(
    ("status", "body", "error_type"),
    [
        (401, {"success": False, "error": "Unauthorized"}, paysdk.AuthenticationError),
        (403, {"error": "Forbidden"}, paysdk.PermissionDeniedError),
        (404, "<html><h1>404 Not Found</h1></html>", paysdk.NotFoundError),
        (400, {"error": "Bad request"}, paysdk.APIError),
        (418, "", paysdk.APIError),
        (429, {"error": "Too many requests"}, paysdk.RateLimitError),
        (500, {"error": "boom"}, paysdk.ServerError),
        (502, "<html><body>502 Bad Gateway</body></html>", paysdk.ServerError),
        (503, "", paysdk.ServerError),
    ],
)
async def test_error_statuses_map_to_typed_errors(
    make_client: MakeClient,
    respx_mock: respx.Router,
    status: int,
    body: Any,
    error_type: type[paysdk.APIError],
) -> None:
    content = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    respx_mock.get(url__regex=r".*").respond(
        status, content=content, headers={"Content-Type": "text/html", "X-Status": str(status)}
    )
    client = make_client(max_retries=0)

    for method, args in (("verify", ["order-1042"]), ("list_payments", [])):
        with pytest.raises(error_type) as caught:
            await getattr(client, method)(*args)
        error = caught.value
        assert type(error) is error_type  # the most specific type, nothing more specific
        assert error.status_code == status
        assert error.headers["x-status"] == str(status)
        assert error.content == content
        assert error.body == (body if not isinstance(body, str) else None)
        assert SECRET not in str(error) and SECRET not in repr(error)


@pytest.mark.parametrize(
    ("content", "content_type", "fragment"),
    [
        (b"<html><body>Gateway says hi</body></html>", "text/html", "not JSON (text/html)"),
        (b"", "application/json", "not JSON"),
        (b'{"status": true, "message": "ok"}', "application/json", "data: Field required"),
        (b'{"status": true, "data": null}', "application/json", "data:"),
        (b"[]", "application/json", "not the documented shape"),
        (b'{"data": {"reference": "order-1042", "amount": "lots"}}', "application/json", "amount"),
        (b"\xff\xfe\x00garbage", "application/octet-stream", "not JSON"),
        (b'{"data": {"reference": 1', "application/json", "not JSON"),
    ],
)
async def test_a_2xx_body_of_the_wrong_shape_is_a_validation_error(
    client: EitherClient,
    respx_mock: respx.Router,
    content: bytes,
    content_type: str,
    fragment: str,
) -> None:
    respx_mock.get(VERIFY_URL).respond(200, content=content, headers={"Content-Type": content_type})

    with pytest.raises(paysdk.ResponseValidationError) as caught:
        await client.verify("order-1042")

    assert fragment in str(caught.value)
    assert caught.value.status_code == 200
    assert caught.value.content == content
    assert len(respx_mock.calls) == 1  # a malformed answer is not retried


NAMES_NOT_UTF8 = pytest.mark.parametrize(
    ("sent", "read"),
    [
        (b"Ada \\ud83d", "Ada \ufffd"),  # half an emoji: a lone high surrogate escape
        (b"\\ude00 Ada", "\ufffd Ada"),  # a lone low surrogate escape
        (b"Ren\xe9e", "Ren\ufffde"),  # Latin-1, not UTF-8
    ],
    ids=["lone-high-surrogate", "lone-low-surrogate", "latin-1-byte"],
)


def with_name(body: object, sent: bytes) -> bytes:
    """``body`` as JSON whose customer named ``NAME`` is named ``sent``, byte for byte."""
    return json.dumps(body).encode().replace(b'"NAME"', b'"' + sent + b'"')


@NAMES_NOT_UTF8
async def test_a_name_not_utf8_reads_as_the_replacement_character_on_verify(
    client: EitherClient, respx_mock: respx.Router, sent: bytes, read: str
) -> None:
    content = with_name(verify_body(customer={"name": "NAME"}), sent)
    respx_mock.get(VERIFY_URL).respond(200, content=content)

    payment = await client.verify("order-1042")

    assert payment.customer is not None and payment.customer.name == read
    assert (payment.reference, payment.amount) == ("order-1042", 250000)


@NAMES_NOT_UTF8
async def test_a_name_not_utf8_spoils_no_list(
    client: EitherClient, respx_mock: respx.Router, sent: bytes, read: str
) -> None:
    items = [listed_body("order-1"), listed_body("order-2", customer={"name": "NAME"})]
    respx_mock.get(LIST_URL).respond(200, content=with_name({"data": items}, sent))

    for payments in (await client.list_payments(), await client.drain()):
        assert [p.reference for p in payments] == ["order-1", "order-2"]
        assert [p.customer.name if p.customer else None for p in payments] == [
            "Adaeze Okafor",
            read,
        ]
        assert payments[0] == paysdk.ListedPayment.model_validate(listed_body("order-1"))


@NAMES_NOT_UTF8
async def test_a_name_not_utf8_spoils_no_list_past_a_mebibyte(
    client: EitherClient, respx_mock: respx.Router, sent: bytes, read: str
) -> None:
    """Past 1 MiB the list is validated in batches (``_parsing/batches.py``)."""
    items = [listed_body(f"order-{n}") for n in range(4000)]
    items[2500]["customer"] = {"name": "NAME"}
    content = with_name({"data": items}, sent)
    assert len(content) > 1024 * 1024
    respx_mock.get(LIST_URL).respond(200, content=content)

    for payments in (await client.list_payments(), await client.drain()):
        assert [p.reference for p in payments] == [f"order-{n}" for n in range(4000)]
        names = {n: p.customer.name for n, p in enumerate(payments) if p.customer}
        assert names.pop(2500) == read
        assert set(names.values()) == {"Adaeze Okafor"} and len(names) == 3999


async def test_a_surrogate_pair_escape_reads_as_its_emoji(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    sent = b"Ada \\ud83d\\ude00"
    respx_mock.get(VERIFY_URL).respond(
        200, content=with_name(verify_body(customer={"name": "NAME"}), sent)
    )
    respx_mock.get(LIST_URL).respond(
        200, content=with_name({"data": [listed_body(customer={"name": "NAME"})]}, sent)
    )

    payment = await client.verify("order-1042")
    listed, streamed = await client.list_payments(), await client.drain()

    assert payment.customer is not None and payment.customer.name == "Ada \U0001f600"
    assert [p.customer.name if p.customer else None for p in listed] == ["Ada \U0001f600"]
    assert streamed == listed


@pytest.mark.parametrize(
    "content",
    [
        b'{"data": [{"customer": {"name": "Ada \\ud83d"}',
        b'{"data": [] "name": "Ren\xe9e"}',
        b'{"data": [\xe9]}',
    ],
    ids=["cut-short", "no-comma", "byte-outside-a-string"],
)
async def test_a_body_not_json_even_so_is_still_refused_on_every_path(
    client: EitherClient, respx_mock: respx.Router, content: bytes
) -> None:
    respx_mock.get(VERIFY_URL).respond(200, content=content)
    respx_mock.get(LIST_URL).respond(200, content=content)
    calls: dict[str, Callable[[], Awaitable[object]]] = {
        "verify": lambda: client.verify("order-1042"),
        "list_payments": lambda: client.list_payments(),
        "iter_payments": lambda: client.drain(),
    }
    for name, call in calls.items():
        with pytest.raises(paysdk.ResponseValidationError) as caught:
            await call()
        assert "not JSON" in str(caught.value), name
        assert caught.value.content == (b"" if name == "iter_payments" else content), name


async def test_a_repaired_body_keeps_its_other_checks(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    """Repaired, a body is validated as any other: its shape, and the reference asked for."""
    wrong_shape = with_name(verify_body(customer={"name": "NAME"}, amount="lots"), b"\\ud83d")
    other = with_name(verify_body("order-9", customer={"name": "NAME"}), b"\\ud83d")
    respx_mock.get(VERIFY_URL).mock(
        side_effect=[httpx.Response(200, content=wrong_shape), httpx.Response(200, content=other)]
    )

    with pytest.raises(
        paysdk.ResponseValidationError, match=r"not the documented shape: data\.amount"
    ):
        await client.verify("order-1042")
    with pytest.raises(paysdk.PaymentMismatchError):
        await client.verify("order-1042")


@pytest.mark.parametrize(
    ("value", "said", "paths"),
    [
        # past what pydantic and Python read into an int
        ("9" * 5000, "a number too long to read", ("verify", "list_payments", "iter_payments")),
        # past the depth pydantic's parser reads (200); iter_payments decodes with the
        # standard library's, which reads deeper
        ("[" * 300 + "]" * 300, "a body nested too deeply to read", ("verify", "list_payments")),
    ],
    ids=["long-number", "deep"],
)
async def test_valid_json_past_what_the_parser_reads_is_said_so_not_called_not_json(
    client: EitherClient,
    respx_mock: respx.Router,
    value: str,
    said: str,
    paths: tuple[str, ...],
) -> None:
    payment, listed_payment = verify_body(), listed_body()
    payment["data"]["amount"] = listed_payment["amount"] = "VALUE"
    verify = json.dumps(payment).replace('"VALUE"', value)
    listed = json.dumps({"data": [listed_payment]}).replace('"VALUE"', value)
    respx_mock.get(VERIFY_URL).respond(200, content=verify.encode())
    respx_mock.get(LIST_URL).respond(200, content=listed.encode())
    calls: dict[str, Callable[[], Awaitable[object]]] = {
        "verify": lambda: client.verify("order-1042"),
        "list_payments": lambda: client.list_payments(),
        "iter_payments": lambda: client.drain(),
    }
    for name in paths:
        with pytest.raises(paysdk.ResponseValidationError) as caught:
            await calls[name]()
        assert said in str(caught.value), name
        assert "not JSON" not in str(caught.value) and "Exceeds" not in str(caught.value), name
        assert caught.value.status_code == 200, name


async def test_a_list_element_of_the_wrong_shape_is_a_validation_error(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    respx_mock.get(LIST_URL).respond(
        200, json={"data": [listed_body(), {"id": "x", "status": "COMPLETED"}]}
    )
    with pytest.raises(paysdk.ResponseValidationError, match=r"data\.1\.reference"):
        await client.list_payments()


@pytest.mark.parametrize(
    ("exception", "error_type"),
    [
        (httpx.ConnectError("connection refused"), paysdk.APIConnectionError),
        (httpx.RemoteProtocolError("peer closed connection"), paysdk.APIConnectionError),
        (httpx.ReadTimeout("timed out"), paysdk.APITimeoutError),
        (httpx.ConnectTimeout("timed out"), paysdk.APITimeoutError),
    ],
)
async def test_no_answer_is_retried_then_a_connection_error(
    client: EitherClient,
    respx_mock: respx.Router,
    exception: Exception,
    error_type: type[paysdk.APIConnectionError],
) -> None:
    route = respx_mock.get(VERIFY_URL).mock(side_effect=exception)

    with pytest.raises(error_type) as caught:
        await client.verify("order-1042")

    assert type(caught.value) is error_type
    assert route.call_count == 3
    assert caught.value.url == VERIFY_URL
    assert isinstance(caught.value.__cause__, httpx.HTTPError)


# --- retries -----------------------------------------------------------------------------------


async def test_server_errors_are_retried_with_growing_backoff(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    route = respx_mock.get(VERIFY_URL).mock(
        side_effect=[
            httpx.Response(500, json={"error": "boom"}),
            httpx.Response(502, text="<html>bad gateway</html>"),
            httpx.Response(200, json=verify_body()),
        ]
    )

    payment = await client.verify("order-1042")

    assert payment.reference == "order-1042"
    assert route.call_count == 3
    assert len(client.sleeps) == 2
    assert 0.375 <= client.sleeps[0] <= 0.5
    assert 0.75 <= client.sleeps[1] <= 1.0


async def test_retry_after_is_honoured(client: EitherClient, respx_mock: respx.Router) -> None:
    respx_mock.get(VERIFY_URL).mock(
        side_effect=[
            httpx.Response(429, headers={"Retry-After": "3"}, json={"error": "slow down"}),
            httpx.Response(503, headers={"retry-after-ms": "250"}),
            httpx.Response(200, json=verify_body()),
        ]
    )

    await client.verify("order-1042")

    assert client.sleeps == [3.0, 0.25]


async def test_a_retry_after_too_long_to_wait_raises_at_once(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    route = respx_mock.get(VERIFY_URL).respond(429, headers={"Retry-After": "3600"})

    with pytest.raises(paysdk.RateLimitError) as caught:
        await client.verify("order-1042")

    assert route.call_count == 1
    assert caught.value.retry_after == 3600.0
    assert client.sleeps == []


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_not_retried(
    client: EitherClient, respx_mock: respx.Router, status: int
) -> None:
    route = respx_mock.get(VERIFY_URL).respond(status, json={"error": "no"})
    with pytest.raises(paysdk.APIError):
        await client.verify("order-1042")
    assert route.call_count == 1


async def test_max_retries_per_client_and_per_call(
    make_client: MakeClient, respx_mock: respx.Router
) -> None:
    route = respx_mock.get(VERIFY_URL).respond(503)
    client = make_client(max_retries=0)

    with pytest.raises(paysdk.ServerError):
        await client.verify("order-1042")
    assert route.call_count == 1

    with pytest.raises(paysdk.ServerError):
        await client.verify("order-1042", max_retries=4)
    assert route.call_count == 1 + 5
    assert len(client.sleeps) == 4


async def test_with_options_shares_connections_and_changes_defaults(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    route = respx_mock.get(VERIFY_URL).respond(503)
    patient = client.client.with_options(max_retries=5, timeout=2.5)
    either = EitherClient(patient)

    with pytest.raises(paysdk.ServerError):
        await either.verify("order-1042")

    assert route.call_count == 6
    assert patient._http is client.client._http
    assert patient.timeout == httpx.Timeout(2.5)
    assert client.client.max_retries == 2  # the original is untouched
    await either.close()  # the clone does not own the connections
    assert not client.client._http.is_closed


async def test_a_timeout_changed_after_it_was_given_changes_nothing(
    make_client: MakeClient, respx_mock: respx.Router
) -> None:
    # The checked timeout is copied, as httpx copies its own: the client, its requests and
    # client.timeout all keep what was given when the client was made.
    route = respx_mock.get(VERIFY_URL).respond(200, json=verify_body())
    given = httpx.Timeout(7.5)
    client = make_client(timeout=given)
    given.read = 0.5

    await client.verify("order-1042")
    await client.verify("order-1042", timeout=given)

    sent = [call.request.extensions["timeout"] for call in route.calls]
    assert sent == [httpx.Timeout(7.5).as_dict(), httpx.Timeout(7.5, read=0.5).as_dict()]
    assert client.client.timeout == httpx.Timeout(7.5)


async def test_the_configured_and_per_call_timeouts_reach_the_transport(
    make_client: MakeClient, respx_mock: respx.Router
) -> None:
    # paysdk's own httpx client is made with the configured timeout and its requests leave it
    # out (httpx would build a Timeout per request); a per-call or cloned one is still sent.
    route = respx_mock.get(VERIFY_URL).respond(200, json=verify_body())
    client = make_client(timeout=httpx.Timeout(7.5, connect=2.0))

    await client.verify("order-1042")
    await client.verify("order-1042", timeout=1.5)
    await client.verify("order-1042", timeout=httpx.Timeout(4.0, connect=1.0))
    await EitherClient(client.client.with_options(timeout=3.0)).verify("order-1042")
    await client.verify("order-1042")

    timeouts = [call.request.extensions["timeout"] for call in route.calls]
    assert timeouts == [
        httpx.Timeout(7.5, connect=2.0).as_dict(),
        httpx.Timeout(1.5).as_dict(),
        httpx.Timeout(4.0, connect=1.0).as_dict(),
        httpx.Timeout(3.0).as_dict(),
        httpx.Timeout(7.5, connect=2.0).as_dict(),
    ]


# --- secrets -----------------------------------------------------------------------------------


async def test_the_secret_key_is_never_shown(
    make_client: MakeClient, respx_mock: respx.Router, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    respx_mock.get(VERIFY_URL).mock(
        side_effect=[
            httpx.ConnectError("refused"),
            httpx.Response(500, json={"error": "boom"}),
            httpx.Response(401, json={"error": "Unauthorized"}),
        ]
    )
    client = make_client()

    with pytest.raises(paysdk.AuthenticationError) as caught:
        await client.verify("order-1042")

    shown = [repr(client.client), str(caught.value), repr(caught.value), caplog.text]
    shown += [repr(client.client._config)]
    assert "order-1042" in caplog.text  # the log does say what happened
    for text in shown:
        assert SECRET not in text


# --- hooks for the merchant's own HTTP setup --------------------------------------------------


def test_an_injected_http_client_is_used_and_left_open() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=verify_body())

    http = httpx.Client(transport=httpx.MockTransport(handler), headers={"X-Proxy-Auth": "p"})
    with paysdk.Client(secret_key=SECRET, base_url=BASE_URL, http_client=http) as client:
        assert client.verify("order-1042").succeeded

    assert seen[0].headers["x-proxy-auth"] == "p"  # the injected client's own headers apply
    assert seen[0].headers["authorization"] == f"Bearer {SECRET}"
    assert not http.is_closed
    http.close()


async def test_an_injected_async_http_client_is_used() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"data": [listed_body()]})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        client = paysdk.AsyncClient(secret_key=SECRET, base_url=BASE_URL, http_client=http)
        assert len(await client.list_payments()) == 1
        await client.close()
        assert not http.is_closed


def test_the_client_closes_the_connections_it_opened() -> None:
    with paysdk.Client(secret_key=SECRET, base_url=BASE_URL) as client:
        http = client._http
    assert http.is_closed


async def test_the_async_client_closes_the_connections_it_opened() -> None:
    async with paysdk.AsyncClient(secret_key=SECRET, base_url=BASE_URL) as client:
        http = client._http
    assert http.is_closed


# --- what the review found: odd answers, closed clients ---------------------------------------


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.mark.parametrize(
    ("status", "content", "error_type"),
    [
        (200, _nested(5000), paysdk.ResponseValidationError),
        (404, _nested(5000), paysdk.NotFoundError),
        (503, _nested(5000), paysdk.ServerError),
        (200, b'{"data": {"metadata": ' + _nested(5000) + b"}}", paysdk.ResponseValidationError),
    ],
)
async def test_absurdly_nested_json_is_a_typed_error(
    make_client: MakeClient, respx_mock: respx.Router, status: int, content: bytes, error_type: type
) -> None:
    respx_mock.get(VERIFY_URL).respond(status, content=content)
    with pytest.raises(error_type):
        await make_client(max_retries=0).verify("order-1042")


@pytest.mark.parametrize(
    "timestamp", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59.999999-23:59"]
)
async def test_a_timestamp_outside_the_range_of_dates_reads_as_unset_and_is_kept(
    client: EitherClient, respx_mock: respx.Router, timestamp: str
) -> None:
    respx_mock.get(LIST_URL).respond(200, json={"data": [listed_body(created_at=timestamp)]})
    [payment] = await client.list_payments()
    assert payment.created_at is None
    assert payment.unparsed == {"created_at": timestamp}


@pytest.mark.parametrize(
    "changes",
    [
        {"amount": True},
        {"amount": "250000"},
        {"amount": 250000.5},
        {"success": "yes"},
        {"success": 1},
        {"currency": 566},
        {"reference": 1042},
    ],
)
async def test_fulfilment_fields_are_not_coerced(
    client: EitherClient, respx_mock: respx.Router, changes: dict[str, Any]
) -> None:
    respx_mock.get(VERIFY_URL).respond(200, json=verify_body(**changes))
    with pytest.raises(paysdk.ResponseValidationError, match=next(iter(changes))):
        await client.verify("order-1042")


async def test_verify_refuses_a_payment_for_another_reference(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    respx_mock.get(VERIFY_URL).respond(200, json=verify_body("order-1041"))
    with pytest.raises(paysdk.PaymentMismatchError) as caught:
        await client.verify("order-1042")
    assert caught.value.mismatches == {"reference": ("order-1042", "order-1041")}


async def test_a_closed_client_and_its_copies_say_so(
    make_client: MakeClient, respx_mock: respx.Router
) -> None:
    client = make_client()
    copy = EitherClient(client.client.with_options(max_retries=0))
    await client.close()
    for closed in (client, copy):
        with pytest.raises(paysdk.ClientClosedError, match="closed"):
            await closed.verify("order-1042")
    assert not respx_mock.calls


async def test_an_async_lookup_may_return_any_awaitable(respx_mock: respx.Router) -> None:
    import asyncio

    respx_mock.get(VERIFY_URL).respond(200, json=verify_body())
    future: asyncio.Future[paysdk.Expected] = asyncio.get_running_loop().create_future()
    future.set_result(paysdk.Expected(amount=250000, currency="NGN"))
    async with paysdk.AsyncClient(secret_key=SECRET, base_url=BASE_URL) as client:
        payment = await client.verify_callback("reference=order-1042", lookup=lambda _: future)
    assert payment.amount == 250000

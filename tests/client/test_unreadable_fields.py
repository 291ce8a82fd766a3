"""An optional field the server sends in a type it cannot be read as fails nothing: it reads as
unset and what was sent stays in ``unparsed``. The fields fulfilment is decided on stay strict.

Each test runs on both clients: over respx, and over loopback against the sandbox serving the
odd body (sync, async and async over aiohttp).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
import respx

import paysdk
from paysdk.sandbox import COMPLETED_REFERENCE, Fault, Sandbox
from tests.conftest import BASE_URL, SAMPLE, EitherClient, MakeClient, listed_body, verify_body

pytestmark = pytest.mark.anyio

VERIFY_URL = f"{BASE_URL}/payment/{COMPLETED_REFERENCE}"
LIST_URL = f"{BASE_URL}/payments"
CALLBACK_URL = f"https://shop.example/callback?reference={COMPLETED_REFERENCE}"

ODD_VERIFY: dict[str, Any] = {
    "fee": "n/a",
    "customer": "guest",
    "metadata": "none",
    "transaction_id": 1042,
    "authorization": ["visa"],
    "products": [{"name": "Mug", "amount": "twelve"}],
}
"""A value of another type in each of verify's optional fields (a product's too)."""
ODD_LIST: dict[str, Any] = {
    "fee": {"value": 3750},
    "customer": {"name": 7, "email": "ada@example.com"},
    "id": None,  # a null where a string is expected is no error: ``None`` is allowed
    "customer_paid": "perhaps",
    "created_at": "yesterday",
    "products": "none",
}
"""A value of another type in list's optional fields, and a customer's."""


def check_verified(payment: paysdk.VerifiedPayment) -> None:
    """The payment of a verify answer with ``ODD_VERIFY``'s fields."""
    assert (payment.reference, payment.amount, payment.currency, payment.succeeded) == (
        COMPLETED_REFERENCE,
        SAMPLE.amount,
        SAMPLE.currency,
        True,
    )
    assert (payment.fee, payment.customer, payment.transaction_id, payment.authorization) == (
        (None,) * 4
    )
    assert payment.metadata == {}
    assert dict(payment.unparsed) == {
        key: value for key, value in ODD_VERIFY.items() if key != "products"
    }
    [product] = payment.products
    assert (product.name, product.amount, dict(product.unparsed)) == (
        "Mug",
        None,
        {"amount": "twelve"},
    )


def check_listed(payments: list[paysdk.ListedPayment]) -> None:
    """The payments of a list answer whose first has ``ODD_LIST``'s fields."""
    odd, plain = payments
    assert (odd.reference, odd.amount, odd.status) == (
        COMPLETED_REFERENCE,
        SAMPLE.amount,
        "COMPLETED",
    )
    assert (odd.fee, odd.id, odd.customer_paid, odd.created_at, odd.products) == (
        None,
        None,
        None,
        None,
        [],
    )
    assert dict(odd.unparsed) == {
        key: ODD_LIST[key] for key in ("fee", "customer_paid", "created_at", "products")
    }
    assert odd.customer is not None
    assert (odd.customer.name, odd.customer.email) == (None, "ada@example.com")
    assert dict(odd.customer.unparsed) == {"name": 7}
    assert plain.reference == "order-2" and not plain.unparsed


async def test_verify_confirm_and_verify_callback_read_unreadable_optional_fields(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    respx_mock.get(VERIFY_URL).respond(200, json=verify_body(**ODD_VERIFY))

    check_verified(await client.verify(COMPLETED_REFERENCE))
    check_verified(
        await client.confirm(COMPLETED_REFERENCE, amount=SAMPLE.amount, currency=SAMPLE.currency)
    )
    check_verified(
        await client.verify_callback(CALLBACK_URL, amount=SAMPLE.amount, currency=SAMPLE.currency)
    )


async def test_list_and_iter_payments_read_unreadable_optional_fields(
    client: EitherClient, respx_mock: respx.Router
) -> None:
    body = {"data": [listed_body(**ODD_LIST), listed_body("order-2")]}
    respx_mock.get(LIST_URL).respond(200, json=body)

    check_listed(await client.list_payments())
    check_listed(await client.drain())


@pytest.mark.parametrize(
    "changes",
    [
        {"amount": "250000", "fee": "n/a"},
        {"currency": 566, "customer": "guest"},
        {"success": "yes", "metadata": 1},
        {"reference": None},
    ],
)
async def test_a_wrong_type_in_a_field_fulfilment_is_decided_on_still_fails_the_verify(
    client: EitherClient, respx_mock: respx.Router, changes: dict[str, Any]
) -> None:
    respx_mock.get(VERIFY_URL).respond(200, json=verify_body(**changes))
    with pytest.raises(paysdk.ResponseValidationError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    strict = next(iter(changes))
    assert [error["loc"] for error in caught.value.errors] == [("data", strict)]
    assert str(caught.value).startswith(
        f"the service answered with a body that is not the documented shape: data.{strict}: "
    )


@pytest.mark.parametrize(
    "changes", [{"status": 3, "fee": "n/a"}, {"amount": 1.5}, {"currency": None}]
)
async def test_a_wrong_type_in_a_field_fulfilment_is_decided_on_still_fails_the_list(
    client: EitherClient, respx_mock: respx.Router, changes: dict[str, Any]
) -> None:
    body = {"data": [listed_body("order-2"), listed_body(**changes)]}
    respx_mock.get(LIST_URL).respond(200, json=body)
    strict = next(iter(changes))
    for call in (client.list_payments, client.drain):
        with pytest.raises(paysdk.ResponseValidationError) as caught:
            await call()
        assert {error["loc"][:3] for error in caught.value.errors} == {("data", 1, strict)}


async def test_over_http_against_the_sandbox(sandbox: Sandbox, connect: MakeClient) -> None:
    verified = {"status": True, "message": "ok", "data": verify_body(**ODD_VERIFY)["data"]}
    listed = {"data": [listed_body(**ODD_LIST), listed_body("order-2")]}
    path = f"/payment/{COMPLETED_REFERENCE}"
    sandbox.inject(Fault.json(200, verified), path=path, times=None)
    sandbox.inject(Fault.json(200, listed), path="/payments", times=None)
    client = connect()

    check_verified(await client.verify(COMPLETED_REFERENCE))
    check_verified(
        await client.verify_callback(CALLBACK_URL, amount=SAMPLE.amount, currency=SAMPLE.currency)
    )
    check_listed(await client.list_payments())
    check_listed(await client.drain())
    assert [request.path for request in sandbox.requests] == [path, path, "/payments", "/payments"]


async def test_a_strict_field_of_the_wrong_type_over_http_fails_without_retrying(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    body = verify_body(amount=2_500_000.0, fee="n/a")
    sandbox.inject(Fault(status=200, body=json.dumps(body)), path="/payment/*", times=None)
    with pytest.raises(
        paysdk.ResponseValidationError, match=r"data\.amount: Input should be a valid integer"
    ):
        await connect().verify(COMPLETED_REFERENCE)
    assert len(sandbox.requests) == 1


@pytest.mark.parametrize(
    "sent",
    [
        "20261106",  # a date in ISO 8601's basic form, which pydantic reads as 1970-08-23
        "2026",  # a year, which pydantic reads as 1970-01-01T00:33:46
        "1793952927",
        1_793_952_927,  # a Unix time, which the contract does not give
        253_402_300_800,  # pydantic reads it as milliseconds: 1978, not the year 10000
        -1.5,
    ],
)
async def test_a_timestamp_that_is_no_iso_8601_text_is_kept_as_sent_not_read_as_a_unix_time(
    sandbox: Sandbox, connect: MakeClient, sent: object
) -> None:
    body = {"data": [listed_body(created_at=sent, updated_at="2026-11-06T08:15:27Z")]}
    sandbox.inject(Fault.json(200, body), path="/payments", times=None)
    client = connect()
    for payment in (*await client.list_payments(), *await client.drain()):
        assert (payment.created_at, dict(payment.unparsed)) == (None, {"created_at": sent})
        assert payment.updated_at == dt.datetime(2026, 11, 6, 8, 15, 27, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("fee", [True, 3750.0, "3750", " 3750 ", "3_750"])
async def test_a_fee_or_product_amount_that_is_no_int_is_kept_as_sent_not_converted(
    client: EitherClient, respx_mock: respx.Router, fee: object
) -> None:
    products = [{"name": "Mug", "amount": fee}]
    respx_mock.get(VERIFY_URL).respond(200, json=verify_body(fee=fee, products=products))
    respx_mock.get(LIST_URL).respond(200, json={"data": [listed_body(fee=fee, products=products)]})

    payment = await client.verify(COMPLETED_REFERENCE)
    [listed] = await client.list_payments()
    assert [listed] == await client.drain()
    for read in (payment, listed):
        assert (read.fee, dict(read.unparsed)) == (None, {"fee": fee})
        [product] = read.products
        assert (product.amount, dict(product.unparsed)) == (None, {"amount": fee})


async def test_amounts_past_64_bits_are_read_exactly_over_http(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    huge = 2**64 + 1
    products = [{"name": "Ship", "amount": huge * 3}]
    verified = verify_body(amount=huge, fee=huge * 2, products=products)
    listed = {"data": [listed_body(amount=huge, fee=huge * 2, products=products)]}
    sandbox.inject(Fault.json(200, verified), path="/payment/*", times=None)
    sandbox.inject(Fault.json(200, listed), path="/payments", times=None)
    client = connect()

    payment = await client.confirm(COMPLETED_REFERENCE, amount=huge, currency=SAMPLE.currency)
    [first] = await client.list_payments()
    assert [first] == await client.drain()
    for read in (payment, first):
        assert (read.amount, read.fee, read.products[0].amount) == (huge, huge * 2, huge * 3)
        assert not read.unparsed
    with pytest.raises(paysdk.PaymentMismatchError, match=f"amount expected {huge - 1} but"):
        await client.confirm(COMPLETED_REFERENCE, amount=huge - 1, currency=SAMPLE.currency)

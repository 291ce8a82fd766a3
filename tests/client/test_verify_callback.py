"""verify_callback and confirm: only a succeeded payment matching the order comes back."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
import respx

import paysdk
from paysdk import Expected
from tests.conftest import (
    BASE_URL,
    NOT_FOUND_BODY,
    SECRET,
    EitherClient,
    MakeClient,
    verify_body,
)
from tests.support.merchant import Order

pytestmark = pytest.mark.anyio

REFERENCE = "order-1042"
VERIFY_URL = f"{BASE_URL}/payment/{REFERENCE}"
CALLBACK_URL = "https://shop.example/payments/callback?" + urlencode({"reference": REFERENCE})
ORDER = Order(REFERENCE, amount=250000, currency="NGN")

Check = Callable[[EitherClient, Order], Awaitable[paysdk.VerifiedPayment]]


async def by_confirm(client: EitherClient, order: Order) -> paysdk.VerifiedPayment:
    result: paysdk.VerifiedPayment = await client.confirm(
        order.reference, amount=order.amount, currency=order.currency
    )
    return result


async def by_callback_amount(client: EitherClient, order: Order) -> paysdk.VerifiedPayment:
    url = "https://shop.example/cb?" + urlencode({"reference": order.reference})
    result: paysdk.VerifiedPayment = await client.verify_callback(
        url, amount=order.amount, currency=order.currency
    )
    return result


async def by_callback_lookup(client: EitherClient, order: Order) -> paysdk.VerifiedPayment:
    query = urlencode({"reference": order.reference})
    result: paysdk.VerifiedPayment = await client.verify_callback(
        query, lookup={order.reference: order}.get
    )
    return result


@pytest.fixture(params=[by_confirm, by_callback_amount, by_callback_lookup])
def check(request: pytest.FixtureRequest) -> Check:
    """Each way to confirm a payment against an order; every check runs through all three."""
    how: Check = request.param
    return how


def answer(route: respx.Route, **changes: Any) -> None:
    """Make ``route`` answer verify for REFERENCE, with ``changes`` to the payment."""
    body = verify_body(REFERENCE)
    body["data"].update(changes)
    route.mock(return_value=httpx.Response(200, json=body))


@respx.mock
async def test_a_matching_payment_is_returned(client: EitherClient, check: Check) -> None:
    route = respx.get(VERIFY_URL)
    answer(route)
    payment = await check(client, ORDER)
    assert payment.reference == REFERENCE
    assert (payment.amount, payment.currency, payment.succeeded) == (250000, "NGN", True)
    assert route.call_count == 1
    assert route.calls.last.request.headers["Authorization"].startswith("Bearer ")


@respx.mock
async def test_currency_is_compared_without_ascii_case(client: EitherClient, check: Check) -> None:
    answer(respx.get(VERIFY_URL), currency="ngn")
    payment = await check(client, dataclasses.replace(ORDER, currency="Ngn"))
    assert payment.currency == "ngn"


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ("SSP", "\u00dfP"),
        ("INR", "\u0131nr"),
        ("USD", "u\u017fd"),
        ("FFA", "\ufb00a"),
        ("NGN", " ngn\u00a0"),
    ],
    ids=["sharp-s", "dotless-i", "long-s", "ligature", "padding"],
)
@respx.mock
async def test_a_currency_unicode_would_case_map_to_the_code_is_a_mismatch(
    client: EitherClient, check: Check, expected: str, actual: str
) -> None:
    answer(respx.get(VERIFY_URL), currency=actual)
    with pytest.raises(paysdk.PaymentMismatchError) as caught:
        await check(client, dataclasses.replace(ORDER, currency=expected))
    assert caught.value.mismatches == {"currency": (expected, actual)}


@pytest.mark.parametrize("currency", [" NGN", "\uff2e\uff27\uff2e", "\u0131nr", "NAIRA", ""])
@pytest.mark.respx(assert_all_called=False)
async def test_an_expected_currency_that_is_not_a_code_is_refused_before_any_request(
    client: EitherClient, check: Check, currency: str, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.get(VERIFY_URL)
    answer(route)
    with pytest.raises(paysdk.ConfigurationError, match="three ASCII letters"):
        await check(client, dataclasses.replace(ORDER, currency=currency))
    assert route.call_count == 0


@pytest.mark.parametrize("amount", [10**5000, -(10**5000)], ids=["huge", "hugely-negative"])
@respx.mock
async def test_an_order_amount_too_long_to_print_is_a_mismatch(
    client: EitherClient, check: Check, amount: int
) -> None:
    """Python refuses to write out an int of more than 4,300 digits: the message says what the
    amount is instead of failing to say it."""
    answer(respx.get(VERIFY_URL))
    with pytest.raises(paysdk.PaymentMismatchError, match="an integer of over") as caught:
        await check(client, dataclasses.replace(ORDER, amount=amount))
    assert caught.value.mismatches == {"amount": (amount, 250000)}


@pytest.mark.parametrize(
    "changes",
    [
        {"currency": f"Bearer {SECRET}"},
        {"currency": "\u202e" * 100_000},
        {"reference": f"Bearer {SECRET}"},
        {"reference": "x" * 100_000},
        {"amount": -(10**4000)},
    ],
    ids=["key-as-currency", "huge-currency", "key-as-reference", "huge-reference", "huge-amount"],
)
@respx.mock
async def test_what_the_service_said_is_quoted_blotted_and_short(
    client: EitherClient, check: Check, changes: dict[str, object]
) -> None:
    """A currency, reference or amount the service sent is its own: the mismatch's message,
    which merchants log, quotes it without the key and cut short (``exc.actual`` keeps it
    whole); an amount of 4,001 digits, which JSON can carry, is not a 4,000-character line."""
    answer(respx.get(VERIFY_URL), **changes)
    with pytest.raises(paysdk.PaymentMismatchError) as caught:
        await check(client, ORDER)
    message = str(caught.value)
    assert SECRET not in message
    assert len(message) < 1000  # 64 characters, each shown as at most a 6-character escape
    ((field, sent),) = changes.items()
    assert caught.value.actual[field] == sent
    if field == "amount":
        assert "but the service says -100000000" in message
        assert message.endswith("... (4,001 digits)")


@respx.mock
async def test_a_failed_payment_is_refused(client: EitherClient, check: Check) -> None:
    answer(respx.get(VERIFY_URL), success=False)
    with pytest.raises(paysdk.PaymentFailedError) as caught:
        await check(client, ORDER)
    assert caught.value.payment.success is False
    assert caught.value.reference == REFERENCE


@pytest.mark.parametrize(
    ("changes", "mismatches"),
    [
        ({"amount": 2500}, {"amount": (250000, 2500)}),
        ({"currency": "USD"}, {"currency": ("NGN", "USD")}),
        ({"amount": 1, "currency": "GHS"}, {"amount": (250000, 1), "currency": ("NGN", "GHS")}),
        ({"reference": "order-9999"}, {"reference": (REFERENCE, "order-9999")}),
    ],
    ids=["amount", "currency", "both", "reference"],
)
@respx.mock
async def test_a_payment_for_something_else_is_refused(
    client: EitherClient,
    check: Check,
    changes: dict[str, Any],
    mismatches: dict[str, tuple[object, object]],
) -> None:
    answer(respx.get(VERIFY_URL), **changes)
    with pytest.raises(paysdk.PaymentMismatchError) as caught:
        await check(client, ORDER)
    error = caught.value
    assert error.mismatches == mismatches
    assert error.expected == {field: pair[0] for field, pair in mismatches.items()}
    assert error.actual == {field: pair[1] for field, pair in mismatches.items()}
    assert error.payment.reference == changes.get("reference", REFERENCE)


@respx.mock
async def test_a_failed_payment_with_another_reference_is_a_mismatch(
    client: EitherClient, check: Check
) -> None:
    answer(respx.get(VERIFY_URL), reference="order-9999", success=False)
    with pytest.raises(paysdk.PaymentMismatchError) as caught:
        await check(client, ORDER)
    assert "reference" in caught.value.mismatches


@respx.mock
async def test_an_unknown_payment_is_payment_not_found(client: EitherClient, check: Check) -> None:
    respx.get(VERIFY_URL).mock(return_value=httpx.Response(404, json=NOT_FOUND_BODY))
    with pytest.raises(paysdk.PaymentNotFoundError) as caught:
        await check(client, ORDER)
    assert caught.value.reference == REFERENCE


@respx.mock
async def test_the_service_failing_is_a_server_error(client: EitherClient, check: Check) -> None:
    route = respx.get(VERIFY_URL).mock(return_value=httpx.Response(503))
    with pytest.raises(paysdk.ServerError):
        await check(client, ORDER)
    assert route.call_count == 1 + client.client.max_retries


# --- lookup -----------------------------------------------------------------------------------


def from_expected(order: Order) -> object:
    return Expected(amount=order.amount, currency=order.currency)


def from_mapping(order: Order) -> object:
    return {"amount": order.amount, "currency": order.currency, "sku": "kettle"}


def from_order(order: Order) -> object:
    return order


@pytest.mark.parametrize("shape", [from_expected, from_mapping, from_order])
@pytest.mark.parametrize(("amount", "matches"), [(250000, True), (250001, False)])
@respx.mock
async def test_lookup_may_return_expected_a_mapping_or_an_order(
    client: EitherClient, shape: Callable[[Order], object], amount: int, matches: bool
) -> None:
    answer(respx.get(VERIFY_URL))
    looked_up: list[str] = []

    def lookup(reference: str) -> object:
        looked_up.append(reference)
        return shape(dataclasses.replace(ORDER, amount=amount))

    if matches:
        payment = await client.verify_callback(CALLBACK_URL, lookup=lookup)
        assert payment.amount == amount
    else:
        with pytest.raises(paysdk.PaymentMismatchError):
            await client.verify_callback(CALLBACK_URL, lookup=lookup)
    assert looked_up == [REFERENCE]


@respx.mock
async def test_only_an_async_client_awaits_an_async_lookup(make_client: MakeClient) -> None:
    client = make_client()
    answer(respx.get(VERIFY_URL), amount=1)

    async def lookup(reference: str) -> object:
        return {REFERENCE: Order(REFERENCE, amount=1, currency="NGN")}.get(reference)

    if client.is_async:
        payment = await client.verify_callback(CALLBACK_URL, lookup=lookup)
        assert payment.amount == 1
    else:  # the sync client cannot await it: refused, and the coroutine is closed unawaited
        with pytest.raises(paysdk.ConfigurationError, match="async lookup needs AsyncClient"):
            await client.verify_callback(CALLBACK_URL, lookup=lookup)


@pytest.mark.respx(assert_all_called=False)
async def test_an_unknown_order_is_refused_before_any_request(
    client: EitherClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.get(url__startswith=BASE_URL)
    with pytest.raises(paysdk.UnknownOrderError) as caught:
        await client.verify_callback(CALLBACK_URL, lookup=lambda reference: None)
    assert caught.value.reference == REFERENCE
    assert isinstance(caught.value, paysdk.InvalidCallbackError)
    assert not route.called


@pytest.mark.parametrize(
    "source",
    ["", "reference=a&reference=b", "reference=%FF", {"reference": ["a", "b"]}, 42],
)
@pytest.mark.respx(assert_all_called=False)
async def test_a_malformed_callback_is_refused_before_any_request(
    client: EitherClient, respx_mock: respx.MockRouter, source: object
) -> None:
    route = respx_mock.get(url__startswith=BASE_URL)
    looked_up: list[str] = []
    with pytest.raises(paysdk.InvalidCallbackError):
        await client.verify_callback(source, lookup=looked_up.append)
    assert looked_up == []
    assert not route.called


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"amount": 1, "lookup": lambda reference: ORDER}, "not both"),
        ({"lookup": lambda reference: 42}, "lookup must return"),
    ],
    ids=["lookup-and-amount", "lookup-returning-nonsense"],
)
@pytest.mark.respx(assert_all_called=False)
async def test_a_misused_lookup_is_a_configuration_error_before_any_request(
    client: EitherClient, respx_mock: respx.MockRouter, options: dict[str, Any], message: str
) -> None:
    route = respx_mock.get(url__startswith=BASE_URL)
    with pytest.raises(paysdk.ConfigurationError, match=message):
        await client.verify_callback(CALLBACK_URL, **options)
    assert not route.called

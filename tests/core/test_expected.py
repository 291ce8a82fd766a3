"""Expected, expected_for and check_payment: what a payment must match before it is fulfilled."""

from __future__ import annotations

import dataclasses
import decimal
import inspect

import pytest

import paysdk
from paysdk import _core


def test_expected_takes_whole_decimals_and_refuses_fractions_and_floats() -> None:
    whole = decimal.Decimal("250000.00")
    assert _core.Expected(amount=whole).amount == 250000  # type: ignore[arg-type]
    for amount in (decimal.Decimal("2500.50"), 2500.0, True, "2500", decimal.Decimal("NaN")):
        with pytest.raises(paysdk.ConfigurationError, match="whole number"):
            _core.Expected(amount=amount)  # type: ignore[arg-type]


@dataclasses.dataclass
class Order:
    amount: decimal.Decimal | int | None
    currency: str | None


@pytest.mark.parametrize(
    "found",
    [
        Order(amount=250000, currency=None),
        Order(amount=None, currency="NGN"),
        {"amount": 250000},
        {"currency": "NGN"},
        object(),
    ],
)
def test_a_lookup_must_give_both_amount_and_currency(found: object) -> None:
    with pytest.raises(paysdk.ConfigurationError, match="must return an order with both"):
        _core.expected_for("order-1042", None, None, True, found)


def test_a_lookup_may_give_an_order_a_mapping_or_expected() -> None:
    want = _core.Expected(amount=250000, currency="NGN")
    assert _core.expected_for("r", None, None, True, Order(decimal.Decimal(250000), "NGN")) == want
    assert _core.expected_for("r", None, None, True, {"amount": 250000, "currency": "NGN"}) == want
    loose = _core.Expected(amount=250000)
    assert _core.expected_for("r", None, None, True, loose) is loose


def test_an_async_lookup_on_a_sync_client_is_refused_and_closed() -> None:
    async def lookup() -> _core.Expected:
        return _core.Expected(amount=1, currency="NGN")

    coroutine = lookup()
    with pytest.raises(paysdk.ConfigurationError, match="AsyncClient"):
        _core.expected_for("r", None, None, True, coroutine)
    assert inspect.getcoroutinestate(coroutine) == "CORO_CLOSED"  # no "never awaited" warning


def test_the_payment_currency_is_compared_without_case_or_padding() -> None:
    payment = paysdk.VerifiedPayment(
        reference="order-1042", amount=100, currency=" ngn ", success=True
    )
    checked = _core.check_payment(payment, _core.Expected(amount=100, currency="NGN"))
    assert checked is payment

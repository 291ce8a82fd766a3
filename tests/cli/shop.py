"""A merchant's order table and fulfilment, as ``paysdk reconcile --lookup/--fulfil`` import them
(``tests.cli.shop:find_order``)."""

from __future__ import annotations

import paysdk

ORDERS = {
    "shop-paid": {"amount": 700, "currency": "NGN"},
    "shop-underpaid": {"amount": 900, "currency": "NGN"},  # the customer paid 100
    "shop-missed": {"amount": 500, "currency": "NGN"},  # paid; its callback never came
    "shop-backorder": {"amount": 200, "currency": "NGN"},  # paid; cannot ship: ship_in_stock fails
}
"""The shop's orders by reference; ``shop-foreign`` (another shop's payment) is not one."""

shipped: list[str] = []
"""References fulfilled, in order."""

NOT_A_FUNCTION = 42


def find_order(reference: str) -> object:
    """The order for a reference, or ``None``: not this shop's payment."""
    return ORDERS.get(reference)


def find_order_or_draft(reference: str) -> object:
    """``find_order``, but ``shop-missed`` is a draft whose total was never set: no amount."""
    if reference == "shop-missed":
        return {"amount": None, "currency": "NGN"}
    return find_order(reference)


def find_order_in_floats(reference: str) -> object:
    """``find_order``, but ``shop-missed``'s total was read from a float column."""
    if reference == "shop-missed":
        return {"amount": 500.0, "currency": "NGN"}
    return find_order(reference)


def ship(payment: paysdk.VerifiedPayment) -> None:
    shipped.append(payment.reference)


def ship_in_stock(payment: paysdk.VerifiedPayment) -> None:
    """``ship``, failing for ``shop-backorder``: nothing left in the warehouse."""
    if payment.reference == "shop-backorder":
        raise RuntimeError("out of stock")
    ship(payment)

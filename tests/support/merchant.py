"""A stand-in merchant for callback tests: an order table and idempotent fulfilment."""

from __future__ import annotations

import dataclasses
import threading
from typing import TYPE_CHECKING

import pytest

import paysdk
from paysdk.sandbox import Fault

if TYPE_CHECKING:
    from paysdk.sandbox import Sandbox


@dataclasses.dataclass(frozen=True)
class Order:
    """One row of the merchant's order table: what the customer must pay."""

    reference: str
    amount: int
    currency: str


class Shop:
    """Orders by reference, and which were fulfilled or recorded as failed (each at most once)."""

    def __init__(self, *orders: Order) -> None:
        self.orders = {order.reference: order for order in orders}
        self.fulfilled: list[str] = []
        self.failed: list[str] = []
        self.deliveries = 0
        self._lock = threading.Lock()

    def lookup(self, reference: str) -> Order | None:
        return self.orders.get(reference)

    def fulfil(self, payment: paysdk.VerifiedPayment) -> bool:
        """Ship the order once; True only the first time (a callback may come twice)."""
        with self._lock:
            self.deliveries += 1
            if payment.reference in self.fulfilled:
                return False
            self.fulfilled.append(payment.reference)
            return True

    def record_failure(self, error: paysdk.PaymentFailedError) -> None:
        with self._lock:
            if error.reference not in self.failed:
                self.failed.append(error.reference)


SHOP_ORDERS = (
    Order("order-1042", amount=2500000, currency="NGN"),  # the sandbox: COMPLETED, 2500000 NGN
    Order("order-1043", amount=4999, currency="USD"),  # the sandbox: FAILED
    Order("order-2001", amount=2500000, currency="NGN"),  # the sandbox: paid only 100 NGN
    Order("order-2002", amount=2500, currency="NGN"),  # the sandbox: paid 2500 USD
    Order("order-3000", amount=100, currency="NGN"),  # the service never saw it
)


def add_service_payments(sandbox: Sandbox) -> None:
    """Payments the sandbox holds beyond its seed, to mismatch SHOP_ORDERS."""
    sandbox.add_payment("order-2001", amount=100, currency="NGN", status="COMPLETED")
    sandbox.add_payment("order-2002", amount=2500, currency="USD", status="COMPLETED")


@dataclasses.dataclass(frozen=True)
class CallbackCase:
    """One callback a merchant's handler gets, and how it must be answered."""

    id: str
    query: str
    status_code: int
    status: str
    fulfilled: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    asks_service: bool = True
    refusal: str | None = None
    """With a ledger: a word of the reason the payment is recorded refused with (else no row)."""


CALLBACK_CASES = [
    CallbackCase("good", "reference=order-1042", 200, "ok", fulfilled=("order-1042",)),
    CallbackCase("unknown-order", "reference=order-0000", 404, "unknown_order", asks_service=False),
    CallbackCase(
        "spoofed-failed",
        "reference=order-1043",
        200,
        "failed",
        failed=("order-1043",),
        refusal="failed",
    ),
    CallbackCase("amount-mismatch", "reference=order-2001", 409, "mismatch", refusal="amount"),
    CallbackCase("currency-mismatch", "reference=order-2002", 409, "mismatch", refusal="currency"),
    CallbackCase("unknown-payment", "reference=order-3000", 404, "unknown_payment"),
    *[
        CallbackCase(name, query, 400, "invalid_callback", asks_service=False)
        for name, query in [
            ("repeated", "reference=order-1042&reference=order-1042"),
            ("missing", "ref=order-1042"),
            ("empty", "reference="),
            ("control", "reference=order%0A1042"),
            ("bad-utf8", "reference=order-%FF"),
            ("too-long", "reference=" + "x" * 300),
        ]
    ],
]
"""Every outcome, for each framework's test client: see paysdk.integrations.responses."""


def assert_answered(
    case: CallbackCase,
    shop: Shop,
    sandbox: Sandbox,
    *,
    status_code: int,
    body: object,
) -> None:
    """A framework answered ``case`` as the mapping says, and fulfilled only a matching order.

    Every framework's helper answers ``{"status": <the mapping's word>}``, and a fulfilled
    callback ``{"status": "ok"}``: one body shape for the service.
    """
    assert status_code == case.status_code
    assert body == {"status": case.status}
    assert tuple(shop.fulfilled) == case.fulfilled
    assert tuple(shop.failed) == case.failed
    assert bool(verify_requests(sandbox)) == case.asks_service


def assert_refusal_recorded(case: CallbackCase, rows: list[tuple[str, str, str | None]]) -> None:
    """Only a payment the service confirmed (failed or mismatched) is recorded refused, with why;
    a made-up or unknown reference leaves no row."""
    if case.refusal is None:
        assert rows == []
        return
    [(reference, state, reason)] = rows
    assert (f"reference={reference}", state) == (case.query, "refused")
    assert reason is not None
    assert case.refusal in reason


def verify_requests(sandbox: Sandbox) -> list[str]:
    """The paths of the verify requests the sandbox received."""
    return [request.path for request in sandbox.requests if request.path.startswith("/payment/")]


def service_failures(no_wait: Fault) -> pytest.MarkDecorator:
    """Parametrize a test with ``fault`` and ``wait``: the service failing as ``no_wait`` does,
    asking no wait, then rate-limiting with a ``Retry-After`` the callback's 503 must pass on."""
    return pytest.mark.parametrize(
        ("fault", "wait"),
        [(no_wait, None), (Fault.rate_limited(retry_after=3600), "3600")],
        ids=["no-wait-asked", "rate-limited"],
    )

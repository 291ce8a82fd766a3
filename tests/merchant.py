"""A stand-in merchant for callback tests: an order table and idempotent fulfilment."""

from __future__ import annotations

import dataclasses
import threading

import paysdk


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

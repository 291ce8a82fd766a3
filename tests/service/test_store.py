"""The one payment store behind the sandbox and the in-memory fake."""

from __future__ import annotations

import datetime as dt

import pytest

from paysdk._service.store import PaymentStore
from paysdk.sandbox import PaymentRecord, Sandbox
from paysdk.testing import MockPaymentAPI

DAY = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc)


def record(reference: str, *, hour: int = 0, amount: int = 100) -> PaymentRecord:
    return PaymentRecord(reference, amount=amount, created_at=DAY + dt.timedelta(hours=hour))


def test_a_reference_holds_the_last_payment_put() -> None:
    store = PaymentStore([record("a", amount=1), record("a", amount=2)])
    assert len(store) == 1
    replacement = record("a", amount=3)
    assert store.put(replacement) is replacement
    assert store.get("a") is replacement
    assert len(store) == 1


def test_removing_is_idempotent_and_a_missing_payment_is_none() -> None:
    store = PaymentStore([record("a")])
    store.remove("a")
    store.remove("a")
    assert store.get("a") is None
    assert len(store) == 0


def test_payments_are_listed_newest_first_as_a_copy() -> None:
    store = PaymentStore([record("old", hour=1), record("new", hour=3), record("mid", hour=2)])
    listed = store.newest_first()
    assert [r.reference for r in listed] == ["new", "mid", "old"]
    listed.clear()
    assert len(store.newest_first()) == 3


def test_reset_holds_exactly_what_it_is_given() -> None:
    store = PaymentStore([record("a"), record("b")])
    store.reset([record("c")])
    assert [r.reference for r in store.newest_first()] == ["c"]
    store.reset()
    assert store.newest_first() == []


@pytest.mark.parametrize("make", [Sandbox, MockPaymentAPI], ids=["sandbox", "fake"])
def test_the_sandbox_and_the_fake_keep_their_payments_in_a_store(
    make: type[Sandbox] | type[MockPaymentAPI],
) -> None:
    service = make(payments=[record("old", hour=1), record("new", hour=2)])
    store = service._payments.store if isinstance(service, Sandbox) else service._payments
    assert isinstance(store, PaymentStore)
    replaced = service.add_payment(record("old", hour=3, amount=7))
    service.remove_payment("gone")
    assert service.get_payment("old") is replaced
    assert [r.reference for r in service.payments] == ["old", "new"]
    assert service.get_payment("missing") is None

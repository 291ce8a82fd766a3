"""paysdk.testing's factories: real models, realistic, self-consistent, both views agreeing."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from collections.abc import Callable
from zoneinfo import ZoneInfo

import pytest

import paysdk
from paysdk.sandbox import (
    COMPLETED_REFERENCE,
    FAILED_REFERENCE,
    NON_CARD_REFERENCE,
    PaymentRecord,
    default_payments,
)
from paysdk.testing import listed_payment, payment_pair, payment_record, verified_payment
from tests import conftest

WIRE_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def nested(depth: int) -> dict[str, object]:
    """An object ``depth`` objects deep, past what JSON can be written for."""
    inner: dict[str, object] = {}
    for _ in range(depth):
        inner = {"m": inner}
    return inner


def seeded(reference: str) -> PaymentRecord:
    (record,) = [r for r in default_payments() if r.reference == reference]
    return record


def test_a_default_verified_payment_is_a_paid_card_payment_with_a_fee() -> None:
    payment = verified_payment()
    assert isinstance(payment, paysdk.VerifiedPayment)
    assert payment.succeeded and payment.reference.startswith("order-")
    assert payment.authorization is not None and payment.authorization.card_type == "visa"
    assert payment.fee == round(payment.amount * 0.015) > 0
    assert sum(product.amount or 0 for product in payment.products) == payment.amount
    assert payment.transaction_id and payment.customer and payment.customer.email


@pytest.mark.parametrize(
    ("amount", "fee"),
    [(2**60, 17_293_822_569_102_705), (10**30, 15 * 10**27), (10**400, 15 * 10**397)],
    ids=["2**60", "thirty-one-digits", "past-a-float"],
)
def test_the_default_fee_of_an_amount_past_a_float_is_exact(amount: int, fee: int) -> None:
    assert verified_payment(amount=amount).fee == fee
    assert listed_payment(amount=amount).fee == fee


def test_each_payment_gets_its_own_reference() -> None:
    assert len({verified_payment().reference for _ in range(5)}) == 5


def test_a_failed_card_payment_keeps_its_card_and_costs_no_fee() -> None:
    payment = verified_payment(success=False, amount=4999, currency="USD")
    assert not payment.succeeded and payment.fee == 0
    assert payment.authorization is not None
    assert payment.metadata["decline_reason"] == "insufficient_funds"
    assert payment.customer is not None and payment.customer.phone.startswith("+1")  # type: ignore[union-attr]


@pytest.mark.parametrize("method", ["bank_transfer", "mobile_money"])
def test_payments_not_by_card_have_no_authorization(method: paysdk.testing.PaymentMethod) -> None:
    verified, listed = payment_pair(method=method, currency="GHS", amount=85000)
    assert verified.authorization is None
    assert verified.metadata["payment_method"] == method
    assert listed.succeeded and listed.currency == "GHS"
    assert verified_payment(authorization=None).authorization is None


def test_the_pair_is_one_payment_in_both_shapes() -> None:
    verified, listed = payment_pair(reference="inv/7", amount=1250, fee=19, success=False)
    shared = ("reference", "amount", "fee", "currency", "customer", "products")
    assert {f: getattr(verified, f) for f in shared} == {f: getattr(listed, f) for f in shared}
    assert (verified.success, listed.status, listed.customer_paid) == (False, "FAILED", False)
    assert listed.id and listed.created_at is not None and listed.updated_at is not None
    assert listed.updated_at >= listed.created_at


def test_timestamps_are_in_the_service_shape_and_can_be_fixed() -> None:
    created = dt.datetime(2026, 11, 2, 9, 15, 27, 123456, tzinfo=dt.timezone.utc)
    listed = listed_payment(created_at=created, status="COMPLETED")
    wire = listed.model_dump(mode="json")
    assert wire["created_at"] == "2026-11-02T09:15:27.123456Z"
    assert WIRE_TIME.fullmatch(wire["updated_at"]) and listed.updated_at == created + dt.timedelta(
        seconds=14
    )


def test_the_factories_build_what_the_client_parses_from_the_wire() -> None:
    record = payment_record(reference="order-9", method="mobile_money")
    verified = paysdk.VerifiedPayment.model_validate_json(json.dumps(record.verify_shape()))
    assert verified_payment(reference="order-9", method="mobile_money").model_dump(
        exclude={"transaction_id"}
    ) == verified.model_dump(exclude={"transaction_id"})
    assert set(record.list_shape()) == {
        "id", "reference", "amount", "fee", "status", "customer_paid", "currency",
        "customer", "products", "created_at", "updated_at",
    }  # fmt: skip


def test_an_unknown_status_is_kept_as_the_service_would_send_it() -> None:
    listed = listed_payment(status="REVERSED")
    assert listed.status == "REVERSED" and not listed.succeeded
    assert not verified_payment(status="REVERSED").succeeded


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"success": True, "status": "FAILED"}, "contradict"),
        ({"success": True, "status": "COMPL\u0415TED"}, r"status='COMPL\\u0415TED' contradict"),
        ({"status": ""}, "status must be non-empty"),
        ({"status": 0}, "status must be a string"),
        ({"status": False}, "status must be a string"),
        ({"method": "bank_transfer", "authorization": {"card_type": "visa"}}, "no card"),
        ({"method": "card", "authorization": None}, "card payment has an authorization"),
        ({"method": "cheque"}, "method must be"),
        ({"amount": -1}, "amount must be a non-negative integer"),
        ({"amount": "100"}, "amount must be a non-negative integer"),
        ({"fee": 10**5000}, "fee must be an integer of at most 4,300 digits"),
        ({"success": False, "amount": 10**4300}, "amount must be an integer of at most 4,300"),
        ({"success": "yes"}, "success must be True or False"),
        ({"reference": ""}, "reference must be a non-empty string"),
        ({"created_at": dt.datetime(2026, 1, 2)}, "created_at must be a timezone-aware"),
        ({"updated_at": "2026-01-02T00:00:00Z"}, "updated_at must be a timezone-aware"),
        ({"customer": {"name": "Ada"}}, "customer must be an object with exactly"),
        ({"amout": 500}, "unknown payment field.* 'amout'; the fields are amount, "),
        ({"reference": 7}, "reference must be a non-empty string"),
        ({"metadata": {"tags": {"gift"}}}, r"metadata must be JSON \(Object of type set"),
        ({"metadata": {"at": dt.datetime(2026, 1, 2)}}, "metadata must be JSON"),
        ({"metadata": {"rate": float("nan")}}, r"metadata must be JSON \(Out of range float"),
        ({"metadata": {"cap": [float("inf")]}}, r"metadata must be JSON \(Out of range float"),
        ({"metadata": nested(5000)}, "nested too deep"),
        ({"metadata": nested(100)}, "nested too deep: at most 100 levels"),
        ({"created_at": dt.datetime.max.replace(tzinfo=dt.timezone.utc)}, "give updated_at"),
        (
            {
                "created_at": dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc),
                "updated_at": dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
            },
            "updated_at must not be before",
        ),
    ],
)
def test_contradictions_are_refused_with_a_paysdk_error(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(paysdk.ConfigurationError, match=message):
        payment_record(**fields)  # type: ignore[arg-type]


NEW_YORK = ZoneInfo("America/New_York")
LORD_HOWE = ZoneInfo("Australia/Lord_Howe")  # half an hour of daylight saving


@pytest.mark.parametrize(
    "created",
    [
        dt.datetime(2026, 11, 1, 1, 30, fold=1, tzinfo=NEW_YORK),  # the second 01:30 (EST)
        dt.datetime(2026, 11, 1, 1, 59, 55, tzinfo=NEW_YORK),  # 14 s on is the second 02:00
        dt.datetime(2026, 4, 5, 1, 59, 55, tzinfo=LORD_HOWE),
        dt.datetime(2026, 3, 8, 1, 59, 55, tzinfo=NEW_YORK),  # 14 s on, 02:00 does not exist
    ],
)
def test_a_payment_made_as_the_clocks_change_is_updated_seconds_after_it_was_created(
    created: dt.datetime,
) -> None:
    listed = listed_payment(created_at=created, status="COMPLETED")
    assert listed.created_at == created.astimezone(dt.timezone.utc)  # in a fold, never == created
    assert listed.updated_at == listed.created_at + dt.timedelta(seconds=14)


def test_updated_at_in_the_hour_the_clocks_go_back_is_checked_against_created_at_as_a_time() -> (
    None
):
    """Python compares two times of one zone by their clocks: the second 01:10 (EST) is after
    the first 01:30 (EDT), and the first 01:40 before the second 01:30."""
    first, second = (dt.datetime(2026, 11, 1, 1, 30, fold=n, tzinfo=NEW_YORK) for n in (0, 1))
    later = listed_payment(created_at=first, updated_at=second.replace(minute=10))
    assert later.updated_at is not None and later.created_at is not None
    assert later.updated_at - later.created_at == dt.timedelta(minutes=40)
    with pytest.raises(paysdk.ConfigurationError, match="updated_at must not be before"):
        listed_payment(created_at=second, updated_at=first.replace(minute=40))


def test_the_factories_need_no_respx() -> None:
    code = (
        "import sys; sys.modules['respx'] = None\n"
        "import paysdk.testing as t\n"
        "print(t.verified_payment(amount=5).amount)\n"
        "try:\n"
        "    t.MockPaymentAPI\n"
        "except Exception as e:\n"
        "    print(type(e).__name__, e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.splitlines()
    assert out == [
        "5",
        "ConfigurationError paysdk.testing.MockPaymentAPI needs respx: "
        "pip install 'python-paysdk[testing]'",
    ]


@pytest.mark.parametrize(
    ("currency", "reference"),
    [
        ("NGN", COMPLETED_REFERENCE),
        ("GHS", NON_CARD_REFERENCE),
        ("KES", "order-1045"),
        ("USD", FAILED_REFERENCE),
        ("EUR", FAILED_REFERENCE),
    ],
)
def test_a_payments_customer_and_card_are_the_seeds(currency: str, reference: str) -> None:
    """The factories and the seed describe the same customers and card, from one source."""
    record = payment_record(currency=currency)
    assert record.customer == seeded(reference).customer
    assert record.authorization == seeded(COMPLETED_REFERENCE).authorization


def test_the_suites_sample_bodies_are_a_factorys_payment() -> None:
    """tests/conftest.py keeps no payment of its own: its bodies render one factory payment."""
    completed = seeded(COMPLETED_REFERENCE)
    verified, listed = payment_pair(reference=completed.reference, created_at=completed.created_at)
    assert paysdk.VerifiedPayment.model_validate(conftest.verify_body()["data"]) == verified
    assert paysdk.ListedPayment.model_validate(conftest.listed_body()) == listed
    assert conftest.NOT_FOUND_BODY == paysdk.sandbox.NOT_FOUND_BODY


@pytest.mark.parametrize("year", [1, 5, 999])
def test_a_payment_from_before_year_1000_is_listed_by_the_fake(year: int) -> None:
    created = dt.datetime(year, 3, 4, 5, 6, 7, tzinfo=dt.timezone.utc)
    listed = listed_payment(created_at=created, updated_at=created)
    assert listed.created_at == created
    assert WIRE_TIME.fullmatch(payment_record(created_at=created).list_shape()["created_at"])
    with paysdk.testing.MockPaymentAPI() as api:
        api.add_payment("order-7", created_at=created, updated_at=created)
        with api.client() as client:
            (payment,) = client.list_payments()
    assert payment.created_at == created


def test_metadata_as_deep_as_a_client_reads_is_verified_through_the_fake() -> None:
    with paysdk.testing.MockPaymentAPI() as api:
        api.add_payment("order-7", metadata=nested(99))  # 100 objects deep
        with api.client() as client:
            assert client.verify("order-7").metadata == nested(99)


@pytest.mark.parametrize("reference", ["\ud800", "order-\udfff"])
def test_a_reference_utf8_cannot_encode_is_refused(reference: str) -> None:
    with pytest.raises(paysdk.ConfigurationError, match="reference must be text UTF-8 can encode"):
        verified_payment(reference=reference)


@pytest.mark.parametrize(
    ("fields", "read"),
    [
        ({"currency": "N\ud800"}, lambda p: p.currency),
        ({"transaction_id": "txn-\udfff"}, lambda p: p.transaction_id),
        ({"metadata": {"note": "\ud800"}}, lambda p: p.metadata["note"]),
    ],
    ids=["currency", "transaction-id", "metadata"],
)
def test_a_lone_surrogate_reads_as_the_fake_and_the_client_read_it(
    fields: dict[str, object], read: Callable[[paysdk.VerifiedPayment], object]
) -> None:
    """The factories parse as the client parses the fake's body: a lone surrogate the fake
    sends as an escape reads as U+FFFD in both, never a ``ValidationError`` of the factory's
    own."""
    made = verified_payment(reference="order-7", **fields)  # type: ignore[arg-type]
    with paysdk.testing.MockPaymentAPI() as api:
        api.add_payment("order-7", **fields)  # type: ignore[arg-type]
        with api.client() as client:
            sent = client.verify("order-7")
    assert "\ufffd" in str(read(made))
    assert read(made) == read(sent)

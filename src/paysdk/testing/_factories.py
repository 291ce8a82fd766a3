"""Realistic, self-consistent payments for tests, as the models the client parses: each factory
renders one ``PaymentRecord`` (what the sandbox and the fake serve) into the verify or list shape,
so the two views agree. Card and customers (but ZAR's) are the seed's; it needs only paysdk."""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import json
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, Final, Literal

from typing_extensions import TypedDict, Unpack

from .._core.validation import parse_list, parse_verify
from .._errors import ConfigurationError
from .._models.listed import ListedPayment
from .._models.verified import VerifiedPayment
from .._service.api import verify_envelope
from .._service.records import COMPLETED, FAILED, PaymentRecord, SeedError, check_json_metadata
from .._service.seed import (
    COMPLETED_REFERENCE,
    FAILED_REFERENCE,
    NON_CARD_REFERENCE,
    default_payments,
)

__all__ = [
    "PaymentFields",
    "PaymentMethod",
    "listed_payment",
    "payment_pair",
    "payment_record",
    "verified_payment",
]

PaymentMethod = Literal["card", "bank_transfer", "mobile_money"]
"""How the customer paid. Only a card payment carries ``authorization``."""

FEE_RATE: Final = Fraction(15, 1000)
"""The default fee of a successful payment: 1.5% of the amount, exact for an amount of any size
(a float would round one past 2**53 and overflow past 10**308). A failed payment costs none."""

_references = itertools.count(10001)
_LOCAL_CUSTOMER_PAYMENTS: Final[Mapping[str, str]] = {  # currency: a seed payment by a local
    "NGN": COMPLETED_REFERENCE,
    "GHS": NON_CARD_REFERENCE,
    "KES": "order-1045",
}
_OTHER_CUSTOMER_PAYMENT: Final = FAILED_REFERENCE
"""The seed payment whose customer pays in any other currency."""
_ZAR_CUSTOMER: Final[Mapping[str, str]] = {  # not the seed's Thandi Nkosi; each is published
    "name": "Thandiwe Nkosi",
    "email": "thandiwe.nkosi@example.com",
    "phone": "+27821234567",
}


@functools.cache
def _seed() -> Mapping[str, PaymentRecord]:
    """The bundled seed by reference: the factories' customers and card are its own."""
    return {record.reference: record for record in default_payments()}


def _card() -> Mapping[str, str]:
    """The card of a card payment: the seed's completed payment's."""
    card = _seed()[COMPLETED_REFERENCE].authorization
    assert card is not None  # the seed's completed payment is a card payment
    return card


class PaymentFields(TypedDict, total=False):
    """What a factory may be told; everything else is made up to match.

    ``success`` (verify's word) and ``status`` (list's word) say the same thing: give one. A
    ``method`` other than ``"card"``, or ``authorization=None``, makes a payment without card
    details. ``fee`` defaults to 1.5% of ``amount`` (0 when failed), ``products`` to one item
    costing ``amount``, ``updated_at`` to a few seconds after ``created_at`` (default: now).
    """

    reference: str
    amount: int
    currency: str
    success: bool
    status: str
    method: PaymentMethod
    fee: int
    customer: Mapping[str, str]
    products: Sequence[Mapping[str, Any]]
    metadata: Mapping[str, Any]
    authorization: Mapping[str, str] | None
    transaction_id: str
    id: str
    created_at: dt.datetime
    updated_at: dt.datetime


def payment_record(**fields: Unpack[PaymentFields]) -> PaymentRecord:
    """One payment as the sandbox and the fake store it; a fresh ``order-NNNNN`` by default.

    Args:
        **fields: [`PaymentFields`][paysdk.testing.PaymentFields]: what to set; the rest is
            made up to match.

    Returns:
        The record.

    Raises:
        ConfigurationError: fields that contradict each other (``success`` and ``status``) or
            are out of range.
    """
    unknown = sorted(set(fields) - PaymentFields.__optional_keys__)
    if unknown:
        raise ConfigurationError(
            f"unknown payment field(s) {', '.join(map(repr, unknown))}; the fields are "
            f"{', '.join(sorted(PaymentFields.__optional_keys__))}"
        )
    reference = fields["reference"] if "reference" in fields else f"order-{next(_references)}"
    if not isinstance(reference, str):
        raise ConfigurationError("not a valid payment: reference must be a non-empty string")
    status = _status(fields)
    succeeded = status == COMPLETED
    method = _method(fields)
    amount = fields.get("amount", 250_000)
    currency = fields.get("currency", "NGN")
    created_at = _aware(fields.get("created_at", dt.datetime.now(dt.timezone.utc)), "created_at")
    created = _instant(created_at)
    settled = dt.timedelta(seconds=14 if succeeded else 3)
    if "updated_at" in fields:
        updated_at = _aware(fields["updated_at"], "updated_at")
    elif created is None:  # its date in UTC is out of range, which PaymentRecord says
        updated_at = created_at
    else:
        try:
            updated_at = created + settled
        except OverflowError:
            raise ConfigurationError(
                "created_at is too close to year 9999's end: give updated_at"
            ) from None
    updated = _instant(updated_at)
    if created is not None and updated is not None and updated < created:
        raise ConfigurationError("updated_at must not be before created_at")
    try:
        record = PaymentRecord(
            reference=reference,
            amount=amount,
            currency=currency,
            status=status,
            fee=fields.get("fee", _fee(amount) if succeeded else 0),
            customer=fields.get("customer", _customer(currency)),
            products=fields.get("products", [_product(amount)]),
            metadata=fields.get("metadata", _metadata(reference, method, succeeded)),
            authorization=fields.get("authorization", _card()) if method == "card" else None,
            transaction_id=fields.get("transaction_id", ""),
            id=fields.get("id", ""),
            created_at=created_at,
            updated_at=updated_at,
        )
        return check_json_metadata(record)
    except SeedError as exc:
        raise ConfigurationError(f"not a valid payment: {exc}") from None


def verified_payment(**fields: Unpack[PaymentFields]) -> VerifiedPayment:
    """A payment as ``client.verify`` returns it: a successful card payment unless told so.

    Args:
        **fields: [`PaymentFields`][paysdk.testing.PaymentFields]: what to set; the rest is
            made up to match.

    Returns:
        The verified payment.
    """
    return as_verified(payment_record(**fields))


def listed_payment(**fields: Unpack[PaymentFields]) -> ListedPayment:
    """A payment as an element of ``client.list_payments()``: ``COMPLETED`` unless told so.

    Args:
        **fields: [`PaymentFields`][paysdk.testing.PaymentFields]: what to set; the rest is
            made up to match.

    Returns:
        The listed payment.
    """
    return as_listed(payment_record(**fields))


def payment_pair(**fields: Unpack[PaymentFields]) -> tuple[VerifiedPayment, ListedPayment]:
    """The verify and the list view of the same payment.

    Args:
        **fields: [`PaymentFields`][paysdk.testing.PaymentFields]: what to set; the rest is
            made up to match.

    Returns:
        The verified payment and the listed one.
    """
    record = payment_record(**fields)
    return as_verified(record), as_listed(record)


def as_verified(record: PaymentRecord) -> VerifiedPayment:
    """``record`` in the verify shape, parsed from the fake's body by the client's own parser
    (a lone surrogate the fake sends as ``"\\ud800"`` reads as U+FFFD, as from the service)."""
    return parse_verify(json.dumps(verify_envelope(record.verify_shape())).encode())


def as_listed(record: PaymentRecord) -> ListedPayment:
    """``record`` in the list shape, parsed from the fake's body by the client's own parser."""
    [payment] = parse_list(json.dumps({"data": [record.list_shape()]}).encode())
    return payment


def _status(fields: PaymentFields) -> str:
    success, status = fields.get("success"), fields.get("status")
    if success is not None and not isinstance(success, bool):
        raise ConfigurationError("success must be True or False")
    from_success = None if success is None else (COMPLETED if success else FAILED)
    if status is not None and from_success is not None and status != from_success:
        raise ConfigurationError(f"success={success} and status={status!a} contradict each other")
    if status is not None:  # as given: an empty status is refused, never made COMPLETED
        return status
    return from_success or COMPLETED


def _method(fields: PaymentFields) -> PaymentMethod:
    method = fields.get("method")
    if method is not None and method not in ("card", "bank_transfer", "mobile_money"):
        raise ConfigurationError(
            f"method must be 'card', 'bank_transfer' or 'mobile_money', not {method!r}"
        )
    card_details = fields["authorization"] if "authorization" in fields else _card()
    if method is None:
        return "card" if card_details is not None else "bank_transfer"
    if method != "card" and "authorization" in fields and card_details is not None:
        raise ConfigurationError(f"a {method} payment has no card authorization")
    if method == "card" and card_details is None:
        raise ConfigurationError("a card payment has an authorization; use another method")
    return method


def _aware(value: object, name: str) -> dt.datetime:
    if not isinstance(value, dt.datetime) or value.tzinfo is None:
        raise ConfigurationError(f"{name} must be a timezone-aware datetime")
    return value


def _instant(value: dt.datetime) -> dt.datetime | None:
    """``value`` in UTC, to add to and compare as a point in time: Python adds to and compares
    two times of one zone by their clocks, which in the hour a daylight-saving change repeats
    puts the second 01:10 before the first 01:30. ``None`` if its date in UTC is out of range."""
    try:
        return value.astimezone(dt.timezone.utc)
    except OverflowError:
        return None


def _customer(currency: object) -> dict[str, str]:
    """A local customer for ``currency``: the seed's, but for ZAR."""
    if not isinstance(currency, str):
        return {}
    if currency == "ZAR":
        return dict(_ZAR_CUSTOMER)
    return dict(_seed()[_LOCAL_CUSTOMER_PAYMENTS.get(currency, _OTHER_CUSTOMER_PAYMENT)].customer)


def _fee(amount: object) -> int:
    return round(amount * FEE_RATE) if isinstance(amount, int) else 0


def _product(amount: int) -> dict[str, Any]:
    return {"name": "Wireless headphones", "amount": amount, "description": "Over-ear, black"}


def _metadata(reference: str, method: PaymentMethod, succeeded: bool) -> dict[str, Any]:
    digits = re.sub(r"\D", "", reference)
    metadata: dict[str, Any] = {"order_id": digits or reference, "channel": "web"}
    if method != "card":
        metadata["payment_method"] = method
    if not succeeded:
        metadata["decline_reason"] = "insufficient_funds" if method == "card" else "abandoned"
    return metadata

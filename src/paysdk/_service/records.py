"""One record per payment a stand-in of the service holds, rendered into the verify and list
shapes: one record for both makes the two endpoints agree, as on the real service (``success``
and ``customer_paid`` both mean ``status == "COMPLETED"``)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import re
import sys
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NoReturn, TypeGuard, cast

from .._errors import ConfigurationError
from .._lazy import publish
from .._models.timestamps import read_timestamp, wire_timestamp

__all__ = [
    "COMPLETED",
    "FAILED",
    "PaymentRecord",
    "SeedError",
    "check_json_metadata",
    "deeper_than",
    "records_of",
]

COMPLETED = "COMPLETED"
"""The status of a successful payment."""
FAILED = "FAILED"
"""The status of a failed payment."""

_CUSTOMER_FIELDS = ("name", "email", "phone")
_PRODUCT_FIELDS: Mapping[str, type] = {"name": str, "amount": int, "description": str}
_AUTHORIZATION_PATTERNS: Mapping[str, str] = {
    "card_type": r"[a-z][a-z0-9 _-]*",
    "first_six": r"[0-9]{6}",  # not \d, which matches digits of every script
    "last_four": r"[0-9]{4}",
    "expiry": r"(0[1-9]|1[0-2])/[0-9]{2}",
}
_ID_NAMESPACE = uuid.NAMESPACE_URL.bytes + b"paysdk-sandbox:"
_DEFAULT_CUSTOMER: Mapping[str, str] = {
    "name": "Sandbox Customer",
    "email": "customer@example.com",
    "phone": "+2348000000000",
}


class SeedError(ValueError):
    """A payment record (from a seed file or ``add_payment``) is invalid; the message says why."""


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


@dataclasses.dataclass(frozen=True)
class PaymentRecord:
    """A payment as the sandbox and the in-memory fake store it. Only ``reference`` is required;
    the rest has defaults.

    ``authorization`` holds the card details of a card payment and is ``None`` for any other
    payment method. An empty ``transaction_id`` or ``id`` is derived from the reference, so a
    seed renders the same way on every run.

    Raises:
        SeedError: a field of the wrong type or out of range (the message names it).
    """

    reference: str
    """The payment's reference (the merchant's order id)."""
    amount: int = 10_000
    """The amount, in the currency's minor unit as the service reports it."""
    currency: str = "NGN"
    """The currency code."""
    status: str = COMPLETED
    """The service's status: ``COMPLETED``, ``FAILED``, or any other it may send."""
    fee: int = 0
    """The service's fee, in the same unit as ``amount``."""
    customer: Mapping[str, str] = dataclasses.field(default_factory=lambda: dict(_DEFAULT_CUSTOMER))
    """The customer's fields (a sample customer by default)."""
    products: Sequence[Mapping[str, Any]] = ()
    """The products paid for, as the service describes them."""
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=dict[str, Any])
    """The merchant's metadata, as given when the payment was made."""
    authorization: Mapping[str, str] | None = None
    """The card details of a card payment; ``None`` for any other method."""
    transaction_id: str = ""
    """The service's transaction id; ``""``: derived from the reference."""
    id: str = ""
    """The service's payment id; ``""``: derived from the reference."""
    created_at: dt.datetime = dataclasses.field(default_factory=_now)
    """When the payment was made (timezone-aware); now by default."""
    updated_at: dt.datetime | None = None
    """``None`` means the same as ``created_at``."""

    def __post_init__(self) -> None:
        # Checked field by field without loops or abstract-class checks on the common types: a
        # sandbox of 200,000 payments builds a record for each.
        if not isinstance(self.reference, str) or not self.reference:
            _fail("reference", "a non-empty string")
        if not self.reference.isascii():  # a lone surrogate: no URL or JSON body carries it
            try:
                self.reference.encode()
            except UnicodeEncodeError:
                _fail("reference", "text UTF-8 can encode")
        if type(self.amount) is not int or self.amount < 0:
            _fail("amount", "a non-negative integer")
        if type(self.fee) is not int or self.fee < 0:
            _fail("fee", "a non-negative integer")
        if self.amount.bit_length() > _SHORT_BITS or self.fee.bit_length() > _SHORT_BITS:
            _check_writable("amount", self.amount)
            _check_writable("fee", self.fee)
        if not isinstance(self.currency, str):
            _fail("currency", "a string")
        if not isinstance(self.status, str):
            _fail("status", "a string")
        if not isinstance(self.transaction_id, str):
            _fail("transaction_id", "a string")
        if not isinstance(self.id, str):
            _fail("id", "a string")
        if not self.currency:
            _fail("currency", "non-empty")
        if not self.status:
            _fail("status", "non-empty")
        if not isinstance(self.created_at, dt.datetime) or self.created_at.tzinfo is None:
            _fail("created_at", "a timezone-aware datetime")
        updated = self.updated_at
        if updated is not None and (not isinstance(updated, dt.datetime) or updated.tzinfo is None):
            _fail("updated_at", "a timezone-aware datetime")
        if self.created_at.year in _EDGE_YEARS:  # only there can UTC fall outside the calendar
            _check_in_utc("created_at", self.created_at)
        if updated is not None and updated.year in _EDGE_YEARS:
            _check_in_utc("updated_at", updated)
        if not _is_object(self.metadata):
            _fail("metadata", "an object")
        set_ = object.__setattr__  # the dataclass is frozen: normalise once, here
        set_(self, "customer", _string_object(self.customer, "customer", _CUSTOMER_FIELDS))
        if not _is_array(self.products):
            _fail("products", "an array")
        if self.products:
            set_(self, "products", tuple(_product(p, i) for i, p in enumerate(self.products)))
        else:
            set_(self, "products", ())
        set_(self, "metadata", dict(self.metadata))
        if self.authorization is not None:
            set_(self, "authorization", _authorization(self.authorization))
        if not self.transaction_id:
            digest = hashlib.sha256(self.reference.encode()).hexdigest()
            set_(self, "transaction_id", f"txn_{digest[:20]}")
        if not self.id:
            set_(self, "id", _derived_id(self.reference))

    @property
    def succeeded(self) -> bool:
        """Whether its status is ``COMPLETED``."""
        return self.status == COMPLETED

    @classmethod
    def from_json(cls, obj: object) -> PaymentRecord:
        """A record from its JSON form (the seed-file format).

        Args:
            obj: a JSON object: the record's fields by name, timestamps as ISO 8601 text.

        Returns:
            The record.

        Raises:
            SeedError: not an object, an unknown or missing field, a field out of range, or
                metadata nested too deep.
        """
        if not _is_object(obj):
            raise SeedError(f"a payment record must be a JSON object, not {type(obj).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(obj) - known)
        if unknown:
            raise SeedError(
                f"unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        if "reference" not in obj:
            raise SeedError("missing field reference")
        fields = dict(obj)
        for name in ("created_at", "updated_at"):
            if fields.get(name) is not None:
                fields[name] = _parse_timestamp(fields[name], name)
        return check_json_metadata(cls(**fields))

    def to_json(self) -> dict[str, Any]:
        """The seed-file form of this record; ``from_json`` reads it back unchanged."""
        return {
            **self._shared_fields(),
            "status": self.status,
            "metadata": dict(self.metadata),
            "authorization": None if self.authorization is None else dict(self.authorization),
            "transaction_id": self.transaction_id,
            "id": self.id,
            "created_at": wire_timestamp(self.created_at),
            "updated_at": None if self.updated_at is None else wire_timestamp(self.updated_at),
        }

    def verify_shape(self) -> dict[str, Any]:
        """The ``data`` object of ``GET /payment/{reference}``."""
        data: dict[str, Any] = {
            **self._shared_fields(),
            "transaction_id": self.transaction_id,
            "success": self.succeeded,
            "metadata": dict(self.metadata),
        }
        if self.authorization is not None:
            data["authorization"] = dict(self.authorization)
        return data

    def list_shape(self) -> dict[str, Any]:
        """One element of the ``data`` array of ``GET /payments``."""
        return {
            "id": self.id,
            **self._shared_fields(),
            "status": self.status,
            "customer_paid": self.succeeded,
            "created_at": wire_timestamp(self.created_at),
            "updated_at": wire_timestamp(self.updated_at or self.created_at),
        }

    def _shared_fields(self) -> dict[str, Any]:
        return {
            "reference": self.reference,
            "amount": self.amount,
            "fee": self.fee,
            "currency": self.currency,
            "customer": dict(self.customer),
            "products": [dict(product) for product in self.products],
        }


def check_json_metadata(record: PaymentRecord) -> PaymentRecord:
    """``record``, once its metadata is known to be JSON, as every answer holding it is sent;
    else a ``SeedError``: a value JSON has no form for (a set, bytes, a datetime, NaN or an
    infinity), or nested too deep to write."""
    deep = f"nested too deep: at most {MAX_METADATA_DEPTH} levels, as a client reads it"
    if deeper_than(record.metadata, MAX_METADATA_DEPTH):
        raise SeedError(f"metadata must be JSON ({deep})")
    try:
        json.dumps(record.metadata, allow_nan=False)  # NaN and Infinity are no JSON
    except (TypeError, ValueError, RecursionError) as exc:
        detail = deep if isinstance(exc, RecursionError) else str(exc)
        raise SeedError(f"metadata must be JSON ({detail})") from None
    return record


MAX_METADATA_DEPTH = 100
"""How deep metadata may nest objects and lists: well within the 200 levels pydantic's JSON
parser reads an answer to, on every Python (whose own JSON writer's limit varies by version)."""


def deeper_than(value: object, limit: int) -> bool:
    """Whether ``value`` nests objects and lists more than ``limit`` deep, found level by level
    (no recursion to run out of)."""
    level: list[object] = [value]
    for _ in range(limit):
        inner: list[object] = []
        for item in level:
            if isinstance(item, dict):
                inner.extend(cast("dict[object, object]", item).values())
            elif isinstance(item, list):
                inner.extend(cast("list[object]", item))
        level = inner
    return any(isinstance(item, (dict, list)) for item in level)


_SHORT_BITS = 3 * 640
"""Integers of at most this many bits have at most 640 digits: within what Python writes as text
(``sys.get_int_max_str_digits()``, at least 640 when it is limited), so checked no further."""


def _check_writable(field: str, value: int) -> None:
    """Refuse an integer too long for Python to write as JSON: every answer holding it would fail
    (an amount may be of any size, but an answer is JSON text)."""
    limit = sys.get_int_max_str_digits()
    if limit and abs(value) >= 10**limit:
        _fail(field, f"an integer of at most {limit:,} digits (what Python writes as JSON)")


def _fail(field: str, expected: str) -> NoReturn:
    raise SeedError(f"{field} must be {expected}")


_EDGE_YEARS = (dt.MINYEAR, dt.MAXYEAR)


def _check_in_utc(field: str, value: dt.datetime) -> None:
    """Refuse a time whose UTC date is outside the calendar (``9999-12-31T23:00-05:00``): every
    answer holding it, in UTC, would fail."""
    try:
        value.astimezone(dt.timezone.utc)
    except OverflowError:
        _fail(field, f"a time whose date in UTC is within years 1 to 9999, not {value.isoformat()}")


def _is_object(value: object) -> TypeGuard[Mapping[str, Any]]:
    """A JSON object's keys are strings; what its values are is checked field by field."""
    return type(value) is dict or isinstance(value, Mapping)


def _is_array(value: object) -> TypeGuard[Sequence[object]]:
    kind = type(value)
    return (
        kind is tuple
        or kind is list
        or (isinstance(value, Sequence) and not isinstance(value, str))
    )


def _derived_id(reference: str) -> str:
    """``str(uuid.uuid5(uuid.NAMESPACE_URL, "paysdk-sandbox:" + reference))``, without the
    ``UUID`` object in between."""
    digest = bytearray(
        hashlib.sha1(_ID_NAMESPACE + reference.encode(), usedforsecurity=False).digest()[:16]
    )
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    hex_ = digest.hex()
    return f"{hex_[:8]}-{hex_[8:12]}-{hex_[12:16]}-{hex_[16:20]}-{hex_[20:]}"


def _string_object(value: object, field: str, names: Sequence[str]) -> dict[str, str]:
    if not _is_object(value) or set(value) != set(names):
        _fail(field, f"an object with exactly the fields {', '.join(names)}")
    for name in names:
        if not isinstance(value[name], str):
            _fail(f"{field}.{name}", "a string")
    return {name: value[name] for name in names}


def _product(value: object, index: int) -> dict[str, Any]:
    where = f"products[{index}]"
    if not _is_object(value) or set(value) != set(_PRODUCT_FIELDS):
        _fail(where, f"an object with exactly the fields {', '.join(_PRODUCT_FIELDS)}")
    for name, kind in _PRODUCT_FIELDS.items():
        if type(value[name]) is not kind:
            _fail(f"{where}.{name}", f"of type {kind.__name__}")
    if value["amount"].bit_length() > _SHORT_BITS:
        _check_writable(f"{where}.amount", value["amount"])
    return {name: value[name] for name in _PRODUCT_FIELDS}


def _authorization(value: object) -> dict[str, str]:
    card = _string_object(value, "authorization", tuple(_AUTHORIZATION_PATTERNS))
    for name, pattern in _AUTHORIZATION_PATTERNS.items():
        if re.fullmatch(pattern, card[name]) is None:
            _fail(f"authorization.{name}", f"a string matching {pattern}")
    return card


def _parse_timestamp(value: object, field: str) -> dt.datetime:
    if not isinstance(value, str):
        _fail(field, "an ISO 8601 string")
    try:
        parsed = read_timestamp(value)
    except ValueError:
        _fail(field, f"an ISO 8601 timestamp, not {value!r}")
    if parsed.tzinfo is None:
        _fail(field, "a timestamp with a timezone (e.g. a trailing Z)")
    return parsed


publish("paysdk.sandbox", PaymentRecord, SeedError)


def records_of(payments: object) -> list[PaymentRecord]:
    """``payments`` as a list of records. One record (not in a list), a string, or anything
    else that is not an iterable of ``PaymentRecord`` is a ``ConfigurationError`` saying what to
    pass instead."""
    hint = "make each with paysdk.testing.payment_record"
    if isinstance(payments, PaymentRecord):
        raise ConfigurationError(f"payments takes a list of PaymentRecord: pass [record] ({hint})")
    given = type(payments).__name__
    if isinstance(payments, (str, bytes, Mapping)) or not isinstance(payments, Iterable):
        raise ConfigurationError(f"payments must be a list of PaymentRecord, not {given} ({hint})")
    records: list[object] = list(cast("Iterable[object]", payments))
    for record in records:
        if not isinstance(record, PaymentRecord):
            kind = type(record).__name__
            raise ConfigurationError(
                f"payments holds an object of type {kind}, not a PaymentRecord ({hint})"
            )
    return cast("list[PaymentRecord]", records)

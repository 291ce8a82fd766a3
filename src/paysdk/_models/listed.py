"""The list endpoint's payment shape (``GET /payments``), apart from verify's so that a process
that only verifies (a callback handler) never builds it; what both share is in ``wire``."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Final

from pydantic import Field, GetPydanticSchema, PlainSerializer, WithJsonSchema
from pydantic_core import core_schema
from typing_extensions import TypedDict

from .status import PaymentStatus
from .timestamps import as_utc, wire_timestamp
from .wire import Customer, Exact, Product, Products, WireModel

__all__ = ["ListEnvelope", "ListedPayment", "PaymentStatus", "UTCDateTime"]

_ISO_8601: Final = "^[0-9]{4}-"
"""How a timestamp's text begins: a year and its hyphen. pydantic reads a number, and text of
digits alone (``"20261106"``, a date in ISO 8601's basic form), as a Unix time."""


def _utc_schema(*_: object) -> core_schema.CoreSchema:
    """ISO 8601 text: in UTC (``...Z``, what the service sends) parsed in pydantic's core, with
    no Python call; with any other offset, or none, converted in Python. In Python, a datetime
    too (a model made in code), converted likewise, or a date, read as its midnight in UTC."""
    converted = core_schema.no_info_after_validator_function(as_utc, core_schema.datetime_schema())
    read = core_schema.union_schema(
        [core_schema.datetime_schema(tz_constraint=0), converted], mode="left_to_right"
    )
    text = core_schema.chain_schema([core_schema.str_schema(pattern=_ISO_8601), read])
    given = core_schema.no_info_after_validator_function(
        as_utc, core_schema.is_instance_schema(dt.datetime)
    )
    day = core_schema.no_info_after_validator_function(
        _midnight, core_schema.is_instance_schema(dt.date)
    )
    either = core_schema.union_schema([text, given, day], mode="left_to_right")
    return core_schema.json_or_python_schema(json_schema=text, python_schema=either)


def _midnight(day: dt.date) -> dt.datetime:
    """A date given in code, as its midnight in UTC."""
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc)


UTCDateTime = Annotated[
    dt.datetime,
    GetPydanticSchema(_utc_schema),
    WithJsonSchema({"type": "string", "format": "date-time"}, mode="validation"),
    PlainSerializer(wire_timestamp, return_type=str, when_used="json"),
]
"""A timezone-aware UTC datetime read from ISO 8601 text, written back in the wire form
``...T12:00:00.000000Z``. A number or text of digits alone is no timestamp: the field reads as
unset, the value kept in ``unparsed``, as any other it cannot be read as."""


class ListedPayment(WireModel):
    """One payment as an element of ``GET /payments`` describes it."""

    id: str | None = None
    reference: Annotated[str, Exact]
    amount: Annotated[int, Exact]
    currency: Annotated[str, Exact]
    status: Annotated[PaymentStatus | str, Field(union_mode="left_to_right")]
    customer_paid: bool | None = None
    fee: Annotated[int, Exact] | None = None
    customer: Customer | None = None
    products: Products = Field(default_factory=list["Product"])
    created_at: UTCDateTime | None = None
    updated_at: UTCDateTime | None = None

    @property
    def succeeded(self) -> bool:
        """Whether this payment completed. Unknown statuses are never taken as success."""
        return self.status == PaymentStatus.COMPLETED

    def __hash__(self) -> int:
        """From the fields a payment is told apart by, as ``VerifiedPayment``'s: pydantic's
        hash of a frozen model hashes every field, and ``products`` is a list."""
        return hash((self.id, self.reference, self.amount, self.currency, self.status))


class ListEnvelope(TypedDict):
    """The 200 body of list: ``{data: [...]}``."""

    data: list[ListedPayment]

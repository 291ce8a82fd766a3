"""The list endpoint's payment shape (``GET /payments``), apart from verify's so that a process
that only verifies (a callback handler) never builds it; what both share is in ``wire``."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Union

from pydantic import AfterValidator, Field, GetPydanticSchema, PlainSerializer
from pydantic_core import core_schema
from typing_extensions import TypedDict

from .status import PaymentStatus
from .timestamps import as_utc, wire_timestamp
from .wire import Customer, Exact, Product, Products, WireModel

__all__ = ["ListEnvelope", "ListedPayment", "PaymentStatus", "UTCDateTime"]

_ExactlyUTC = Annotated[
    dt.datetime, GetPydanticSchema(lambda _, __: core_schema.datetime_schema(tz_constraint=0))
]
"""What the service sends (``...Z``): parsed in pydantic's core, with no Python call."""

UTCDateTime = Annotated[
    Union[_ExactlyUTC, Annotated[dt.datetime, AfterValidator(as_utc)]],  # noqa: UP007
    Field(union_mode="left_to_right"),
    PlainSerializer(wire_timestamp, return_type=str, when_used="json"),
]
"""A timezone-aware UTC datetime, written back in the wire form ``...T12:00:00.000000Z``. One in
UTC takes the fast path; any other offset, or none, is converted in Python."""


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


class ListEnvelope(TypedDict):
    """The 200 body of list: ``{data: [...]}``."""

    data: list[ListedPayment]

"""Pydantic models of the two payment shapes the service sends.

Field names are exactly the wire names. The models are liberal in what they accept: fields the
spec leaves unclear are optional, unknown fields are kept (``model_extra``), and an unknown
``status`` is kept as the plain string it was. What a merchant needs to decide on fulfilment
(reference, amount, currency and the outcome) is required, so a body without it is an error
rather than a payment that silently looks unpaid.
"""

from __future__ import annotations

import datetime as dt
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetPydanticSchema,
    PlainSerializer,
    with_config,
)
from pydantic_core import core_schema
from typing_extensions import NotRequired, TypedDict

__all__ = [
    "Authorization",
    "Customer",
    "ListedPayment",
    "PaymentStatus",
    "Product",
    "VerifiedPayment",
]


def _as_utc(value: dt.datetime) -> dt.datetime:
    if value.tzinfo is None:  # the service documents UTC; a missing offset still means UTC
        return value.replace(tzinfo=dt.timezone.utc)
    try:
        return value.astimezone(dt.timezone.utc)
    except OverflowError:  # e.g. 0001-01-01T00:00+01:00: pydantic reports ValueErrors only
        raise ValueError("the timestamp is outside the range of dates") from None


def wire_timestamp(value: dt.datetime) -> str:
    """The service's timestamp text: UTC, microseconds, trailing ``Z``. The one place it is made."""
    return _as_utc(value).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_ExactlyUTC = Annotated[
    dt.datetime, GetPydanticSchema(lambda _, __: core_schema.datetime_schema(tz_constraint=0))
]
"""What the service sends (``...Z``): parsed in pydantic's core, with no Python call."""

UTCDateTime = Annotated[
    Union[_ExactlyUTC, Annotated[dt.datetime, AfterValidator(_as_utc)]],  # noqa: UP007
    Field(union_mode="left_to_right"),
    PlainSerializer(wire_timestamp, return_type=str, when_used="json"),
]
"""A timezone-aware UTC datetime that serializes back to the wire form ``...T12:00:00.000000Z``.

A timestamp in UTC takes the fast path; any other offset, or none, is converted in Python.
"""


class PaymentStatus(str, Enum):
    """The status values the service is known to send. The set is open: others arrive as str."""

    COMPLETED = "COMPLETED"
    FAILED = "FAILED"

    def __str__(self) -> str:
        return self.value


class _WireModel(BaseModel):
    """Keeps every field the server sent, including ones this version does not know."""

    model_config: ClassVar[ConfigDict] = ConfigDict(
        extra="allow",
        frozen=True,
        populate_by_name=True,
        defer_build=True,
        cache_strings="keys",
    )


class Customer(_WireModel):
    name: str | None = None
    email: str | None = None
    phone: str | None = None


class Product(_WireModel):
    name: str | None = None
    amount: int | None = None
    description: str | None = None


class Authorization(_WireModel):
    """Card details of a card payment (verify only)."""

    card_type: str | None = None
    first_six: str | None = None
    last_four: str | None = None
    expiry: str | None = None


# ``null`` from the server means "nothing here", not a broken payment: it becomes empty. A union
# tried left to right keeps the common case (a list, an object) in pydantic's core: only a
# ``null`` costs a Python call.
if TYPE_CHECKING:  # what the fields hold, whatever came over the wire
    Products = list["Product"]
    Metadata = dict[str, Any]
else:
    Products = Annotated[
        Union[list["Product"], Annotated[None, AfterValidator(lambda _: [])]],  # noqa: UP007
        Field(union_mode="left_to_right"),
    ]
    Metadata = Annotated[
        Union[dict[str, Any], Annotated[None, AfterValidator(lambda _: {})]],  # noqa: UP007
        Field(union_mode="left_to_right"),
    ]

Exact = Field(strict=True)
"""For the fields fulfilment is decided on: ``"100"`` and ``true`` are no amount."""


class VerifiedPayment(_WireModel):
    """One payment as ``GET /payment/{reference}`` describes it."""

    reference: Annotated[str, Exact]
    amount: Annotated[int, Exact]
    currency: Annotated[str, Exact]
    success: Annotated[bool, Exact]
    transaction_id: str | None = None
    fee: int | None = None
    customer: Customer | None = None
    products: Products = Field(default_factory=list["Product"])
    metadata: Metadata = Field(default_factory=dict[str, Any])
    authorization: Authorization | None = None
    """Absent for payments that were not made by card."""

    @property
    def succeeded(self) -> bool:
        """Whether the service reports this payment as successful."""
        return self.success


class ListedPayment(_WireModel):
    """One payment as an element of ``GET /payments`` describes it."""

    id: str | None = None
    reference: Annotated[str, Exact]
    amount: Annotated[int, Exact]
    currency: Annotated[str, Exact]
    status: Annotated[PaymentStatus | str, Field(union_mode="left_to_right")]
    customer_paid: bool | None = None
    fee: int | None = None
    customer: Customer | None = None
    products: Products = Field(default_factory=list["Product"])
    created_at: UTCDateTime | None = None
    updated_at: UTCDateTime | None = None

    @property
    def succeeded(self) -> bool:
        """Whether this payment completed. Unknown statuses are never taken as success."""
        return self.status == PaymentStatus.COMPLETED


@with_config(ConfigDict(cache_strings="keys"))
class VerifyEnvelope(TypedDict):
    """The 200 body of verify: ``{status, message, data}``.

    The envelopes are typed dicts, not models: only ``data`` outlives the parse, and a dict is
    cheaper to build than a model that is thrown away at once. Keys are interned while parsing,
    values are not: a list's values rarely repeat, and interning them costs more than it saves.
    """

    status: NotRequired[bool | None]
    message: NotRequired[str | None]
    data: VerifiedPayment


@with_config(ConfigDict(cache_strings="keys"))
class ListEnvelope(TypedDict):
    """The 200 body of list: ``{data: [...]}``."""

    data: list[ListedPayment]

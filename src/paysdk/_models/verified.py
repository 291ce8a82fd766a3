"""Pydantic models of the payment the verify endpoint describes, and what both shapes share.

The list endpoint's shape, :class:`~paysdk.ListedPayment`, is in ``_listed_models``.

Field names are exactly the wire names. The models are liberal in what they accept: fields the
spec leaves unclear are optional, unknown fields are kept (``model_extra``), and an unknown
``status`` is kept as the plain string it was. What a merchant needs to decide on fulfilment
(reference, amount, currency and the outcome) is required, so a body without it is an error
rather than a payment that silently looks unpaid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
)
from typing_extensions import NotRequired, TypedDict

__all__ = ["Authorization", "Customer", "Product", "VerifiedPayment", "VerifyEnvelope"]


class _WireModel(BaseModel):
    """Keeps every field the server sent, including ones this version does not know."""

    model_config: ClassVar[ConfigDict] = ConfigDict(
        extra="allow",
        frozen=True,
        populate_by_name=True,
        defer_build=True,
        cache_strings="none",
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


class VerifyEnvelope(TypedDict):
    """The 200 body of verify: ``{status, message, data}``.

    The envelopes are typed dicts, not models: only ``data`` outlives the parse, and a dict is
    cheaper to build than a model that is thrown away at once.
    """

    status: NotRequired[bool | None]
    message: NotRequired[str | None]
    data: VerifiedPayment

"""The payment the verify endpoint describes (``GET /payment/{reference}``).

What both shapes share, and how liberal they are with what the server sends, is in ``wire``;
the list endpoint's shape is in ``listed``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from typing_extensions import NotRequired, TypedDict

from .wire import Customer, Exact, Metadata, Product, Products, WireModel

__all__ = ["Authorization", "VerifiedPayment", "VerifyEnvelope"]


class Authorization(WireModel):
    """Card details of a card payment (verify only)."""

    card_type: str | None = None
    first_six: str | None = None
    last_four: str | None = None
    expiry: str | None = None


class VerifiedPayment(WireModel):
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

"""The list endpoint's payment shape (``GET /payments``), apart from the verify shape.

A process that only verifies (a callback handler) never builds these; the fields shared with
:class:`~paysdk.VerifiedPayment` (customer, products, the liberal base) live in ``wire``.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from .wire import Customer, Exact, Product, Products, UTCDateTime, _WireModel

__all__ = ["ListEnvelope", "ListedPayment", "PaymentStatus"]


class PaymentStatus(str, Enum):
    """The status values the service is known to send. The set is open: others arrive as str."""

    COMPLETED = "COMPLETED"
    FAILED = "FAILED"

    def __str__(self) -> str:
        return self.value


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


class ListEnvelope(TypedDict):
    """The 200 body of list: ``{data: [...]}``."""

    data: list[ListedPayment]

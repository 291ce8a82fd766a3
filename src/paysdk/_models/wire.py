"""What both payment shapes are built from: the liberal base model, customer, product, timestamps.

Field names are exactly the wire names. The models are liberal in what they accept: fields the
spec leaves unclear are optional, unknown fields are kept (``model_extra``), and an unknown
``status`` is kept as the plain string it was. What a merchant needs to decide on fulfilment
(reference, amount, currency and the outcome) is required, so a body without it is an error
rather than a payment that silently looks unpaid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

__all__ = ["Customer", "Exact", "Metadata", "Product", "Products", "WireModel"]


class WireModel(BaseModel):
    """Keeps every field the server sent, including ones this version does not know."""

    model_config: ClassVar[ConfigDict] = ConfigDict(
        extra="allow",
        frozen=True,
        populate_by_name=True,
        defer_build=True,
        cache_strings="none",
    )


class Customer(WireModel):
    name: str | None = None
    email: str | None = None
    phone: str | None = None


class Product(WireModel):
    name: str | None = None
    amount: int | None = None
    description: str | None = None


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

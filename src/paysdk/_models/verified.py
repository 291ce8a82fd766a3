"""The payment the verify endpoint describes (``GET /payment/{reference}``); what both shapes
share, and how liberal they are with what the server sends, is in ``wire``."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, PrivateAttr
from typing_extensions import NotRequired, TypedDict

from .wire import Customer, Exact, Metadata, Product, Products, WireModel

__all__ = ["CardAuthorization", "VerifiedPayment", "VerifyEnvelope"]


class CardAuthorization(WireModel):
    """The card details of a card payment, as ``payment.authorization`` (verify only)."""

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
    fee: Annotated[int, Exact] | None = None
    customer: Customer | None = None
    products: Products = Field(default_factory=list["Product"])
    metadata: Metadata = Field(default_factory=dict[str, Any])
    authorization: CardAuthorization | None = None
    """Absent for payments that were not made by card."""

    _account: str = PrivateAttr(default="")
    _issuer: str = PrivateAttr(default="")

    @property
    def succeeded(self) -> bool:
        """Whether the service reports this payment as successful."""
        return self.success

    @property
    def account(self) -> str:
        """The label of the merchant account whose client verified it (``Client(account=...)``);
        ``""`` when the client had none. A ledger keys fulfilments by it and the reference."""
        return self._account

    @property
    def verified_by(self) -> str:
        """A fingerprint of the key and base URL whose client verified it (a keyed hash, never
        the key); ``""`` for a payment no client verified (made by hand, in a test)."""
        return self._issuer

    def issued_by(self, account: str, issuer: str) -> VerifiedPayment:
        """This payment, marked as verified through the account labelled ``account`` whose
        key's fingerprint is ``issuer`` (never the key).

        Args:
            account: the client's account label, or ``""``.
            issuer: the fingerprint of the client's key and base URL.

        Returns:
            The payment itself, marked.
        """
        private = self.__pydantic_private__
        if private is None:  # pydantic fills it for any model with private attributes
            self._account, self._issuer = account, issuer
        else:  # what pydantic's __setattr__ would do, without its lookups: every verify ends here
            private["_account"], private["_issuer"] = account, issuer
        return self

    def __eq__(self, other: object) -> bool:
        """Equal fields (those the service sent beyond the model's and ``unparsed`` too) and
        account label; the key's fingerprint is not compared."""
        if not isinstance(other, VerifiedPayment):
            return NotImplemented
        return (
            self.__dict__ == other.__dict__
            and self.__pydantic_extra__ == other.__pydantic_extra__
            and self._account == other._account
            and self.unparsed == other.unparsed
        )

    def __hash__(self) -> int:
        return hash((self.reference, self.amount, self.currency, self.success))


class VerifyEnvelope(TypedDict):
    """The 200 body of verify: ``{status, message, data}``. The envelopes are typed dicts, not
    models: only ``data`` outlives the parse, and a dict is cheaper than a model thrown away."""

    status: NotRequired[bool | None]
    message: NotRequired[str | None]
    data: VerifiedPayment

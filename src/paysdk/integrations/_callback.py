"""What every framework helper decides, free of I/O: which view answers fulfil a payment, and
which refusals are recorded in the ledger. The adapters only carry these decisions out.

The fulfilment rule: a view's answer with status 2xx or 3xx, or a value that is not a response,
is a success and is recorded as fulfilled. A 4xx is the merchant refusing the payment: the claim
is released and the refusal recorded with the status and a body excerpt. A 5xx (and any
exception) leaves the payment unfulfilled: the claim is released and nothing else is recorded,
so the service's retry runs the view again.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import TypeVar

from .._errors import PaymentFailedError, PaymentMismatchError, PaySDKError
from .._models.verified import VerifiedPayment
from ..ledger import AmountOutOfRangeError
from .responses import log

__all__ = [
    "NotFulfilled",
    "Refusal",
    "check_answer",
    "failed_payment",
    "refusal_of",
    "unrecorded_refusal",
]

R = TypeVar("R")

EXCERPT = 200
"""How many characters of a refusing view's body its recorded reason quotes."""
SHOWN = 100
"""How many characters of each mismatched value a recorded reason quotes: the service's values
can be any length, and a reason the ledger refuses as too long would go unrecorded."""


@dataclasses.dataclass(frozen=True)
class Refusal:
    """A refusal worth recording: the payment the service confirmed, and why it is refused."""

    payment: VerifiedPayment
    reason: str


class NotFulfilled(Exception):
    """Raised from the ledger's action for a view answer that is not a success, so the ledger
    releases the claim; the helper then sends ``response``, the view's own, unchanged."""

    def __init__(self, response: object, refusal: str | None) -> None:
        super().__init__(refusal or "the callback view answered a server error")
        self.response = response
        self.refusal = refusal
        """Why the merchant refused the payment (a 4xx), or None for a 5xx."""

    def refusal_for(self, payment: VerifiedPayment) -> Refusal | None:
        """The refusal to record for ``payment``: only a 4xx is one."""
        return None if self.refusal is None else Refusal(payment, self.refusal)


def check_answer(response: R, status: int | None, body: Callable[[], bytes]) -> R:
    """Pass on a view's successful answer; raise for one that must not be recorded fulfilled.

    Args:
        response: what the view returned, as the adapter will send it.
        status: its HTTP status, or None for a value that is not a response (a success).
        body: reads the response's body, called only for a 4xx.

    Returns:
        ``response``, for a success (2xx, 3xx, or no status).

    Raises:
        NotFulfilled: the view answered 4xx (with the refusal's reason) or 5xx.
    """
    if status is None or status < 400:
        return response
    if status >= 500:
        raise NotFulfilled(response, None)
    raise NotFulfilled(response, f"the callback view answered {status}: {_excerpt(body())}")


def failed_payment(error: PaySDKError) -> PaymentFailedError | None:
    """``error`` if it is a failed payment (which ``on_failed`` is called with), else None."""
    return error if isinstance(error, PaymentFailedError) else None


def refusal_of(error: PaySDKError) -> Refusal | None:
    """The refusal to record for a callback refused before fulfilment or by the ledger, or None.

    Only a payment the service confirmed is recorded (a failed or mismatched one, or one whose
    amount the ledger cannot hold). The callback is unauthenticated: an unknown order, or a
    reference the service does not know, is whatever a sender made up, and recording it would
    let anyone fill the ledger.
    """
    if isinstance(error, AmountOutOfRangeError):
        return Refusal(error.payment, "its amount is beyond what the ledger records")
    if isinstance(error, PaymentFailedError):
        return Refusal(error.payment, "the service reports the payment failed")
    if isinstance(error, PaymentMismatchError):
        differs = ", ".join(
            f"{field} {_shown(actual)} instead of {_shown(expected)}"
            for field, (expected, actual) in error.mismatches.items()
        )
        return Refusal(error.payment, f"paid, but not for this order: {differs}")
    return None


def unrecorded_refusal(reference: str, error: PaySDKError) -> None:
    """Log a refusal the ledger could not record; the callback is answered as if it had been."""
    log.log(logging.ERROR, "could not record the refusal of %s in the ledger: %s", reference, error)


def _shown(value: object) -> str:
    text = repr(value)
    return text[:SHOWN] + ("..." if len(text) > SHOWN else "")


def _excerpt(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    short = text[:EXCERPT] + ("..." if len(text) > EXCERPT else "")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in short) or "(empty body)"

"""What a framework helper does with the ledger: fulfil a payment once, and record a refusal
without letting the ledger's failure change the answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

from .._errors import PaySDKError
from .._models.verified import VerifiedPayment
from ..ledger import AsyncLedger, FulfilResult, Ledger
from ._callback import NotFulfilled, Refusal, refusal_of, unrecorded_refusal
from ._views import Watched
from .responses import CallbackResponse, callback_response, fulfilment_response

__all__ = ["afulfil", "arecord_refusal", "fulfil", "record_refusal"]

R = TypeVar("R")


def fulfil(
    ledger: Ledger,
    payment: VerifiedPayment,
    view: Callable[[VerifiedPayment], R],
    scrub: Callable[[str], str],
) -> R | CallbackResponse:
    """Run ``view`` for ``payment`` once through ``ledger``, recording a refusal if there is one.

    Args:
        ledger: fulfils the payment once; refusals are recorded in it too.
        payment: the payment the service confirmed.
        view: runs the view, raising ``NotFulfilled`` for an answer that is not a success
            (``_callback.check_answer``).
        scrub: blots the secret key out of a refusal's reason (``_callback.scrub_of``).

    Returns:
        The view's answer, a refusing one included; else the answer to send in its place.
    """
    watched = Watched(view)
    try:
        result = ledger.fulfil_once(payment, watched.run)
    except NotFulfilled as declined:
        record_refusal(ledger, declined.refusal_for(payment))
        return cast("R", declined.response)
    except PaySDKError as error:  # refused by the ledger (an amount it cannot hold)?
        if watched.raised(error):
            raise
        record_refusal(ledger, refusal_of(error, scrub))
        return callback_response(error)
    return _outcome(result)


async def afulfil(
    ledger: AsyncLedger,
    payment: VerifiedPayment,
    view: Callable[[VerifiedPayment], Awaitable[R]],
    scrub: Callable[[str], str],
) -> R | CallbackResponse:
    """As ``fulfil``, with a ``paysdk.AsyncLedger`` and an async ``view``."""
    watched = Watched(view)
    try:
        result = await ledger.fulfil_once(payment, watched.arun)
    except NotFulfilled as declined:
        await arecord_refusal(ledger, declined.refusal_for(payment))
        return cast("R", declined.response)
    except PaySDKError as error:  # refused by the ledger (an amount it cannot hold)?
        if watched.raised(error):
            raise
        await arecord_refusal(ledger, refusal_of(error, scrub))
        return callback_response(error)
    return _outcome(result)


def _outcome(result: FulfilResult[R]) -> R | CallbackResponse:
    """The view's answer if it ran now; else already fulfilled, in progress, or unknown."""
    not_now = fulfilment_response(result)
    return cast("R", result.value) if not_now is None else not_now


def record_refusal(ledger: Ledger | None, refusal: Refusal | None) -> None:
    """``ledger.refuse`` the payment, if there is a ledger and a refusal; a failure is logged."""
    if ledger is None or refusal is None:
        return
    try:
        ledger.refuse(refusal.payment, refusal.reason)
    except PaySDKError as error:
        unrecorded_refusal(refusal.payment.reference, error)


async def arecord_refusal(ledger: AsyncLedger | None, refusal: Refusal | None) -> None:
    """As ``record_refusal``, with a ``paysdk.AsyncLedger``."""
    if ledger is None or refusal is None:
        return
    try:
        await ledger.refuse(refusal.payment, refusal.reason)
    except PaySDKError as error:
        unrecorded_refusal(refusal.payment.reference, error)

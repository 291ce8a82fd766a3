"""Record a refusal in the ledger without letting the ledger's failure change the answer."""

from __future__ import annotations

from .._errors import PaySDKError
from ..ledger import AsyncLedger, Ledger
from ._callback import Refusal, unrecorded_refusal

__all__ = ["arecord_refusal", "record_refusal"]


def record_refusal(ledger: Ledger | None, refusal: Refusal | None) -> None:
    """``ledger.refuse`` the payment, if there is a ledger and a refusal; a failure is logged."""
    if ledger is None or refusal is None:
        return
    try:
        ledger.refuse(refusal.payment, refusal.reason)
    except PaySDKError as error:
        unrecorded_refusal(refusal.payment.reference, error)


async def arecord_refusal(ledger: AsyncLedger | None, refusal: Refusal | None) -> None:
    """As :func:`record_refusal`, with an :class:`~paysdk.AsyncLedger`."""
    if ledger is None or refusal is None:
        return
    try:
        await ledger.refuse(refusal.payment, refusal.reason)
    except PaySDKError as error:
        unrecorded_refusal(refusal.payment.reference, error)

"""The ledger's exceptions: part of the one :class:`paysdk.PaySDKError` tree."""

from __future__ import annotations

from .._errors import PaySDKError

__all__ = ["LeaseLostError", "LedgerError", "UnverifiedPaymentError"]


class LedgerError(PaySDKError):
    """The ledger's database failed or refused (unreachable, locked too long, no permission).

    Nothing was recorded as fulfilled; the cause is chained (``__cause__``) for the details.
    """


class LeaseLostError(LedgerError):
    """The action finished after its lease expired and another worker had claimed it since.

    The action ran here, and may run (or have run) there too: give actions a lease longer than
    they can take.
    """

    reference: str

    def __init__(self, message: str, *, reference: str) -> None:
        super().__init__(message)
        self.reference = reference


class UnverifiedPaymentError(PaySDKError, TypeError):
    """``fulfil_once`` was given something other than a :class:`paysdk.VerifiedPayment`."""

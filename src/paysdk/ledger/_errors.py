"""The ledger's exceptions: part of the one ``paysdk.PaySDKError`` tree."""

from __future__ import annotations

from .._errors import PaymentVerificationError, PaySDKError

__all__ = [
    "AmountOutOfRangeError",
    "LeaseLostError",
    "LedgerError",
    "UnrecordedFulfilmentError",
    "UnverifiedPaymentError",
    "frameless",
]


class LedgerError(PaySDKError):
    """The ledger's database failed or refused (unreachable, locked too long, no permission).

    Nothing was recorded as fulfilled; the cause is chained (``__cause__``) for the details.
    """


class LeaseLostError(LedgerError):
    """The action finished, but its claim had been resolved by hand meanwhile (``resolve``).

    The action ran here; its completion was not recorded over the person's decision.
    """

    reference: str

    def __init__(self, message: str, *, reference: str) -> None:
        """Raised by ``fulfil_once`` after the action ran.

        Args:
            message: what happened.
            reference: the payment's reference.
        """
        super().__init__(message)
        self.reference = reference


class UnverifiedPaymentError(PaySDKError, TypeError):
    """``fulfil_once`` was given something other than a ``paysdk.VerifiedPayment``."""


class UnrecordedFulfilmentError(LedgerError):
    """The action **ran**, but its completion could not be recorded: the database stayed
    unreachable (or failing) for the whole recording budget.

    The payment is not run again: its claim stays until its lease ends, then reads as
    ``unknown`` and waits for a person (``reconcile`` lists it; ``Ledger.resolve`` settles it).
    ``value`` is what the action returned; the database's last error is the ``__cause__``.
    """

    reference: str
    value: object

    def __init__(self, message: str, *, reference: str, value: object = None) -> None:
        """Raised by ``fulfil_once`` after the action ran.

        Args:
            message: what happened.
            reference: the payment's reference.
            value: what the action returned.
        """
        super().__init__(message)
        self.reference = reference
        self.value = value


class AmountOutOfRangeError(PaymentVerificationError):
    """The payment's amount is beyond what the ledger's databases hold (a signed 64-bit integer:
    SQLite's ``INTEGER``, PostgreSQL's ``bigint``), so its fulfilment could never be recorded.

    Raised by ``fulfil_once`` before any statement: nothing ran, nothing was recorded, and
    retrying cannot change it (the callback helpers answer it 200, ``amount_out_of_range``, and
    record it refused). ``payment`` is what the service said; check it with the service and
    settle it by hand.
    """


def frameless(exc: BaseException) -> BaseException:
    """``exc``, and each exception it was raised from or while handling, without its frames.

    A failed connect's frames hold the password in their locals (psycopg's ``connect``: its
    ``conninfo``, ``params``, ``attempt``; SQLAlchemy's pool: ``cparams``; Django's:
    ``conn_params``), as do those that read a ledger's URL; Django's debug page under
    ``DEBUG = True`` (a new project's default) and an error tracker's local variables show them.
    Passed another way (a ``password=`` keyword) it still lands in psycopg's. What is kept is what
    a person debugs with: the chain, each exception's type, text and attributes, and the frames
    that raise the ledger's error, which hold no URL.

    Args:
        exc: the exception to chain, or raise again, without the frames it was raised through.

    Returns:
        ``exc``, its ``__traceback__`` and those of its chain cleared.
    """
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        current.__traceback__ = None
        pending += [current.__cause__, current.__context__]
    return exc

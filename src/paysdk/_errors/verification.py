"""The payment exists but must not be fulfilled: ``PaymentVerificationError`` and its two kinds,
a payment the service reports failed and one that differs from the merchant's order; raised by
``confirm``, ``verify_callback`` and the framework helpers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import PaySDKError

if TYPE_CHECKING:
    from .._models.verified import VerifiedPayment


class PaymentVerificationError(PaySDKError):
    """The service knows the payment, but it must not be fulfilled. ``payment`` is what it said."""

    payment: VerifiedPayment

    def __init__(self, message: str, *, payment: VerifiedPayment) -> None:
        """Raised by ``confirm``, ``verify_callback`` and the framework helpers.

        Args:
            message: what went wrong and, where the caller can fix it, what to change.
            payment: the payment as the service describes it.
        """
        super().__init__(message)
        self.payment = payment

    @property
    def reference(self) -> str:
        """The payment's reference."""
        return self.payment.reference

    def __reduce__(self) -> tuple[Any, ...]:
        # A payment read from a body that quoted the secret key pickles with it blotted out
        # (its __getstate__); so do the values taken from it (``mismatches``' actual ones).
        reduced = super().__reduce__()
        from .._models.wire import WireModel, blotted, hidden_key  # not for ``import paysdk``

        payment: object = self.payment  # a test's fake may give anything
        key = hidden_key(payment) if isinstance(payment, WireModel) else None
        if key is None:
            return reduced
        state = {
            name: value if name == "payment" else blotted(value, key)
            for name, value in reduced[2].items()
        }
        return (reduced[0], blotted(reduced[1], key), state)


class PaymentFailedError(PaymentVerificationError):
    """The service reports that the payment did not succeed."""


class PaymentMismatchError(PaymentVerificationError):
    """The payment succeeded, but not for what the merchant expected.

    ``mismatches`` maps each differing field (``"amount"``, ``"currency"``) to
    ``(expected, actual)``; ``expected`` and ``actual`` hold the same as two dicts.
    """

    mismatches: dict[str, tuple[object, object]]

    def __init__(
        self,
        message: str,
        *,
        payment: VerifiedPayment,
        mismatches: dict[str, tuple[object, object]],
    ) -> None:
        """Raised by ``confirm``, ``verify_callback`` and the framework helpers.

        Args:
            message: what went wrong and, where the caller can fix it, what to change.
            payment: the payment as the service describes it.
            mismatches: each differing field and its ``(expected, actual)`` values.
        """
        super().__init__(message, payment=payment)
        self.mismatches = mismatches

    @property
    def expected(self) -> dict[str, object]:
        """Each differing field and the value the merchant expected."""
        return {field: pair[0] for field, pair in self.mismatches.items()}

    @property
    def actual(self) -> dict[str, object]:
        """Each differing field and the value the service reported."""
        return {field: pair[1] for field, pair in self.mismatches.items()}

"""What paysdk refuses of what the caller gives, before any request is sent: its configuration,
a reference, a callback request (each error also a ``ValueError``)."""

from __future__ import annotations

from .base import PaySDKError


class ConfigurationError(PaySDKError, ValueError):
    """The client was configured in a way that cannot work; raised before any request."""


class InvalidReferenceError(PaySDKError, ValueError):
    """The reference cannot be a payment reference; raised before any request."""


class InvalidCallbackError(PaySDKError, ValueError):
    """A callback request carries no single, well-formed ``reference``.

    The message is safe to log: it describes the problem, never echoes attacker-controlled text
    beyond a short, escaped excerpt.
    """


class UnknownOrderError(InvalidCallbackError):
    """A callback names a reference the merchant's ``lookup`` does not know: likely spoofed.

    Raised before the service is asked, so a flood of made-up callbacks costs no API calls.
    """

    reference: str

    def __init__(self, message: str, *, reference: str) -> None:
        """Raised by ``verify_callback`` and the framework helpers before any request.

        Args:
            message: what went wrong and, where the caller can fix it, what to change.
            reference: the reference the callback named.
        """
        super().__init__(message)
        self.reference = reference

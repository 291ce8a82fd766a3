"""paysdk: a typed client for the payment-collection service.

    import paysdk

    client = paysdk.Client()                # PAYSDK_SECRET_KEY and PAYSDK_BASE_URL
    payment = client.verify("order-1042")   # -> paysdk.VerifiedPayment
    if payment.succeeded: ...

The sandbox (``paysdk.sandbox``), the command line (``paysdk.cli``), the framework helpers
(``paysdk.integrations``) and the fulfilment ledger (``paysdk.Ledger``, ``paysdk.ledger``) are
imported only when used.
"""

from typing import TYPE_CHECKING, Any

from ._callbacks import parse_callback
from ._client import AsyncClient, Client
from ._core import Expected
from ._errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    ClientClosedError,
    ConfigurationError,
    InvalidCallbackError,
    InvalidReferenceError,
    ListUnavailableError,
    NotFoundError,
    PaymentFailedError,
    PaymentMismatchError,
    PaymentNotFoundError,
    PaymentVerificationError,
    PaySDKError,
    PermissionDeniedError,
    RateLimitError,
    ResponseValidationError,
    ServerError,
    UnknownOrderError,
)
from ._models import (
    Authorization,
    Customer,
    ListedPayment,
    PaymentStatus,
    Product,
    VerifiedPayment,
)
from ._version import __version__

if TYPE_CHECKING:
    from .ledger import AsyncLedger, Ledger, LedgerError

_LAZY = {"AsyncLedger", "Ledger", "LedgerError"}
"""Names from :mod:`paysdk.ledger`, loaded on first use: most users never need sqlite3."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import ledger

        return getattr(ledger, name)
    raise AttributeError(f"module 'paysdk' has no attribute {name!r}")


__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "AsyncClient",
    "AsyncLedger",
    "AuthenticationError",
    "Authorization",
    "Client",
    "ClientClosedError",
    "ConfigurationError",
    "Customer",
    "Expected",
    "InvalidCallbackError",
    "InvalidReferenceError",
    "Ledger",
    "LedgerError",
    "ListUnavailableError",
    "ListedPayment",
    "NotFoundError",
    "PaySDKError",
    "PaymentFailedError",
    "PaymentMismatchError",
    "PaymentNotFoundError",
    "PaymentStatus",
    "PaymentVerificationError",
    "PermissionDeniedError",
    "Product",
    "RateLimitError",
    "ResponseValidationError",
    "ServerError",
    "UnknownOrderError",
    "VerifiedPayment",
    "__version__",
    "parse_callback",
]

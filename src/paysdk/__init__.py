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
    EventLoopError,
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
    ResponseTooLargeError,
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
    from ._bulk import VerifyResult
    from ._raw import RawResponse
    from .ledger import AsyncLedger, Ledger, LedgerError

_LAZY = {
    "AsyncLedger": "ledger",
    "Ledger": "ledger",
    "LedgerError": "ledger",
    "RawResponse": "_raw",
    "VerifyResult": "_bulk",
}
"""Names loaded on first use, as their features are: most users never need sqlite3 or threads."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
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
    "EventLoopError",
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
    "RawResponse",
    "ResponseTooLargeError",
    "ResponseValidationError",
    "ServerError",
    "UnknownOrderError",
    "VerifiedPayment",
    "VerifyResult",
    "__version__",
    "parse_callback",
]

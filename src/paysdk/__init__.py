"""paysdk: a typed client for the payment-collection service.

    import paysdk

    client = paysdk.Client()                # PAYSDK_SECRET_KEY and PAYSDK_BASE_URL
    payment = client.verify("order-1042")   # -> paysdk.VerifiedPayment
    if payment.succeeded: ...

The sandbox (``paysdk.sandbox``), the command line (``paysdk.cli``) and the framework helpers
(``paysdk.integrations``) are imported only when used.
"""

from typing import TYPE_CHECKING

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


def __getattr__(name: str) -> object:
    """``VerifyResult`` and ``RawResponse`` load with their first use, as their features do."""
    if name == "VerifyResult":
        from ._bulk import VerifyResult

        return VerifyResult
    if name == "RawResponse":
        from ._raw import RawResponse

        return RawResponse
    raise AttributeError(f"module 'paysdk' has no attribute {name!r}")


__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "AsyncClient",
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

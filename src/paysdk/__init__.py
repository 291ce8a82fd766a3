"""paysdk: a typed client for the payment-collection service.

    import paysdk

    client = paysdk.Client()                # PAYSDK_SECRET_KEY and PAYSDK_BASE_URL
    payment = client.verify("order-1042")   # -> paysdk.VerifiedPayment
    if payment.succeeded: ...

The sandbox (``paysdk.sandbox``), the command line (``paysdk.cli``) and the framework helpers
(``paysdk.integrations``) are imported only when used.
"""

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
    "ResponseValidationError",
    "ServerError",
    "UnknownOrderError",
    "VerifiedPayment",
    "__version__",
    "parse_callback",
]

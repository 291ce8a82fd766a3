"""paysdk: a typed client for the payment-collection service.

    import paysdk

    client = paysdk.Client()                # PAYSDK_SECRET_KEY and PAYSDK_BASE_URL
    payment = client.verify("order-1042")   # -> paysdk.VerifiedPayment
    if payment.succeeded: ...

The sandbox (``paysdk.sandbox``), the command line (``paysdk.cli``), the framework helpers
(``paysdk.integrations``) and the fulfilment ledger (``paysdk.Ledger``, ``paysdk.ledger``) are
imported only when used.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._lazy import lazy_names

# Loaded with the package, before the application can freeze objects, so that it tells what the
# interpreter froze itself from what the application freezes later (gcpause's docstring).
from ._parsing import gcpause as _gcpause
from ._version import __version__

del _gcpause

if TYPE_CHECKING:
    from ._client._async.client import AsyncClient
    from ._client._sync.client import Client
    from ._client.base import HttpBackend, Lookup
    from ._client.bulk import VerifyResult
    from ._client.options import NOT_GIVEN, CallOptions, NotGiven, TimeoutTypes, VerifyTypes
    from ._client.raw import RawResponse
    from ._core.callbacks import parse_callback
    from ._core.expected import Expected
    from ._errors import (
        APIConnectionError,
        APIError,
        APITimeoutError,
        AuthenticationError,
        CertificateVerificationError,
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
        ProxyAuthenticationError,
        RateLimitError,
        ResponseTooLargeError,
        ResponseValidationError,
        ServerError,
        TLSProtocolError,
        UnknownOrderError,
    )
    from ._models.listed import ListedPayment
    from ._models.status import PaymentStatus
    from ._models.verified import CardAuthorization, VerifiedPayment
    from ._models.wire import Customer, Product
    from .ledger import AsyncLedger, Ledger, LedgerError

_LAZY = {
    "AsyncClient": "._client._async.client",
    "Client": "._client._sync.client",
    "CallOptions": "._client.options",
    "HttpBackend": "._client.base",
    "Lookup": "._client.base",
    "NOT_GIVEN": "._client.options",
    "NotGiven": "._client.options",
    "TimeoutTypes": "._client.options",
    "VerifyTypes": "._client.options",
    "APIConnectionError": "._errors",
    "APIError": "._errors",
    "APITimeoutError": "._errors",
    "CertificateVerificationError": "._errors",
    "AuthenticationError": "._errors",
    "ClientClosedError": "._errors",
    "ConfigurationError": "._errors",
    "EventLoopError": "._errors",
    "InvalidCallbackError": "._errors",
    "InvalidReferenceError": "._errors",
    "ListUnavailableError": "._errors",
    "NotFoundError": "._errors",
    "PaymentFailedError": "._errors",
    "PaymentMismatchError": "._errors",
    "PaymentNotFoundError": "._errors",
    "PaymentVerificationError": "._errors",
    "PaySDKError": "._errors",
    "PermissionDeniedError": "._errors",
    "ProxyAuthenticationError": "._errors",
    "RateLimitError": "._errors",
    "ResponseTooLargeError": "._errors",
    "ResponseValidationError": "._errors",
    "ServerError": "._errors",
    "TLSProtocolError": "._errors",
    "UnknownOrderError": "._errors",
    "CardAuthorization": "._models.verified",
    "Customer": "._models.wire",
    "ListedPayment": "._models.listed",
    "PaymentStatus": "._models.status",
    "Product": "._models.wire",
    "VerifiedPayment": "._models.verified",
    "Expected": "._core.expected",
    "parse_callback": "._core.callbacks",
    "AsyncLedger": ".ledger",
    "Ledger": ".ledger",
    "LedgerError": ".ledger",
    "RawResponse": "._client.raw",
    "VerifyResult": "._client.bulk",
}
"""Every name is loaded on first use, its module with it: ``import paysdk`` costs next to
nothing, ``paysdk.Client`` loads the client's class (its engine comes with the first client
made), ``paysdk.VerifiedPayment`` the models, and most users never load sqlite3 or threads."""


__getattr__: Callable[[str], Any]  # annotated, as pyright's --verifytypes asks of a public module
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_names(__name__, _LAZY)


__all__ = [
    "NOT_GIVEN",
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "AsyncClient",
    "AsyncLedger",
    "AuthenticationError",
    "CallOptions",
    "CardAuthorization",
    "CertificateVerificationError",
    "Client",
    "ClientClosedError",
    "ConfigurationError",
    "Customer",
    "EventLoopError",
    "Expected",
    "HttpBackend",
    "InvalidCallbackError",
    "InvalidReferenceError",
    "Ledger",
    "LedgerError",
    "ListUnavailableError",
    "ListedPayment",
    "Lookup",
    "NotFoundError",
    "NotGiven",
    "PaySDKError",
    "PaymentFailedError",
    "PaymentMismatchError",
    "PaymentNotFoundError",
    "PaymentStatus",
    "PaymentVerificationError",
    "PermissionDeniedError",
    "Product",
    "ProxyAuthenticationError",
    "RateLimitError",
    "RawResponse",
    "ResponseTooLargeError",
    "ResponseValidationError",
    "ServerError",
    "TLSProtocolError",
    "TimeoutTypes",
    "UnknownOrderError",
    "VerifiedPayment",
    "VerifyResult",
    "VerifyTypes",
    "__version__",
    "parse_callback",
]

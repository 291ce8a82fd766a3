"""Every failure a caller can meet, as one tree rooted at ``PaySDKError``.

```text
PaySDKError
├── APIError                      the service answered, but not with what was asked for
│   ├── AuthenticationError       401: missing or wrong secret key
│   ├── PermissionDeniedError     403
│   ├── NotFoundError             404 with no documented body (often a wrong base_url)
│   │   └── PaymentNotFoundError  verify's documented 404: the reference is unknown
│   ├── ListUnavailableError      list's documented 404 {"error": "Connection Error"} (retried)
│   ├── RateLimitError            429 (retried, honouring Retry-After)
│   ├── ServerError               5xx (retried)
│   ├── ResponseValidationError   a 2xx body that is not the documented shape, or says it failed
│   └── ResponseTooLargeError     a 2xx body past max_response_bytes (not read further)
├── APIConnectionError            no answer at all: DNS, refused, reset, TLS (retried)
│   ├── APITimeoutError           no answer in time (retried)
│   ├── CertificateVerificationError  the service's TLS certificate is not trusted (not retried)
│   ├── TLSProtocolError          no TLS 1.2+, or no client certificate it takes (not retried)
│   └── ProxyAuthenticationError  the proxy refused its credentials (407), the host (403) or
│                                 CONNECT itself (400, 405)
├── ClientClosedError             the client, or the one a with_options copy shares, is closed
├── EventLoopError                an AsyncClient used from an event loop other than its own
├── PaymentVerificationError      the payment exists but must not be fulfilled
│   ├── PaymentFailedError        the service says it did not succeed
│   └── PaymentMismatchError      amount or currency differ from what the merchant expected
└── (also ValueError, raised before any request is sent)
    ├── ConfigurationError        bad secret key, base_url, timeout, ...
    ├── InvalidReferenceError     a reference that cannot be a payment reference
    └── InvalidCallbackError      a callback request with no usable ``reference``
        └── UnknownOrderError     a callback for a reference the merchant never issued
```

Nothing is lost: an ``APIError`` keeps the status code, the response headers, the raw body
bytes and, where it was JSON, the parsed body. No message, ``text`` or ``body`` ever contains the
secret key (a server that echoes it has it blotted out); only the raw ``content`` and the
``headers`` are as received, and a pickle or copy of the error has the key blotted out of them.

The API's errors are in ``api``, the caller's refused in ``caller``, no answer in ``connection``,
the payment's in ``verification``; the root, and how an error is pickled, in ``base``.
"""

from __future__ import annotations

from .._lazy import publish
from .api import (
    APIError,
    AuthenticationError,
    ListUnavailableError,
    NotFoundError,
    PaymentNotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ResponseTooLargeError,
    ResponseValidationError,
    ServerError,
)
from .base import PaySDKError, _unpickle
from .caller import (
    ConfigurationError,
    InvalidCallbackError,
    InvalidReferenceError,
    UnknownOrderError,
)
from .connection import (
    APIConnectionError,
    APITimeoutError,
    CertificateVerificationError,
    ClientClosedError,
    EventLoopError,
    ProxyAuthenticationError,
    TLSProtocolError,
)
from .verification import PaymentFailedError, PaymentMismatchError, PaymentVerificationError

__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "AuthenticationError",
    "CertificateVerificationError",
    "ClientClosedError",
    "ConfigurationError",
    "EventLoopError",
    "InvalidCallbackError",
    "InvalidReferenceError",
    "ListUnavailableError",
    "NotFoundError",
    "PaySDKError",
    "PaymentFailedError",
    "PaymentMismatchError",
    "PaymentNotFoundError",
    "PaymentVerificationError",
    "PermissionDeniedError",
    "ProxyAuthenticationError",
    "RateLimitError",
    "ResponseTooLargeError",
    "ResponseValidationError",
    "ServerError",
    "TLSProtocolError",
    "UnknownOrderError",
]


publish("paysdk", *(globals()[name] for name in __all__))
# Every pickle of an error names its rebuilder paysdk._errors._unpickle, where it is found.
publish(__name__, _unpickle)

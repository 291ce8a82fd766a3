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
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from .._lazy import publish

if TYPE_CHECKING:
    from .._models.verified import VerifiedPayment

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


class PaySDKError(Exception):
    """The base of every exception paysdk raises.

    ``attempts`` is how many requests the call made before giving up (1 where none was retried).
    """

    message: str
    attempts: int = 1

    def __init__(self, message: str) -> None:
        """Raised by paysdk; your code catches it (or raises it in a test's fake).

        Args:
            message: what went wrong and, where the caller can fix it, what to change.
        """
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled with its attributes and rebuilt without __init__, whose keyword-only arguments
        # (status_code=, reference=...) the exception's args do not hold.
        return (_unpickle, (type(self), self.args), self.__dict__)


def _unpickle(cls: type[PaySDKError], args: tuple[Any, ...]) -> PaySDKError:
    return cls.__new__(cls, *args)


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


REQUEST_ID_HEADERS = ("x-request-id", "X-Request-Id", "request-id", "Request-Id")
"""Looked up in this order; each transport's headers are case-insensitive, a plain dict is not."""
MAX_REQUEST_ID = 200
"""A request id longer than this is cut: it is a label, and it goes into messages and logs."""


def request_id_of(
    headers: Mapping[str, str], scrub: Callable[[str], str] | None = None
) -> str | None:
    """The id the service gave an answer (``X-Request-Id``, else ``Request-Id``), made safe to
    print on one line; ``None`` if there is none. ``scrub`` blots out the secret key, should a
    server echo it there, before the id is cut."""
    for name in REQUEST_ID_HEADERS:
        value = (headers.get(name) or "").strip()  # a blank id is none: try the next header
        if value:
            value = scrub(value) if scrub is not None else value
            return "".join(ch if " " <= ch <= "~" else "?" for ch in value[:MAX_REQUEST_ID])
    return None


MAX_ERRORS_KEPT = 100
"""A list of a million payments with a bad field in each need not be kept a million times."""
BODY_PARSE_LIMIT = 1024 * 1024
"""An error keeps ``body`` only for content up to this size: parsed JSON takes several times the
memory of its bytes, and a 2xx body past its shape or cap may be tens of megabytes."""


class APIError(PaySDKError):
    """The service answered with something other than the documented success.

    Attributes:
        status_code: the HTTP status.
        headers: the response headers (a case-insensitive mapping), as received: a header
            that echoes the secret key still holds it.
        text: the body decoded as text, with the secret key blotted out if the server echoed it.
        content: the raw body bytes, exactly as received (an error body is kept up to 64 KiB).
        body: ``text`` parsed as JSON where it was JSON (and at most ``BODY_PARSE_LIMIT``
            bytes: a parse costs many times its input), else ``None``.
        method: the request's method.
        url: the request's URL (never the request headers, which hold the key).
        request_id: the answer's ``X-Request-Id`` (or ``Request-Id``): what the service's
            support desk asks for; ``None`` if it sent none.
    """

    status_code: int
    headers: Mapping[str, str]
    request_id: str | None
    content: bytes
    text: str
    body: Any
    method: str
    url: str

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        headers: Mapping[str, str],
        content: bytes,
        method: str,
        url: str,
        scrub: Callable[[str], str] | None = None,
    ) -> None:
        """Raised by paysdk from an answer; the attributes below keep all of it.

        Args:
            message: what went wrong and, where the caller can fix it, what to change.
            status_code: the HTTP status.
            headers: the response headers.
            content: the body's bytes (an error body is cut at 64 KiB).
            method: the request's method.
            url: the request's URL.
            scrub: blots the secret key out of text the service echoed; ``None``: nothing to
                blot out.
        """
        super().__init__(message)
        self.status_code = status_code
        self.headers = headers
        self.request_id = request_id_of(headers, scrub)
        self.content = content
        self.method = method
        self.url = url
        text = content.decode("utf-8", errors="replace")
        self.text = scrub(text) if scrub is not None else text
        body = json_or_none(content) if len(content) <= BODY_PARSE_LIMIT else None
        self.body = scrubbed_json(body, scrub) if scrub is not None else body
        if scrub is not None:
            blotted = _blotted_answer(content, headers, scrub)
            if blotted is not None:  # an echoed key: what a pickle or copy holds instead
                self._blotted = blotted

    def __reduce__(self) -> tuple[Any, ...]:
        # ``content`` and ``headers`` are kept as received, a key the server echoed included;
        # a pickle (a task queue's result store, a cache) or a copy has it blotted out of them.
        reduced = super().__reduce__()
        state = dict(reduced[2])
        blotted = state.pop("_blotted", None)
        if blotted is not None:
            state["content"], state["headers"] = blotted
        return (*reduced[:2], state)

    def __str__(self) -> str:
        where = f"HTTP {self.status_code} from {self.method} {self.url}"
        if self.request_id is not None:
            where += f", request id {self.request_id}"
        return f"{self.message} ({where})"


class AuthenticationError(APIError):
    """401: the secret key is missing, wrong or revoked."""


class PermissionDeniedError(APIError):
    """403: the key is valid but may not do this."""


class NotFoundError(APIError):
    """404 without a documented body: usually a wrong ``base_url`` or a proxy's page."""


class PaymentNotFoundError(NotFoundError):
    """Verify's documented 404: no payment has this reference."""

    reference: str

    def __init__(self, message: str, *, reference: str, **kwargs: Any) -> None:
        """Raised by ``verify`` for the service's documented 404.

        Args:
            message: what went wrong and, where the caller can fix it, what to change.
            reference: the reference no payment has.
            **kwargs: what [`APIError`][paysdk.APIError] takes: ``status_code``, ``headers``,
                ``content``, ``method``, ``url``, ``scrub``.
        """
        super().__init__(message, **kwargs)
        self.reference = reference


class ListUnavailableError(APIError):
    """List's documented 404 body ``{"error": "Connection Error"}``.

    The body names a connection failure behind the service, so it is treated as transient and
    retried like a 5xx before it is raised.
    """


class RateLimitError(APIError):
    """429: too many requests. ``retry_after`` is the server's hint in seconds, if it gave one."""

    retry_after: float | None

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        """Raised once the retries are used up (or ``Retry-After`` is too long to wait).

        Args:
            message: what went wrong and, where the caller can fix it, what to change.
            retry_after: the server's ``Retry-After`` in seconds; ``None`` if it gave none.
            **kwargs: what [`APIError`][paysdk.APIError] takes: ``status_code``, ``headers``,
                ``content``, ``method``, ``url``, ``scrub``.
        """
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(APIError):
    """5xx: the service (or a proxy in front of it) failed."""


class ResponseValidationError(APIError):
    """A 2xx answer whose body is not the documented shape (not JSON, HTML, wrong types), or a
    verify answer whose envelope reports failure (``"status": false``), whatever its ``data``.

    ``errors`` lists what was wrong where, the first ``MAX_ERRORS_KEPT`` of them; the message
    says how many there were in all.
    """

    errors: list[dict[str, Any]]

    def __init__(
        self, message: str, *, errors: list[dict[str, Any]] | None = None, **kwargs: Any
    ) -> None:
        """Raised by paysdk for a 2xx body it cannot read as documented.

        Args:
            message: what went wrong and, where the caller can fix it, what to change.
            errors: what was wrong where (pydantic's error dicts); ``None``: none listed.
            **kwargs: what [`APIError`][paysdk.APIError] takes: ``status_code``, ``headers``,
                ``content``, ``method``, ``url``, ``scrub``.
        """
        super().__init__(message, **kwargs)
        self.errors = errors or []


class ResponseTooLargeError(APIError):
    """A successful answer's body was larger than allowed; the rest of it was not read.

    ``limit`` is the cap in bytes (``max_response_bytes``); ``content`` holds what was read.
    """

    limit: int

    def __init__(self, message: str, *, limit: int, **kwargs: Any) -> None:
        """Raised by paysdk once the body passes ``max_response_bytes``.

        Args:
            message: what went wrong and, where the caller can fix it, what to change.
            limit: the cap in bytes.
            **kwargs: what [`APIError`][paysdk.APIError] takes: ``status_code``, ``headers``,
                ``content``, ``method``, ``url``, ``scrub``.
        """
        super().__init__(message, **kwargs)
        self.limit = limit


class APIConnectionError(PaySDKError):
    """No answer from the service: DNS failure, refused or reset connection, TLS error."""

    method: str
    url: str

    def __init__(self, message: str, *, method: str, url: str) -> None:
        """Raised by paysdk once the retries are used up (at once for TLS and proxy failures).

        Args:
            message: what went wrong and, where the caller can fix it, what to change.
            method: the request's method.
            url: the request's URL.
        """
        super().__init__(message)
        self.method = method
        self.url = url

    def __str__(self) -> str:
        return f"{self.message} ({self.method} {self.url})"


class APITimeoutError(APIConnectionError):
    """The service did not answer within the timeout."""


class CertificateVerificationError(APIConnectionError):
    """The service's TLS certificate could not be verified: an unknown CA, a wrong host name or
    an expired certificate. Not retried, since trying again cannot change the certificate; trust
    a private CA with ``verify=`` or ``SSL_CERT_FILE``."""


class TLSProtocolError(APIConnectionError):
    """The server at the service's address did not answer in TLS: it most likely speaks plain
    HTTP (an ``https://`` URL on an ``http://`` port), or offers only TLS versions the client
    refuses (TLS 1.0 or 1.1); or it refused the handshake: it requires a client certificate
    (pass one in the ``ssl.SSLContext`` given as ``verify=``) or refused the one sent. Not
    retried, since trying again meets the same server; use ``http://`` if it is meant to be
    plain HTTP, or the port that speaks TLS 1.2 or later."""


class ProxyAuthenticationError(APIConnectionError):
    """The proxy refused to carry the request to the service: 407, without the right
    credentials; 403, its policy forbids it; 400 or 405, it does not take the tunnel's
    ``CONNECT``. Not retried: the next attempt would bring the same request and credentials to
    the same proxy; fix them in the proxy URL (``proxy=`` or the environment variable the
    message names), or ask the proxy's administrators."""


class ClientClosedError(PaySDKError, RuntimeError):
    """The client was closed; ``with_options`` copies share, and so lose, its connections."""


class EventLoopError(PaySDKError, RuntimeError):
    """An ``AsyncClient`` was used from an event loop other than the one it first ran in.

    Its connections belong to that loop. Make one ``AsyncClient`` per event loop: inside
    ``asyncio.run(...)``, or in your web framework's lifespan.
    """


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


def closed_error(what: str) -> ClientClosedError:
    """The error for using a closed ``what`` (``Client``, ``AsyncClient``...) or a copy of it."""
    return ClientClosedError(
        f"this {what} is closed (or the client it was copied from is); make a new one"
    )


def _blotted_answer(
    content: bytes, headers: Mapping[str, str], scrub: Callable[[str], str]
) -> tuple[bytes, Mapping[str, str]] | None:
    """``content`` and ``headers`` with the secret key blotted out (``scrub``), if either held
    it; ``None`` if neither did. Bytes are read and written as Latin-1, which keeps each one,
    UTF-8 or not; ``httpx.Headers`` stay ``httpx.Headers``, repeated fields and all."""
    found: object = getattr(headers, "raw", None)  # httpx.Headers: the bytes as received
    raw = cast("list[tuple[bytes, bytes]] | None", found if isinstance(found, list) else None)
    pairs: list[tuple[str, str]] = (
        list(headers.items())
        if raw is None
        else [(name.decode("latin-1"), value.decode("latin-1")) for name, value in raw]
    )
    blotted_pairs = [(scrub(name), scrub(value)) for name, value in pairs]
    received = content.decode("latin-1")
    written = scrub(received)
    if written == received and blotted_pairs == pairs:
        return None
    if raw is None:
        return written.encode("latin-1"), dict(blotted_pairs)
    remade = cast("Callable[[list[tuple[bytes, bytes]]], Mapping[str, str]]", type(headers))
    kept = remade(
        [(name.encode("latin-1"), value.encode("latin-1")) for name, value in blotted_pairs]
    )
    return written.encode("latin-1"), kept


def json_or_none(content: bytes) -> Any:
    if not content:
        return None
    try:
        return json.loads(content)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested absurdly deep
        return None


def scrubbed_json(value: Any, scrub: Callable[[str], str]) -> Any:
    """``value`` (parsed JSON) with ``scrub`` applied to every string in it, keys included: a
    key the server escaped (``\\/``, ``\\u0041``) is only recognisable once parsed."""
    try:
        if isinstance(value, str):
            return scrub(value)
        if isinstance(value, list):
            items = cast("list[object]", value)
            return [scrubbed_json(item, scrub) for item in items]
        if isinstance(value, dict):
            pairs = cast("dict[str, Any]", value)
            return {scrub(k): scrubbed_json(v, scrub) for k, v in pairs.items()}
    except RecursionError:  # nested past the interpreter's stack: keep nothing of it
        return None
    return value


publish("paysdk", *(globals()[name] for name in __all__))

"""The service answered, but not with what was asked for: ``APIError``, and a subclass of it for
each status or documented body paysdk tells apart (401, 403, 404, 429, 5xx, a 2xx body not as
documented or past its cap); and what an error keeps of the answer: its request id
(``request_id_of``) and its body parsed (``json_or_none``), the key blotted out of it
(``scrubbed_json``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, cast

from .base import PaySDKError, blotted_answer

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
            blotted = blotted_answer(content, headers, scrub)
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

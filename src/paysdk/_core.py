"""The I/O-free heart of paysdk: what to send, what an answer means, and whether to try again.

Each API call is a *plan*: a generator that yields :class:`Send` and :class:`Sleep` steps and is
sent back what came of each (an ``httpx.Response`` once read, or the ``httpx.HTTPError`` that
stopped it). It returns the parsed model or raises a :mod:`paysdk` exception. ``Client`` and
``AsyncClient`` only carry the steps out, so both share every decision made here, in the
sans-I/O style of h11: this module never opens a socket or sleeps, and tests drive it by hand.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import email.utils
import inspect
import logging
import math
import random
import time
import unicodedata
from collections.abc import Callable, Generator, Mapping
from typing import Any, Final, TypeAlias, TypeVar, cast
from urllib.parse import quote

import httpx
from pydantic import ValidationError

from ._config import Config
from ._errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    ConfigurationError,
    InvalidReferenceError,
    ListUnavailableError,
    NotFoundError,
    PaymentFailedError,
    PaymentMismatchError,
    PaymentNotFoundError,
    PaySDKError,
    PermissionDeniedError,
    RateLimitError,
    ResponseValidationError,
    ServerError,
    UnknownOrderError,
    body_excerpt,
    json_or_none,
)
from ._models import ListedPayment, ListEnvelope, VerifiedPayment, VerifyEnvelope

log = logging.getLogger("paysdk")

T = TypeVar("T")

MAX_REFERENCE_LENGTH: Final = 256
_INVISIBLE: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories refused in references: controls, bidi/zero-width formats, separators."""


# --- references -------------------------------------------------------------------------------


def reference_problem(reference: object) -> str | None:
    """Why ``reference`` cannot be a payment reference, or ``None`` if it can.

    The one place the rules live; verify raises InvalidReferenceError and callback parsing
    raises InvalidCallbackError with the same words.
    """
    if not isinstance(reference, str):
        return f"a reference must be a str, not {type(reference).__name__}"
    if not reference.strip():
        return "the reference is empty"
    if len(reference) > MAX_REFERENCE_LENGTH:
        return f"the reference is {len(reference)} characters long; at most {MAX_REFERENCE_LENGTH}"
    if reference != reference.strip():
        return "the reference has leading or trailing whitespace"
    if reference in (".", ".."):
        return f"{reference!r} is not a reference"
    if any(unicodedata.category(ch) in _INVISIBLE for ch in reference):
        return "the reference contains control or invisible formatting characters"
    return None


def check_reference(reference: object) -> str:
    problem = reference_problem(reference)
    if problem is not None:
        raise InvalidReferenceError(problem)
    assert isinstance(reference, str)
    return reference


# --- requests ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Send:
    """Send this request and report back what came of it."""

    method: str
    url: str
    headers: Mapping[str, str] = dataclasses.field(repr=False)  # holds the secret key
    timeout: httpx.Timeout

    def __str__(self) -> str:
        return f"{self.method} {self.url}"


@dataclasses.dataclass(frozen=True)
class Sleep:
    """Wait this many seconds, then carry on with the plan."""

    seconds: float


Step: TypeAlias = Send | Sleep
Outcome: TypeAlias = httpx.Response | httpx.HTTPError | None
"""What a shell sends back into a plan: the read response, the transport error, or None."""
Plan = Generator[Step, Outcome, T]


def verify_request(config: Config, reference: str) -> Send:
    segment = quote(check_reference(reference), safe="")
    return _get(config, f"/payment/{segment}")


def list_request(config: Config) -> Send:
    return _get(config, "/payments")


def _get(config: Config, path: str) -> Send:
    return Send("GET", config.base_url + path, config.request_headers(), config.timeout)


# --- responses --------------------------------------------------------------------------------


def parse_verify(content: bytes) -> VerifiedPayment:
    return VerifyEnvelope.model_validate_json(content).data


def parse_list(content: bytes) -> list[ListedPayment]:
    return ListEnvelope.model_validate_json(content).data


def map_response(
    request: Send, response: httpx.Response, parse: Callable[[bytes], T], reference: str | None
) -> T:
    """The model a response carries, or the exception it stands for."""
    status = response.status_code
    if 200 <= status < 300:
        try:
            return parse(response.content)
        except ValidationError as exc:
            raise _invalid_body(request, response, exc) from None
    raise error_for(request, response, reference)


def error_for(request: Send, response: httpx.Response, reference: str | None) -> APIError:
    status = response.status_code
    info: dict[str, Any] = {
        "status_code": status,
        "headers": response.headers,
        "content": response.content,
        "method": request.method,
        "url": request.url,
    }
    said = _what_the_server_said(response.content)
    if status == 401:
        return AuthenticationError(f"the secret key was not accepted{said}", **info)
    if status == 403:
        return PermissionDeniedError(f"the secret key may not do this{said}", **info)
    if status == 404:
        body = _json_object(response.content)
        if reference is not None and body.get("success") is False:
            return PaymentNotFoundError(
                f"no payment has the reference {reference!r}{said}", reference=reference, **info
            )
        if reference is None and body.get("error") == "Connection Error":
            return ListUnavailableError(f"the payment list is unavailable{said}", **info)
        return NotFoundError(f"not found; is base_url right?{said}", **info)
    if status == 429:
        return RateLimitError(
            f"rate limited{said}", retry_after=retry_after(response.headers), **info
        )
    if status >= 500:
        return ServerError(f"the service failed{said}", **info)
    return APIError(f"unexpected answer{said}", **info)


def _invalid_body(request: Send, response: httpx.Response, exc: ValidationError) -> APIError:
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    if errors and errors[0]["type"] == "json_invalid":
        content_type = response.headers.get("content-type", "no content-type")
        what = f"a body that is not JSON ({content_type}): {body_excerpt(response.content)}"
    else:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'body'}: {error['msg']}"
            for error in errors[:5]
        )
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        what = f"a body that is not the documented shape: {problems}{more}"
    return ResponseValidationError(
        f"the service answered with {what}",
        errors=[dict(error) for error in errors],
        status_code=response.status_code,
        headers=response.headers,
        content=response.content,
        method=request.method,
        url=request.url,
    )


def _json_object(content: bytes) -> dict[str, Any]:
    body = json_or_none(content)
    return cast("dict[str, Any]", body) if isinstance(body, dict) else {}


def _what_the_server_said(content: bytes) -> str:
    body = _json_object(content)
    parts = [str(body[key]) for key in ("error", "message") if isinstance(body.get(key), str)]
    if parts:
        return ": " + body_excerpt(" - ".join(dict.fromkeys(parts)).encode())
    if content:
        return ": " + body_excerpt(content)
    return ""


def connection_error(request: Send, exc: httpx.HTTPError) -> APIConnectionError:
    if isinstance(exc, httpx.TimeoutException):
        return APITimeoutError(
            f"no answer within the timeout ({type(exc).__name__})",
            method=request.method,
            url=request.url,
        )
    detail = str(exc) or type(exc).__name__
    return APIConnectionError(
        f"could not reach the service: {detail}", method=request.method, url=request.url
    )


# --- retries ----------------------------------------------------------------------------------

RETRYABLE_STATUS: Final = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before trying a failed call again.

    Every request paysdk makes is a GET, so retrying can never pay or fulfil twice. Retried:
    no answer or a timeout, 408, 409, 425, 429, any 5xx, and list's "Connection Error" 404.
    Backoff doubles from ``initial_delay`` up to ``max_delay`` with up to 25% jitter. A
    ``Retry-After`` (or ``retry-after-ms``) the server sends is obeyed exactly; one longer than
    ``max_retry_after`` is not waited out: the error is raised for the caller to decide.
    """

    max_retries: int
    initial_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0
    random: Callable[[], float] = dataclasses.field(default=random.random, repr=False)
    clock: Callable[[], float] = dataclasses.field(default=time.time, repr=False)

    def delay(self, retries_done: int, error: PaySDKError) -> float | None:
        """Seconds to wait before the next try, or ``None`` to raise ``error`` now."""
        if retries_done >= self.max_retries or not is_retryable(error):
            return None
        if isinstance(error, APIError):
            hint = retry_after(error.headers, self.clock)
            if hint is not None:
                return hint if hint <= self.max_retry_after else None
        backoff = min(self.initial_delay * 2.0**retries_done, self.max_delay)
        return backoff * (1.0 - 0.25 * self.random())


def is_retryable(error: PaySDKError) -> bool:
    if isinstance(error, (APIConnectionError, ListUnavailableError)):
        return True
    if isinstance(error, APIError):
        return error.status_code in RETRYABLE_STATUS or error.status_code >= 500
    return False


def retry_after(headers: Mapping[str, str], clock: Callable[[], float] = time.time) -> float | None:
    """The server's requested wait in seconds, from ``retry-after-ms`` or ``Retry-After``."""
    millis = _non_negative(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _non_negative(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
        if when.tzinfo is None:  # "-0000": RFC 5322's "UTC, source zone unknown"
            when = when.replace(tzinfo=dt.timezone.utc)
        return max(0.0, when.timestamp() - clock())
    except (TypeError, ValueError, IndexError, OverflowError, OSError):
        return None


def _non_negative(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


# --- plans ------------------------------------------------------------------------------------


def call(
    config: Config,
    request: Send,
    parse: Callable[[bytes], T],
    *,
    reference: str | None = None,
    policy: RetryPolicy | None = None,
) -> Plan[T]:
    """Send ``request`` until it gives a model, an error not worth retrying, or retries run out."""
    policy = policy or RetryPolicy(max_retries=config.max_retries)
    retries_done = 0
    while True:
        outcome = yield request
        error: PaySDKError
        if isinstance(outcome, httpx.Response):
            log.debug("%s -> %s", request, outcome.status_code)
            try:
                return map_response(request, outcome, parse, reference)
            except APIError as exc:
                error = exc
        elif isinstance(outcome, httpx.HTTPError):
            log.debug("%s -> %r", request, outcome)
            error = connection_error(request, outcome)
            error.__cause__ = outcome
        else:
            raise TypeError(f"a plan must be sent a response or an error, got {outcome!r}")
        wait = policy.delay(retries_done, error)
        if wait is None:
            raise error
        retries_done += 1
        log.info(
            "%s failed (%s); retry %d of %d in %.2fs",
            request,
            type(error).__name__,
            retries_done,
            policy.max_retries,
            wait,
        )
        yield Sleep(wait)


def verify(config: Config, reference: str) -> Plan[VerifiedPayment]:
    request = verify_request(config, reference)  # checks the reference before any step
    return _answering(call(config, request, parse_verify, reference=reference), reference)


def _answering(plan: Plan[VerifiedPayment], reference: str) -> Plan[VerifiedPayment]:
    """The plan's payment, refused if it is not the one asked for (a confused proxy, say)."""
    payment = yield from plan
    if payment.reference != reference:
        raise PaymentMismatchError(
            f"asked for payment {reference!r}, the service answered with {payment.reference!r}",
            payment=payment,
            mismatches={"reference": (reference, payment.reference)},
        )
    return payment


def list_payments(config: Config) -> Plan[list[ListedPayment]]:
    return call(config, list_request(config), parse_list)


# --- confirming a payment ---------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Expected:
    """What the merchant expects a payment to be: its order's amount and currency.

    ``amount`` is in the unit the service reports, as an int (a whole ``Decimal``, as an ORM
    may hold it, is taken as that int); ``currency`` is compared without regard to case.
    ``None`` means "do not check this": give it only on purpose.
    """

    amount: int | None = None
    currency: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "amount", _whole_amount(self.amount))
        if self.currency is not None and (
            not isinstance(self.currency, str) or not self.currency.strip()
        ):
            raise ConfigurationError("the expected currency must be a non-empty str")


def _whole_amount(amount: object) -> int | None:
    if amount is None or (isinstance(amount, int) and not isinstance(amount, bool)):
        return amount
    if (
        isinstance(amount, decimal.Decimal)
        and amount.is_finite()
        and amount == amount.to_integral()
    ):
        return int(amount)
    raise ConfigurationError(
        f"the expected amount must be a whole number (int), not {amount!r}; "
        "money in floats or fractions cannot be compared exactly"
    )


def expected_for(
    reference: str, amount: int | None, currency: str | None, looked_up: bool, found: object
) -> Expected:
    """What a callback's payment must match: the given values, or what ``lookup`` found.

    ``found`` may be an ``Expected``, or a mapping or object (such as the merchant's order)
    with both ``amount`` and ``currency``; ``None`` means the merchant has no such order.
    """
    if not looked_up:
        return Expected(amount=amount, currency=currency)
    if amount is not None or currency is not None:
        raise ConfigurationError("give either lookup or amount/currency, not both")
    if inspect.isawaitable(found):
        if inspect.iscoroutine(found):
            found.close()  # never awaited: close it so Python does not warn later
        raise ConfigurationError("lookup returned an awaitable: an async lookup needs AsyncClient")
    if found is None:
        raise UnknownOrderError(
            f"no order has the reference {reference!r}; the callback is not acted on",
            reference=reference,
        )
    if isinstance(found, Expected):
        return found
    if isinstance(found, Mapping):
        found = cast("Mapping[str, Any]", found)
        values = {field: found.get(field) for field in ("amount", "currency")}
    else:
        values = {field: getattr(found, field, None) for field in ("amount", "currency")}
    missing = [field for field, value in values.items() if value is None]
    if missing:
        raise ConfigurationError(
            "lookup must return an order with both amount and currency, paysdk.Expected (to "
            f"leave one unchecked on purpose) or None; its {type(found).__name__} has no "
            + " and no ".join(missing)
        )
    return Expected(amount=values["amount"], currency=values["currency"])


def check_payment(
    payment: VerifiedPayment, expected: Expected, *, require_success: bool = True
) -> VerifiedPayment:
    """Return ``payment`` if it can be fulfilled, else raise why it cannot."""
    mismatches: dict[str, tuple[object, object]] = {}
    if require_success and not payment.succeeded:
        raise PaymentFailedError(f"payment {payment.reference!r} did not succeed", payment=payment)
    if expected.amount is not None and payment.amount != expected.amount:
        mismatches["amount"] = (expected.amount, payment.amount)
    if expected.currency is not None and (
        payment.currency.strip().upper() != expected.currency.strip().upper()
    ):
        mismatches["currency"] = (expected.currency, payment.currency)
    if mismatches:
        detail = ", ".join(
            f"{field} expected {want!r} but the service says {got!r}"
            for field, (want, got) in mismatches.items()
        )
        raise PaymentMismatchError(
            f"payment {payment.reference!r} does not match: {detail}",
            payment=payment,
            mismatches=mismatches,
        )
    return payment


def confirm(
    config: Config, reference: str, expected: Expected, *, require_success: bool = True
) -> Plan[VerifiedPayment]:
    """Verify, then check the payment succeeded and matches what the merchant expects."""
    return _checked(verify(config, reference), expected, require_success)


def _checked(
    plan: Plan[VerifiedPayment], expected: Expected, require_success: bool
) -> Plan[VerifiedPayment]:
    payment = yield from plan
    return check_payment(payment, expected, require_success=require_success)

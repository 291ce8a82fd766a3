"""The I/O-free heart of paysdk: what to send, what an answer means, and whether to try again.

Each API call is a *plan*: a generator that yields steps (:mod:`paysdk._steps`: send, sleep,
read, emit) and is sent back what came of each (an :class:`Answer`, a :class:`Failure`...). It
returns the parsed model or raises a :mod:`paysdk` exception. The clients only carry the steps
out, so every shell (sync, async, aiohttp) shares every decision made here, in the sans-I/O style
of h11: this module never opens a socket or sleeps, and tests drive it by hand.
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, Final, TypeAlias, TypeVar
from urllib.parse import quote

import httpx
from pydantic import ValidationError

from ._config import ITEM_MAX_BYTES, LIST_MAX_BYTES, VERIFY_MAX_BYTES, Config
from ._confirm import Expected, check_payment, expected_for
from ._errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    InvalidReferenceError,
    PaymentMismatchError,
    PaySDKError,
    ResponseValidationError,
)
from ._models import VerifiedPayment
from ._responses import (
    error_for,
    failure_error,
    info_of,
    invalid_body,
    map_response,
    parse_list,
    parse_verify,
)
from ._retry import RETRYABLE_STATUS, RetryPolicy, is_retryable, retry_after
from ._steps import (
    Answer,
    Emit,
    Failure,
    Opened,
    Read,
    Send,
    Sleep,
    failure_from_httpx,
)
from ._stream import ListStream

__all__ = [
    "RETRYABLE_STATUS",
    "Answer",
    "Emit",
    "Expected",
    "Failure",
    "Opened",
    "Read",
    "RetryPolicy",
    "Send",
    "Sleep",
    "check_payment",
    "error_for",
    "expected_for",
    "is_retryable",
    "map_response",
    "parse_list",
    "parse_verify",
    "retry_after",
    "verified",
]

log = logging.getLogger("paysdk")

T = TypeVar("T")
E = TypeVar("E", bound=PaySDKError)
if TYPE_CHECKING:  # for type checkers only, like ``_steps.Step``
    from ._listed_models import ListedPayment
    from ._steps import Outcome, Step

    Plan: TypeAlias = Generator[Step[Any], Outcome, T]
    ItemPlan: TypeAlias = Generator[Step[T], Outcome, None]
"""A plan that hands items to the caller as it goes (``Emit``) and returns nothing."""

MAX_REFERENCE_LENGTH: Final = 256
_PLAIN_REFERENCE: Final = re.compile(rf"[A-Za-z0-9_.~-]{{1,{MAX_REFERENCE_LENGTH}}}")
_INVISIBLE: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories refused in references: controls, bidi/zero-width formats, separators."""


# --- references -------------------------------------------------------------------------------


def reference_problem(reference: object) -> str | None:
    """Why ``reference`` cannot be a payment reference, or ``None`` if it can.

    The one place the rules live; verify raises InvalidReferenceError and callback parsing
    raises InvalidCallbackError with the same words.
    """
    if isinstance(reference, str) and _is_plain(reference):
        return None
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
    printable_ascii = reference.isascii() and reference.isprintable()  # the common case, at C speed
    if not printable_ascii and any(unicodedata.category(ch) in _INVISIBLE for ch in reference):
        return "the reference contains control or invisible formatting characters"
    return None


def _is_plain(reference: str) -> bool:
    """Only unreserved URL characters, and not ``.`` or ``..``: a reference that passes every
    rule and is its own path segment. The common case, checked in one step."""
    return _PLAIN_REFERENCE.fullmatch(reference) is not None and reference not in (".", "..")


def check_reference(reference: object) -> str:
    problem = reference_problem(reference)
    if problem is not None:
        raise InvalidReferenceError(problem)
    assert isinstance(reference, str)
    return reference


# --- requests ---------------------------------------------------------------------------------


def verify_request(config: Config, reference: str) -> Send:
    plain = isinstance(reference, str) and _is_plain(reference)  # passes every rule
    segment = reference if plain else quote(check_reference(reference), safe="")
    return _get(config, f"/payment/{segment}", config.max_bytes(VERIFY_MAX_BYTES))


def list_request(config: Config, *, stream: bool = False) -> Send:
    return _get(
        config, "/payments", config.max_bytes(ITEM_MAX_BYTES if stream else LIST_MAX_BYTES), stream
    )


def _get(config: Config, path: str, max_body: int, stream: bool = False) -> Send:
    return Send(
        "GET",
        config.base_url + path,
        config.request_headers,
        config.timeout,
        budget=config.attempt_budget,
        max_body=max_body,
        stream=stream,
    )


# --- plans ------------------------------------------------------------------------------------


class _Attempts:
    """Counts a call's attempts and keeps it within its deadline; shared by every plan."""

    __slots__ = ("config", "policy", "retries_done", "started")

    def __init__(self, config: Config, policy: RetryPolicy, started: float) -> None:
        self.config = config
        self.policy = policy
        self.started = started
        self.retries_done = 0

    def send(self, request: Send) -> Send:
        """``request`` with its budget cut to what is left of the call's deadline."""
        deadline = self.config.deadline
        if deadline is None:
            return request
        left = deadline - (self.policy.monotonic() - self.started)
        if left <= 0:
            raise APITimeoutError(
                f"the call's deadline of {deadline:g}s passed after {self.retries_done} attempt(s)",
                method=request.method,
                url=request.url,
            )
        budget = left if request.budget is None else min(request.budget, left)
        return request._replace(budget=budget)

    def counted(self, error: E) -> E:
        """``error``, saying how many attempts the call made (this one included)."""
        error.attempts = self.retries_done + 1
        return error

    def wait(self, request: Send, error: PaySDKError) -> Sleep:
        """The wait before the next attempt, or ``error`` raised when none should follow."""
        self.counted(error)
        wait = self.policy.delay(self.retries_done, error)
        deadline = self.config.deadline
        if (
            wait is not None
            and deadline is not None
            and self.policy.monotonic() - self.started + wait >= deadline
        ):
            wait = None  # the call would end past its deadline: raise now instead
        if wait is None:
            raise error
        self.retries_done += 1
        log.info(
            "%s failed (%s); retry %d of %d in %.2fs",
            request,
            type(error).__name__,
            self.retries_done,
            self.policy.max_retries,
            wait,
        )
        return Sleep(wait)


def _attempts(config: Config, policy: RetryPolicy | None) -> _Attempts:
    policy = policy or _default_policy(config.max_retries)
    return _Attempts(config, policy, policy.monotonic())


@functools.lru_cache(maxsize=16)  # immutable, and max_retries takes at most 11 values
def _default_policy(max_retries: int) -> RetryPolicy:
    return RetryPolicy(max_retries=max_retries)


def _as_answer(outcome: Outcome) -> Answer | Failure:
    if isinstance(outcome, (Answer, Failure)):
        return outcome
    if isinstance(outcome, httpx.Response):
        return Answer(outcome.status_code, outcome.headers, outcome.content)
    if isinstance(outcome, httpx.HTTPError):
        return failure_from_httpx(outcome)
    raise TypeError(f"a plan must be sent an answer or a failure, got {outcome!r}")


def call(
    config: Config,
    request: Send,
    parse: Callable[[bytes], T],
    *,
    reference: str | None = None,
    policy: RetryPolicy | None = None,
) -> Plan[T]:
    """Send ``request`` until it gives a model, an error not worth retrying, or retries run out."""
    return _call(config, request, lambda answer: parse(answer.content), reference, policy)


def call_raw(config: Config, request: Send, *, reference: str | None = None) -> Plan[Answer]:
    """Like :func:`call`, with the successful :class:`Answer` itself as the result, unparsed."""
    return _call(config, request, lambda answer: answer, reference, None)


def _call(
    config: Config,
    request: Send,
    success: Callable[[Answer], T],
    reference: str | None,
    policy: RetryPolicy | None,
) -> Plan[T]:
    attempts = _attempts(config, policy)
    while True:
        outcome = _as_answer((yield attempts.send(request)))
        error: PaySDKError
        if isinstance(outcome, Answer):
            log.debug("%s -> %s", request, outcome.status_code)
            try:
                return map_response(request, outcome, success, reference)
            except APIError as exc:
                error = exc
            except PaySDKError as exc:  # an answer that is not what was asked: not retried
                attempts.counted(exc)
                raise
        else:
            log.debug("%s -> %s", request, outcome.kind)
            error = failure_error(request, outcome, reference)
        yield attempts.wait(request, error)


def verify(config: Config, reference: str) -> Plan[VerifiedPayment]:
    request = verify_request(config, reference)  # checks the reference before any step
    return _call(config, request, verified(reference), reference, None)


def verified(reference: str) -> Callable[[Answer], VerifiedPayment]:
    """Reads verify's answer: the payment, refused if it is not the one asked for."""

    def parse(answer: Answer) -> VerifiedPayment:
        return check_answered(parse_verify(answer.content), reference)

    return parse


def check_answered(payment: VerifiedPayment, reference: str) -> VerifiedPayment:
    """``payment``, refused if it is not the one asked for (a confused proxy, say)."""
    if payment.reference != reference:
        raise PaymentMismatchError(
            f"asked for payment {reference!r}, the service answered with {payment.reference!r}",
            payment=payment,
            mismatches={"reference": (reference, payment.reference)},
        )
    return payment


def list_payments(config: Config) -> Plan[list[ListedPayment]]:
    return call(config, list_request(config), parse_list)


def iter_payments(config: Config, *, policy: RetryPolicy | None = None) -> ItemPlan[ListedPayment]:
    """Stream the list: payments are emitted as their bytes arrive, one element held at a time.

    Failures before the first payment is emitted are retried like any call's; after it, a
    retry would repeat payments already handed out, so the error is raised, saying how many.
    """
    request = list_request(config, stream=True)
    attempts = _attempts(config, policy)
    while True:
        sent = attempts.send(request)
        opened = yield sent
        error: PaySDKError
        if isinstance(opened, Opened):
            log.debug("%s -> %s", request, opened.status_code)
            parser = ListStream(max_item_bytes=request.max_body)
            try:
                emitted = yield from _stream_items(sent, opened, parser, attempts)
            except PaySDKError as exc:  # a body that is not a list: not retried
                attempts.counted(exc)
                raise
            if emitted is None:
                return
            error, count = emitted
            if count:  # payments went out: a retry would repeat them
                raise attempts.counted(error)
        else:
            outcome = _as_answer(opened)
            if isinstance(outcome, Answer):
                log.debug("%s -> %s", request, outcome.status_code)
                error = error_for(request, outcome, None)
            else:
                log.debug("%s -> %s", request, outcome.kind)
                error = failure_error(request, outcome)
        yield attempts.wait(request, error)


def _stream_items(
    request: Send, opened: Opened, parser: ListStream, attempts: _Attempts
) -> Generator[Step[ListedPayment], Outcome, tuple[PaySDKError, int] | None]:
    """Read and emit until the body ends (``None``) or fails (the error and how many went out).

    Each payment must arrive within the attempt's budget of the one before, counting only the
    time spent waiting for bytes (not the caller's own time between payments): a server that
    trickles bytes cannot hold the iteration. A ``deadline`` bounds the whole iteration.
    """
    emitted = 0
    answer = Answer(opened.status_code, opened.headers, b"")
    clock = attempts.policy.monotonic
    deadline = attempts.config.deadline
    progressed = clock()
    while True:
        budget, why = request.budget, f"no payment arrived within {request.budget or 0:g}s"
        if budget is not None:
            budget -= clock() - progressed
        if deadline is not None:
            left = deadline - (clock() - attempts.started)
            if budget is None or left < budget:
                budget, why = left, f"the call's deadline of {deadline:g}s passed"
        chunk = (yield Read(budget)) if budget is None or budget > 0 else Failure("timeout", why)
        if isinstance(chunk, Failure):
            error = failure_error(request, chunk)
            if emitted:
                error = _cut_after(error, emitted)
            return error, emitted
        if not isinstance(chunk, bytes):
            raise TypeError(f"a Read must be answered with bytes or a Failure, got {chunk!r}")
        try:
            items = parser.feed(chunk) if chunk else parser.close()
        except ValidationError as exc:
            raise invalid_body(request, answer, exc, where=parser.where) from None
        except ValueError as exc:  # ListStream's own: not JSON, or a payment too large
            raise _stream_error(request, answer, str(exc), emitted) from None
        if items:
            emitted += len(items)
            yield Emit(items)
            progressed = clock()  # the caller's time with the payments is not the server's
        if not chunk:
            return None


def _cut_after(error: PaySDKError, emitted: int) -> PaySDKError:
    if isinstance(error, APIConnectionError):
        cut = type(error)(
            f"{error.message}, after {emitted} payment(s) were already yielded; "
            "iterate again to start over",
            method=error.method,
            url=error.url,
        )
        cut.__cause__ = error.__cause__
        return cut
    return error


def _stream_error(request: Send, answer: Answer, problem: str, emitted: int) -> APIError:
    return ResponseValidationError(
        f"the service answered with {request.scrub(problem)} (after {emitted} payment(s))",
        **info_of(request, answer),
    )


# --- confirming a payment ---------------------------------------------------------------------


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

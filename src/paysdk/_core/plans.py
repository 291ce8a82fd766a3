"""Each API call as a *plan*: a generator of steps that returns the model or raises (see
``paysdk._core``)."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from pydantic import ValidationError

from .._errors import (
    APIConnectionError,
    APIError,
    PaymentMismatchError,
    PaySDKError,
    ResponseValidationError,
)
from .._errors.api import request_id_of
from .._errors.quoting import quoted
from .._models.verified import VerifiedPayment
from .._models.wire import hide_key
from .._parsing.stream import ListStream
from .attempts import Attempts, attempts_for
from .config import Config
from .expected import Expected, check_payment
from .requests import list_request, verify_request
from .responses import (
    error_for,
    failure_error,
    info_of,
    invalid_body,
    map_response,
)
from .retry import RetryPolicy
from .steps import (
    Answer,
    Chunk,
    Emit,
    Failure,
    Opened,
    Read,
    Send,
    proxy_authentication_required,
)
from .validation import parse_list, parse_verify

__all__ = [
    "ItemPlan",
    "Plan",
    "call",
    "call_raw",
    "confirm",
    "iter_payments",
    "list_payments",
    "listed",
    "verified",
    "verify",
    "verify_identified",
]


T = TypeVar("T")
if TYPE_CHECKING:  # for type checkers only, like ``steps.Step``
    from .._models.listed import ListedPayment
    from .steps import Step, StepResult

    Plan: TypeAlias = Generator[Step[Any], StepResult, T]
    ItemPlan: TypeAlias = Generator[Step[T], StepResult, None]
"""A plan that hands items to the caller as it goes (``Emit``) and returns nothing."""


def _as_answer(outcome: StepResult) -> Answer | Failure:
    """``outcome``, a Send's answer or failure; a 407 as the proxy's refusal it is."""
    if isinstance(outcome, Answer) and outcome.status_code == 407:
        return proxy_authentication_required()
    if isinstance(outcome, (Answer, Failure)):
        return outcome
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
    """Like ``call``, with the successful ``Answer`` itself as the result, unparsed."""
    return _call(config, request, lambda answer: answer, reference, None)


def _call(
    config: Config,
    request: Send,
    success: Callable[[Answer], T],
    reference: str | None,
    policy: RetryPolicy | None,
) -> Plan[T]:
    attempts = attempts_for(config, policy, reference)
    while True:
        outcome = _as_answer((yield attempts.send(request)))
        attempts.log_outcome(request, outcome)
        error: PaySDKError
        if isinstance(outcome, Answer):
            try:
                return map_response(request, outcome, success, reference)
            except APIError as exc:
                error = exc
            except PaySDKError as exc:  # an answer that is not what was asked: not retried
                attempts.counted(exc)
                raise
        else:
            error = failure_error(request, outcome, reference)
        yield attempts.wait(request, error)


def verify(config: Config, reference: str) -> Plan[VerifiedPayment]:
    request = verify_request(config, reference)  # checks the reference before any step
    return _call(config, request, verified(reference, config), reference, None)


def verify_identified(config: Config, reference: str) -> Plan[tuple[VerifiedPayment, str | None]]:
    """``verify``, with the request id of the answer that brought the payment."""
    request = verify_request(config, reference)
    parse = verified(reference, config)

    def identified(answer: Answer) -> tuple[VerifiedPayment, str | None]:
        return parse(answer), request_id_of(answer.headers, request.scrub)

    return _call(config, request, identified, reference, None)


def verified(reference: str, config: Config) -> Callable[[Answer], VerifiedPayment]:
    """Reads verify's answer: the payment, refused if it is not the one asked for (a confused
    proxy, say), marked with the account ``config`` reaches (its label, and its fingerprint:
    ``Config.issuer``)."""

    def parse(answer: Answer) -> VerifiedPayment:
        payment = parse_verify(answer.content)
        if config.echoes_key(answer.content):
            hide_key(payment, config.secret_key)
        if payment.reference != reference:
            # Both in ASCII, so one with a look-alike letter never reads as the one asked for;
            # the reference the service sent may echo the key.
            raise PaymentMismatchError(
                f"asked for payment {reference!a}, the service answered with "
                + quoted(payment.reference, config.scrub, code=True),
                payment=payment,
                mismatches={"reference": (reference, payment.reference)},
            )
        return payment.issued_by(config.account, config.issuer)

    return parse


def list_payments(config: Config) -> Plan[list[ListedPayment]]:
    return call(config, list_request(config), listed(config))


def listed(config: Config) -> Callable[[bytes], list[ListedPayment]]:
    """Reads list's body: the payments, whose ``repr`` blots out the secret key if the body
    held it (``Config.echoes_key``: a scan of the body, nothing per payment otherwise)."""

    def parse(content: bytes) -> list[ListedPayment]:
        payments = parse_list(content, pause_gc=config.pauses_gc)
        if config.echoes_key(content):
            for payment in payments:
                hide_key(payment, config.secret_key)
        return payments

    return parse


def iter_payments(config: Config, *, policy: RetryPolicy | None = None) -> ItemPlan[ListedPayment]:
    """Stream the list: payments are emitted as their bytes arrive, one element held at a time.
    Failures before the first payment is emitted are retried like any call's; after it, a retry
    would repeat payments already handed out, so the error is raised, saying how many."""
    request = list_request(config, stream=True)
    attempts = attempts_for(config, policy)
    while True:
        sent = attempts.send(request)
        opened = yield sent
        error: PaySDKError
        if isinstance(opened, Opened):
            attempts.log_outcome(request, opened)
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
            attempts.log_outcome(request, outcome)
            if isinstance(outcome, Answer):
                error = error_for(request, outcome, None)
            else:
                error = failure_error(request, outcome)
        yield attempts.wait(request, error)


def _stream_items(
    request: Send, opened: Opened, parser: ListStream, attempts: Attempts
) -> Generator[Step[ListedPayment], StepResult, tuple[PaySDKError, int] | None]:
    """Read and emit until the body ends (``None``) or fails (the error and how many went out).

    Each payment must arrive within the attempt's budget of the one before, counting only the
    time spent waiting for bytes (not the caller's own time between payments): a server that
    trickles bytes cannot hold the iteration. A ``deadline`` bounds the whole iteration.
    """
    emitted = 0
    answer = Answer(opened.status_code, opened.headers, b"")
    clock = attempts.policy.monotonic
    config = attempts.config
    deadline = config.deadline
    progressed = clock()
    echoed, seam = False, Chunk()
    reach = 0 if config.key_echo is None else config.key_echo.reach
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
            if emitted and isinstance(error, APIConnectionError):
                cut = type(error)(
                    f"{error.message}, after {emitted} payment(s) were already yielded; "
                    "iterate again to start over",
                    method=error.method,
                    url=error.url,
                )
                cut.__cause__ = error.__cause__
                error = cut
            return error, emitted
        if not isinstance(chunk, bytes):
            raise TypeError(f"a Read must be answered with bytes or a Failure, got {chunk!r}")
        try:
            items = parser.feed(chunk) if chunk else parser.close()
        except ValidationError as exc:
            raise invalid_body(request, answer, exc, where=parser.where) from None
        except ValueError as exc:  # ListStream's own: not JSON, or a payment too large
            raise ResponseValidationError(
                f"the service answered with {request.scrub(str(exc))} (after {emitted} payment(s))",
                **info_of(request, answer),
            ) from None
        if chunk and reach and not echoed:  # a key cut across two chunks is seen with the second
            echoed = config.echoes_key(chunk) or config.echoes_key(seam + chunk[:reach])
            seam = Chunk((seam + chunk)[-reach:] if len(chunk) < reach else chunk[-reach:])
        if items:
            if echoed:
                for item in items:
                    hide_key(item, config.secret_key)
            emitted += len(items)
            yield Emit(items)
            progressed = clock()  # the caller's time with the payments is not the server's
        if not chunk:
            return None


# --- confirming a payment ---------------------------------------------------------------------


def confirm(config: Config, reference: str, expected: Expected) -> Plan[VerifiedPayment]:
    """Verify, then check the payment succeeded and matches what the merchant expects."""
    return _checked(verify(config, reference), expected, config.scrub)


def _checked(
    plan: Plan[VerifiedPayment], expected: Expected, scrub: Callable[[str], str]
) -> Plan[VerifiedPayment]:
    payment = yield from plan
    return check_payment(payment, expected, scrub=scrub)

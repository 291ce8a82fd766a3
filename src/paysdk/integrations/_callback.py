"""What every framework helper decides, free of I/O (the adapters carry it out): GET only, which
refusals the ledger records, and the fulfilment rule: a view's 2xx, 3xx or non-response is
fulfilled; a 4xx is the merchant's refusal, released and recorded with the status and a body
excerpt; a 5xx or an exception is released unrecorded, so the service's retry runs it again."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TypeVar

from .._client._async.client import AsyncClient
from .._client._sync.client import Client
from .._errors import ConfigurationError, PaymentFailedError, PaymentMismatchError, PaySDKError
from .._errors.quoting import quoted
from .._models.verified import VerifiedPayment
from ..ledger import AmountOutOfRangeError
from .responses import CallbackResponse, log, log_fields

__all__ = [
    "NotFulfilled",
    "Refusal",
    "check_answer",
    "failed_answer",
    "failed_payment",
    "method_response",
    "refusal_of",
    "scrub_of",
    "sendable_answer",
    "unrecorded_refusal",
]

R = TypeVar("R")
S = TypeVar("S")

EXCERPT = 200
"""How many characters of a refusing view's body its recorded reason quotes."""


@dataclasses.dataclass(frozen=True)
class Refusal:
    """A refusal worth recording: the payment the service confirmed, and why it is refused."""

    payment: VerifiedPayment
    reason: str


class NotFulfilled(Exception):
    """Raised from the ledger's action for a view answer that is not a success, so the ledger
    releases the claim; the helper then sends ``response``, the view's own, unchanged."""

    def __init__(self, response: object, refusal: str | None) -> None:
        super().__init__(refusal or "the callback view answered a server error")
        self.response = response
        self.refusal = refusal
        """Why the merchant refused the payment (a 4xx), or None for a 5xx."""

    def refusal_for(self, payment: VerifiedPayment) -> Refusal | None:
        """The refusal to record for ``payment``: only a 4xx is one."""
        return None if self.refusal is None else Refusal(payment, self.refusal)


def method_response(method: str) -> CallbackResponse | None:
    """The answer to a callback request by ``method`` (as the framework gives it): ``None`` for
    GET, which is handled; for any other (``HEAD`` too), 405 ``method_not_allowed``, whose
    ``headers`` hold ``Allow: GET``. Compared exactly: HTTP methods are case-sensitive."""
    if method == "GET":
        return None
    log.info(
        "callback answered 405 (method_not_allowed) to method %s",
        _shown_method(method),
        extra=log_fields(),
    )
    return CallbackResponse(405, "method_not_allowed")


def _shown_method(method: str) -> str:
    """The method for a log line: a client sends any token; at most 20 printable characters."""
    return "".join(c if c.isprintable() else "?" for c in method[:20]) or "(no method)"


def scrub_of(client: Client | AsyncClient) -> Callable[[str], str]:
    """What blots ``client``'s secret key out of text, for a refusal's reason: what the service
    sent (a currency, a reference, a view's body quoting them) may echo the key."""
    return client._config.scrub


def check_answer(
    response: R, status: int | None, body: Callable[[], bytes], scrub: Callable[[str], str]
) -> R:
    """Pass on a view's successful answer; raise for one that must not be recorded fulfilled.

    Args:
        response: what the view returned, as the adapter will send it.
        status: its HTTP status, or None for a value that is not a response (a success).
        body: reads the response's body, called only for a 4xx.
        scrub: blots the secret key out of the body (``scrub_of``), which the reason quotes.

    Returns:
        ``response``, for a success (2xx, 3xx, or no status).

    Raises:
        NotFulfilled: the view answered 4xx (with the refusal's reason) or 5xx.
    """
    if status is None or status < 400:
        return response
    if status >= 500:
        raise NotFulfilled(response, None)
    raise NotFulfilled(response, f"the callback view answered {status}: {_excerpt(body(), scrub)}")


def failed_payment(error: PaySDKError) -> PaymentFailedError | None:
    """``error`` if it is a failed payment (which ``on_failed`` is called with), else None."""
    return error if isinstance(error, PaymentFailedError) else None


def failed_answer(answer: R | None, own: Callable[[], R]) -> R:
    """What a failed payment is answered with: what ``on_failed`` returned, sent as the
    framework sends a view's answer (Flask's dict, str or tuple; FastAPI's value or response;
    Django's response, ``sendable_answer``), or, for ``None`` (or no ``on_failed``), the
    helper's own 200 ``failed``.

    Args:
        answer: what ``on_failed`` returned, awaited if it had to be.
        own: makes the helper's own answer (which logs it), called only for ``None``.

    Returns:
        ``answer``, or the helper's own answer for ``None``.
    """
    return own() if answer is None else answer


def sendable_answer(answer: object, sent: type[S], framework: str) -> S | None:
    """``on_failed``'s answer where the framework sends only a response of type ``sent``
    (Django's ``HttpResponseBase``): any other is refused, not dropped for the helper's answer.

    Args:
        answer: what ``on_failed`` returned, awaited if it had to be.
        sent: the type of what the framework sends.
        framework: its name, for the refusal.

    Returns:
        ``answer``: a ``sent``, or ``None``.

    Raises:
        ConfigurationError: ``answer`` is something else (a dict); the framework answers its
            500 and nothing is recorded, so the service calls again once ``on_failed`` is fixed.
    """
    if answer is None or isinstance(answer, sent):
        return answer
    raise ConfigurationError(
        f"on_failed returned a {type(answer).__name__}, which {framework} cannot send: return a "
        f"response ({sent.__name__}; a JsonResponse for a dict), or None for the helper's own "
        "answer (200 failed)"
    )


def refusal_of(error: PaySDKError, scrub: Callable[[str], str]) -> Refusal | None:
    """The refusal to record for a callback refused (``error``) before fulfilment or by the
    ledger, or None; ``scrub`` (``scrub_of``) blots the secret key out of what the service sent,
    which the reason quotes.

    Only a payment the service confirmed is recorded: the callback is unauthenticated, and
    recording an unknown order or reference would let anyone fill the ledger. A payment of
    another reference than the one asked for (a confused proxy's, one echoing the key) is none:
    recorded, it would be a row under that reference, which no order asked about.
    """
    if isinstance(error, AmountOutOfRangeError):
        return Refusal(error.payment, "its amount is beyond what the ledger records")
    if isinstance(error, PaymentFailedError):
        return Refusal(error.payment, "the service reports the payment failed")
    if isinstance(error, PaymentMismatchError) and "reference" not in error.mismatches:
        differs = ", ".join(
            # in ASCII, so a look-alike currency ('\\u212aES', a Kelvin sign) never reads as
            # 'KES'; and cut, so even two fields of escapes stay a reason the ledger records
            f"{field} {quoted(actual, scrub, code=True)} instead of {quoted(expected, code=True)}"
            for field, (expected, actual) in error.mismatches.items()
        )
        return Refusal(error.payment, f"paid, but not for this order: {differs}")
    return None


def unrecorded_refusal(reference: str, error: PaySDKError) -> None:
    """Log a refusal the ledger could not record; the callback is answered as if it had been.
    The reference is quoted in ASCII, as the refusal's messages quote one: a reference may hold
    characters a log viewer draws as nothing (U+3164, a Hangul filler)."""
    fields = {**log_fields(error), "paysdk_reference": reference}
    log.error(
        "could not record the refusal of %s in the ledger: %s",
        quoted(reference, code=True),
        error,
        extra=fields,
    )


def _excerpt(body: bytes, scrub: Callable[[str], str]) -> str:
    """The body's first characters, the secret key blotted out first (so no cut leaves part of
    it), each unprintable one escaped; at most ``EXCERPT`` characters once escaped (an escape is
    up to ten), so the reason stays one the ledger records."""
    text = scrub(body.decode("utf-8", "replace")).strip()
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:EXCERPT])
    cut = len(text) > EXCERPT or len(shown) > EXCERPT
    return shown[:EXCERPT] + ("..." if cut else "") or "(empty body)"

"""What to answer the service when a callback cannot be fulfilled: one mapping for every framework.

| Error | Status | Body ``status`` | Why |
| --- | --- | --- | --- |
| InvalidCallbackError | 400 | ``invalid_callback`` | no single, well-formed reference |
| UnknownOrderError | 404 | ``unknown_order`` | not your order: likely spoofed |
| PaymentNotFoundError | 404 | ``unknown_payment`` | the service does not know it |
| PaymentFailedError | 200 | ``failed`` | a final, legitimate outcome |
| PaymentMismatchError | 409 | ``mismatch`` | paid, but not for this order |
| AmountOutOfRangeError | 200 | ``amount_out_of_range`` | the ledger cannot record it |
| anything paysdk retries | 503 | ``retry_later`` | could not verify it just now (1) |
| UnrecordedFulfilmentError | 200 | ``unrecorded`` | it ran; held as unknown for a person |
| LedgerError | 503 | ``retry_later`` | could not record the fulfilment |
| any other PaySDKError | 500 | ``error`` | fix the configuration or key |
| a method other than GET | 405 | ``method_not_allowed`` | the service calls back with GET only |
| a duplicate (``ledger=``) | 200 | ``already_fulfilled`` | the view does not run again |
| fulfilling elsewhere | 503 | ``in_progress`` | another worker runs the view: come back |
| a claim of unknown outcome | 503 | ``unknown`` | it waits for a person's ``resolve`` |

(1) With the wait the service's own answer asked for (its ``Retry-After`` on a 429 or a 5xx),
as ``Retry-After`` in whole seconds: a delivery sooner would meet the same refusal.

A method other than GET is answered (with ``Allow: GET``) before anything is verified or run;
the last three rows are
[`fulfilment_response`][paysdk.integrations.responses.fulfilment_response]'s. Each 200 is final:
a retry could not change it, or must not run the view again. Why each is answered so:
[Callbacks](callbacks.md#what-to-answer-the-service).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from typing import TYPE_CHECKING, Any

from .._core import is_retryable, retry_after
from .._core.attempts import LOG_FIELDS
from .._core.retry import MAX_RETRY_AFTER
from .._errors import (
    APIError,
    InvalidCallbackError,
    InvalidReferenceError,
    PaymentFailedError,
    PaymentMismatchError,
    PaymentNotFoundError,
    PaymentVerificationError,
    PaySDKError,
    UnknownOrderError,
)
from ..ledger import AmountOutOfRangeError, LedgerError, UnrecordedFulfilmentError

if TYPE_CHECKING:
    from ..ledger import FulfilResult

__all__ = ["CallbackResponse", "callback_response", "fulfilment_response"]

log: logging.Logger = logging.getLogger("paysdk.callbacks")


@dataclasses.dataclass(frozen=True)
class CallbackResponse:
    """The HTTP status and small JSON body to answer a callback that was not fulfilled."""

    status_code: int
    """The HTTP status to answer with."""
    status: str
    """The body's ``status``: ``invalid_callback``, ``unknown_order``, ``retry_later``..."""
    retry_after: int | None = None
    """Whole seconds the service should wait before calling back again, sent as
    ``Retry-After``; ``None``: no such header."""

    @property
    def body(self) -> dict[str, str]:
        """The JSON body: ``{"status": status}``."""
        return {"status": self.status}

    @property
    def headers(self) -> dict[str, str]:
        """The headers to answer with: ``Allow: GET`` for a 405, ``Retry-After`` when there is a
        wait to pass on, none otherwise."""
        if self.status_code == 405:
            return {"Allow": "GET"}
        return {} if self.retry_after is None else {"Retry-After": str(self.retry_after)}


def callback_response(error: PaySDKError) -> CallbackResponse:
    """The answer to a callback that raised ``error``; also logs it (never the secret key).

    Args:
        error: what verifying or fulfilling the callback raised.

    Returns:
        The status and ``{"status": ...}`` body to answer with.
    """
    response, level = _classify(error)
    log.log(
        level,
        "callback answered %d (%s): %s",
        response.status_code,
        response.status,
        error,
        extra=log_fields(error),
    )
    return response


def log_fields(error: PaySDKError | None = None) -> dict[str, object]:
    """A callback line's ``extra`` fields: all of the ``paysdk`` logger's (``LOG_FIELDS``), as
    a formatter naming one (``%(paysdk_reference)s``) needs; ``None`` where a fact does not apply.

    Args:
        error: why the callback was refused, which may name its reference and the answer.

    Returns:
        The fields, the reference being the one the callback asked about, never the service's.
    """
    fields: dict[str, object] = {name: None for name in LOG_FIELDS}
    if isinstance(error, (UnknownOrderError, PaymentNotFoundError)):
        fields["paysdk_reference"] = error.reference
    elif isinstance(error, PaymentMismatchError) and "reference" in error.mismatches:
        fields["paysdk_reference"] = error.expected["reference"]
    elif isinstance(error, PaymentVerificationError):
        fields["paysdk_reference"] = error.reference
    if isinstance(error, APIError):
        fields["paysdk_status_code"] = error.status_code
        fields["paysdk_request_id"] = error.request_id
    if error is not None:
        fields["paysdk_outcome"] = type(error).__name__
    return fields


def fulfilment_response(result: FulfilResult[Any]) -> CallbackResponse | None:
    """The answer to a verified callback the ledger did not fulfil now; None if it did.

    Args:
        result: what ``fulfil_once`` did.

    Returns:
        The status and body to answer with; ``None`` if the ledger fulfilled it now.
    """
    if result.already_fulfilled:
        return CallbackResponse(200, "already_fulfilled")
    if result.in_progress:
        return CallbackResponse(503, "in_progress")
    if result.unknown:  # held for a person's decision: a later delivery may find it released
        return CallbackResponse(503, "unknown")
    return None


def _classify(error: PaySDKError) -> tuple[CallbackResponse, int]:
    if isinstance(error, UnknownOrderError):
        return CallbackResponse(404, "unknown_order"), logging.INFO
    if isinstance(error, (InvalidCallbackError, InvalidReferenceError)):
        return CallbackResponse(400, "invalid_callback"), logging.INFO
    if isinstance(error, PaymentNotFoundError):
        return CallbackResponse(404, "unknown_payment"), logging.INFO
    if isinstance(error, PaymentFailedError):
        return CallbackResponse(200, "failed"), logging.INFO
    if isinstance(error, PaymentMismatchError):
        return CallbackResponse(409, "mismatch"), logging.WARNING
    if isinstance(error, AmountOutOfRangeError):  # permanent: a retry meets the same amount
        return CallbackResponse(200, "amount_out_of_range"), logging.ERROR
    if isinstance(error, UnrecordedFulfilmentError):  # it ran: a retry must not run it again
        return CallbackResponse(200, "unrecorded"), logging.ERROR
    if isinstance(error, LedgerError):  # the ledger's database failed: nothing was recorded
        return CallbackResponse(503, "retry_later"), logging.ERROR
    if is_retryable(error):  # the SDK's own rule: what was worth retrying is worth it later
        return CallbackResponse(503, "retry_later", _wait_asked(error)), logging.WARNING
    return CallbackResponse(500, "error"), logging.ERROR


def _wait_asked(error: PaySDKError) -> int | None:
    """The wait the service's answer asked for, in the whole seconds ``Retry-After`` takes."""
    if not isinstance(error, APIError):
        return None
    seconds = retry_after(error.headers)
    return None if seconds is None else math.ceil(min(seconds, MAX_RETRY_AFTER))

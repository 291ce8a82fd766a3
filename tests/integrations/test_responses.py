"""The one status mapping every framework helper answers a bad callback with."""

from __future__ import annotations

import httpx
import pytest

import paysdk
from paysdk import _core
from paysdk._core.config import SealedHeaders
from paysdk.integrations.responses import CallbackResponse, callback_response, fulfilment_response
from paysdk.ledger import (
    AmountOutOfRangeError,
    FulfilResult,
    LedgerError,
    Outcome,
    UnrecordedFulfilmentError,
)
from tests.conftest import BASE_URL, NOT_FOUND_BODY, answered

REQUEST = _core.Send("GET", f"{BASE_URL}/payment/r", SealedHeaders({}), _core.Timeout(5, 5, 5, 5))


def _api_error(status: int, body: object = None) -> paysdk.PaySDKError:
    return _core.error_for(REQUEST, answered(httpx.Response(status, json=body)), "r")


@pytest.mark.parametrize("status", [408, 409, 425, 429, 500, 502, 503, 504])
def test_whatever_paysdk_retries_is_answered_retry_later(status: int) -> None:
    assert callback_response(_api_error(status)).status_code == 503


def test_no_answer_is_answered_retry_later() -> None:
    error = paysdk.APITimeoutError("slow", method="GET", url=BASE_URL)
    assert (callback_response(error).status_code, callback_response(error).body) == (
        503,
        {"status": "retry_later"},
    )


@pytest.mark.parametrize(
    ("error", "status", "word"),
    [
        (paysdk.InvalidCallbackError("no reference"), 400, "invalid_callback"),
        (paysdk.UnknownOrderError("not ours", reference="r"), 404, "unknown_order"),
        (_api_error(404, NOT_FOUND_BODY), 404, "unknown_payment"),
        (_api_error(401), 500, "error"),
        (_api_error(400), 500, "error"),
        (paysdk.ConfigurationError("bad key"), 500, "error"),
        (UnrecordedFulfilmentError("ran; not recorded", reference="r"), 200, "unrecorded"),
        (LedgerError("the database is down"), 503, "retry_later"),
        (
            AmountOutOfRangeError(
                "too large to record",
                payment=paysdk.VerifiedPayment(
                    reference="r", amount=2**64, currency="NGN", success=True
                ),
            ),
            200,
            "amount_out_of_range",
        ),
    ],
)
def test_the_rest_of_the_table(error: paysdk.PaySDKError, status: int, word: str) -> None:
    response = callback_response(error)
    assert (response.status_code, response.status) == (status, word)


@pytest.mark.parametrize(
    ("outcome", "answer"),
    [
        (Outcome.FULFILLED, None),
        (Outcome.ALREADY_FULFILLED, CallbackResponse(200, "already_fulfilled")),
        (Outcome.IN_PROGRESS, CallbackResponse(503, "in_progress")),
        (Outcome.UNKNOWN, CallbackResponse(503, "unknown")),
    ],
)
def test_a_fulfilment_is_answered_by_its_outcome(
    outcome: Outcome, answer: CallbackResponse | None
) -> None:
    assert fulfilment_response(FulfilResult(outcome, "order-1")) == answer


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ({"Retry-After": "30"}, "30"),
        ({"Retry-After": "0"}, "0"),
        ({"retry-after-ms": "1500"}, "2"),  # whole seconds, never sooner than asked
        ({"Retry-After": "9" * 40}, "1000000000"),  # as long as the client reads any wait
        ({"Retry-After": "soon"}, None),  # not a form RFC 9110 allows: no wait to pass on
        ({}, None),
    ],
)
@pytest.mark.parametrize("status", [429, 503])
def test_a_wait_the_service_asked_for_is_passed_on(
    status: int, headers: dict[str, str], wait: str | None
) -> None:
    error = _core.error_for(REQUEST, answered(httpx.Response(status, headers=headers)), "r")
    response = callback_response(error)
    assert (response.status_code, response.status) == (503, "retry_later")
    assert response.headers == ({} if wait is None else {"Retry-After": wait})


def test_a_failure_with_no_answer_or_of_the_ledger_asks_no_wait() -> None:
    for error in (
        paysdk.APITimeoutError("slow", method="GET", url=BASE_URL),
        LedgerError("the database is down"),
    ):
        assert callback_response(error).headers == {}

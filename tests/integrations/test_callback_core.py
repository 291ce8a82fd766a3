"""The fulfilment rule and the refusals the helpers record, without a framework or I/O."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

import paysdk
from paysdk._core.attempts import LOG_FIELDS
from paysdk.integrations._callback import (
    NotFulfilled,
    Refusal,
    check_answer,
    failed_payment,
    method_response,
    refusal_of,
    unrecorded_refusal,
)
from paysdk.integrations.responses import log_fields

PAID = paysdk.VerifiedPayment(reference="order-1", amount=900, currency="NGN", success=True)


def no_body() -> bytes:
    raise AssertionError("only a refusal's body is read")


NO_KEY: Callable[[str], str] = str
"""The scrub for bodies and payments that hold no key to blot out."""


@pytest.mark.parametrize("status", [None, 200, 201, 204, 301, 303, 399])
def test_a_success_is_passed_on_without_reading_its_body(status: int | None) -> None:
    answer = object()
    assert check_answer(answer, status, no_body, NO_KEY) is answer


@pytest.mark.parametrize("status", [500, 502, 503, 599])
def test_a_server_error_is_not_fulfilled_and_not_a_refusal(status: int) -> None:
    answer = object()
    with pytest.raises(NotFulfilled) as raised:
        check_answer(answer, status, no_body, NO_KEY)
    assert raised.value.response is answer
    assert raised.value.refusal_for(PAID) is None


@pytest.mark.parametrize(
    ("body", "quoted"),
    [
        (b'{"status": "out of stock"}\n', '409: {"status": "out of stock"}'),
        (b"", "409: (empty body)"),
        (b"line\x1b[31m\r\nnext \xff", "409: line\\x1b[31m\\r\\nnext \ufffd"),
        (b"x" * 500, "409: " + "x" * 200 + "..."),
    ],
)
def test_a_refusal_quotes_its_status_and_a_short_printable_body(body: bytes, quoted: str) -> None:
    with pytest.raises(NotFulfilled) as raised:
        check_answer("response", 409, lambda: body, NO_KEY)
    assert raised.value.refusal_for(PAID) == Refusal(PAID, f"the callback view answered {quoted}")


def test_only_payments_the_service_confirmed_are_refusals() -> None:
    failed = paysdk.PaymentFailedError("failed", payment=PAID)
    mismatch = paysdk.PaymentMismatchError(
        "short", payment=PAID, mismatches={"amount": (2500, 900)}
    )
    assert refusal_of(failed, NO_KEY) == Refusal(PAID, "the service reports the payment failed")
    assert refusal_of(mismatch, NO_KEY) == Refusal(
        PAID, "paid, but not for this order: amount 900 instead of 2500"
    )
    long_currency = "N" * 5000  # whatever the service sends, the reason stays recordable
    strange = paysdk.PaymentMismatchError(
        "odd", payment=PAID, mismatches={"currency": ("NGN", long_currency)}
    )
    assert refusal_of(strange, NO_KEY) == Refusal(
        PAID,
        f"paid, but not for this order: currency '{'N' * 64}'... (5,000 characters) "
        "instead of 'NGN'",
    )
    worst = paysdk.PaymentMismatchError(  # escapes of ten characters, ints of 4,300 digits
        "odd",
        payment=PAID,
        mismatches={"amount": (-(10**4299), 10**4299), "currency": ("NGN", "\U0001f600" * 5000)},
    )
    worst_refusal = refusal_of(worst, NO_KEY)
    assert worst_refusal is not None and len(worst_refusal.reason) <= 1000  # as the ledger takes
    kelvin = paysdk.PaymentMismatchError(
        "odd", payment=PAID, mismatches={"currency": ("KES", "\u212aES")}
    )
    assert refusal_of(kelvin, NO_KEY) == Refusal(
        PAID, "paid, but not for this order: currency '\\u212aES' instead of 'KES'"
    )
    swapped = paysdk.PaymentMismatchError(  # another order's payment: no row under its name
        "odd", payment=PAID, mismatches={"reference": ("order-9", PAID.reference)}
    )
    assert refusal_of(swapped, NO_KEY) is None
    unknown = paysdk.UnknownOrderError("not ours", reference="order-9")  # anyone can send it
    assert refusal_of(unknown, NO_KEY) is None
    assert refusal_of(paysdk.InvalidCallbackError("no reference"), NO_KEY) is None
    assert (failed_payment(failed), failed_payment(mismatch)) == (failed, None)


def test_only_get_is_a_callback() -> None:
    assert method_response("GET") is None
    for method in ("HEAD", "POST", "OPTIONS", "get", "G\u0130T", "", "GET "):
        refused = method_response(method)
        assert refused is not None, method
        assert (refused.status_code, refused.body) == (405, {"status": "method_not_allowed"})
        assert refused.headers == {"Allow": "GET"}


def test_a_callbacks_log_line_names_the_reference_asked_about_never_the_services() -> None:
    swapped = paysdk.PaymentMismatchError(  # a confused proxy answered another payment
        "odd", payment=PAID, mismatches={"reference": ("order-9", PAID.reference)}
    )
    fields = log_fields(swapped)
    assert set(fields) == set(LOG_FIELDS)
    assert (fields["paysdk_reference"], fields["paysdk_outcome"]) == (
        "order-9",
        "PaymentMismatchError",
    )
    assert log_fields() == dict.fromkeys(LOG_FIELDS)


def test_a_refusal_the_ledger_could_not_record_is_logged_with_its_reference_visible(
    caplog: pytest.LogCaptureFixture,
) -> None:
    down = paysdk.LedgerError("the ledger's database is unreachable")
    with caplog.at_level(logging.ERROR, logger="paysdk.callbacks"):
        unrecorded_refusal("order-\u3164", down)  # a Hangul filler: drawn as nothing
    [record] = caplog.records
    assert record.getMessage() == (
        "could not record the refusal of 'order-\\u3164' in the ledger: "
        "the ledger's database is unreachable"
    )
    assert record.__dict__["paysdk_reference"] == "order-\u3164"  # the field keeps it as it is

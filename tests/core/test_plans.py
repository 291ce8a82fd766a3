"""The plans (call, verify, list, confirm) driven by hand: no client, no transport, no sleeping."""

from __future__ import annotations

import httpx
import pytest

import paysdk
from paysdk import _core
from tests.conftest import (
    BASE_URL,
    SECRET,
    answered,
    failed,
    make_config,
    verify_body,
)

CONFIG = make_config()


def test_a_plan_is_a_conversation_of_sends_and_sleeps() -> None:
    plan = _core.verify(CONFIG, "order-1042")

    first = next(plan)
    assert isinstance(first, _core.Send)
    assert (first.method, first.url) == ("GET", f"{BASE_URL}/payment/order-1042")
    assert first.headers.open()["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in repr(first)

    wait = plan.send(answered(httpx.Response(503)))
    assert isinstance(wait, _core.Sleep)
    assert plan.send(None) == first

    with pytest.raises(StopIteration) as done:
        plan.send(answered(httpx.Response(200, json=verify_body())))
    assert done.value.value.reference == "order-1042"


def test_a_plan_raises_the_error_when_retries_run_out() -> None:
    plan = _core.list_payments(make_config(max_retries=0))
    next(plan)
    with pytest.raises(paysdk.APIConnectionError):
        plan.send(failed(httpx.ConnectError("refused")))


def test_confirm_checks_what_verify_returns() -> None:
    plan = _core.confirm(CONFIG, "order-1042", _core.Expected(amount=999, currency="NGN"))
    next(plan)
    with pytest.raises(paysdk.PaymentMismatchError) as caught:
        plan.send(answered(httpx.Response(200, json=verify_body())))
    assert caught.value.mismatches == {"amount": (999, 250000)}

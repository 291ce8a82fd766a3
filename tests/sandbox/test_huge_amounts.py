"""Amounts past 64 bits in the sandbox: served exactly while JSON can write them, refused when
Python cannot write them as text, leaving the sandbox's payments and its answers unchanged."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

import paysdk
from paysdk.sandbox import PaymentRecord, Sandbox, SeedError

TOO_LONG = 10**5000
"""5001 digits: past the 4300 Python writes as text unless an application raised its limit."""


def test_an_amount_past_64_bits_is_served_and_verified_exactly() -> None:
    with Sandbox() as sb:
        sb.add_payment("order-big", amount=10**30 + 1, fee=2**64 + 3)
        with paysdk.Client(secret_key=sb.secret_key, base_url=sb.base_url) as client:
            payment = client.verify("order-big")
            [listed] = [p for p in client.list_payments() if p.reference == "order-big"]
    assert (payment.amount, payment.fee) == (10**30 + 1, 2**64 + 3)
    assert (listed.amount, listed.fee) == (10**30 + 1, 2**64 + 3)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"amount": TOO_LONG}, "amount"),
        ({"fee": TOO_LONG}, "fee"),
        ({"products": [{"name": "a", "amount": -TOO_LONG, "description": "b"}]}, "products[0]"),
    ],
    ids=["amount", "fee", "product-amount"],
)
def test_an_amount_too_long_to_write_is_refused_and_the_sandbox_answers_on(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], fields: dict[str, Any], field: str
) -> None:
    state = tmp_path / "state.json"
    with Sandbox(state_file=str(state)) as sb:
        with pytest.raises(SeedError, match=re.escape(f"{field}")) as caught:
            sb.add_payment("order-huge", **fields)
        with pytest.raises(SeedError):
            PaymentRecord("order-huge", **fields)
        assert "at most 4,300 digits" in str(caught.value)
        assert len(str(caught.value)) < 200
        assert sb.get_payment("order-huge") is None
        key = {"Authorization": f"Bearer {sb.secret_key}"}
        with httpx.Client(base_url=sb.base_url, headers=key, trust_env=False) as http:
            assert http.get("/payment/order-huge").status_code == 404
            assert http.get("/payments").status_code == 200
    assert "Traceback" not in capfd.readouterr().err
    assert not state.exists() or "order-huge" not in state.read_text(encoding="utf-8")


def test_an_amount_as_long_as_python_writes_is_served(capfd: pytest.CaptureFixture[str]) -> None:
    longest = 10**4300 - 1
    with Sandbox() as sb:
        sb.add_payment("order-long", amount=longest)
        key = {"Authorization": f"Bearer {sb.secret_key}"}
        with httpx.Client(base_url=sb.base_url, headers=key, trust_env=False) as http:
            answer = http.get("/payment/order-long")
    assert answer.status_code == 200 and answer.json()["data"]["amount"] == longest
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("payment", [7, TOO_LONG], ids=["int", "too-long"])
def test_an_int_given_for_the_payment_is_a_seed_error(payment: int) -> None:
    with Sandbox() as sb, pytest.raises(SeedError, match="a PaymentRecord or a reference, not int"):
        sb.add_payment(payment)  # type: ignore[arg-type]

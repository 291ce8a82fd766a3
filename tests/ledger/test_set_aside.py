"""Refused and ignored payments: recorded with why, never over a fulfilment or a live claim."""

from __future__ import annotations

import pytest

import paysdk
from paysdk.ledger import Ledger, Outcome
from tests.support.either_ledger import MakeLedger, paid

pytestmark = pytest.mark.anyio


async def test_a_refusal_is_recorded_with_its_reason_and_what_was_paid(
    make_ledger: MakeLedger,
) -> None:
    ledger = make_ledger()
    row = await ledger.refuse(paid("order-1", amount=900), "paid 900 for an order of 2500")

    assert (row.state, row.reason, row.amount, row.currency) == (
        "refused",
        "paid 900 for an order of 2500",
        900,
        "NGN",
    )
    assert (row.fulfilled, row._claim_token, row.fulfilled_at) == (False, None, None)
    assert await ledger.row("order-1") == row


async def test_a_bare_reference_can_be_ignored_and_the_reason_rewritten(
    make_ledger: MakeLedger,
) -> None:
    ledger = make_ledger()
    first = await ledger.ignore("ref-from-the-other-shop", "not one of our orders")
    second = await ledger.refuse("ref-from-the-other-shop", "test payment by support")

    assert (first.state, first.reason, first.amount, first.currency) == (
        "ignored",
        "not one of our orders",
        0,
        "",
    )
    assert (second.state, second.reason) == ("refused", "test payment by support")


async def test_a_fulfilled_payment_stays_fulfilled(make_ledger: MakeLedger) -> None:
    ledger = make_ledger()
    await ledger.fulfil_once(paid(), lambda payment: "shipped")

    row = await ledger.refuse(paid(), "changed my mind")

    assert (row.state, row.reason, row.fulfilled) == ("fulfilled", None, True)


async def test_a_refused_payment_is_fulfilled_by_a_later_delivery_that_passes_its_checks(
    make_ledger: MakeLedger,
) -> None:
    ledger = make_ledger()
    shipped: list[paysdk.VerifiedPayment] = []
    await ledger.refuse(paid(), "no such order yet")

    result = await ledger.fulfil_once(paid(), shipped.append)
    again = await ledger.fulfil_once(paid(), shipped.append)

    assert (result.outcome, again.outcome) == (Outcome.FULFILLED, Outcome.ALREADY_FULFILLED)
    assert shipped == [paid()]
    row = await ledger.row("order-1")
    assert row is not None and (row.state, row.attempts) == ("fulfilled", 1)


def test_a_live_claim_is_not_refused_under_its_worker(ledger_url: str) -> None:
    with Ledger(ledger_url) as ledger, Ledger(ledger_url) as other:
        seen = []

        def ship(payment: paysdk.VerifiedPayment) -> str:
            seen.append(other.refuse(payment, "refused while it ships"))
            return "shipped"

        assert ledger.fulfil_once(paid(), ship).fulfilled_now
        row = ledger.row("order-1")

    assert [r.state for r in seen] == ["claimed"]
    assert row is not None and (row.state, row.reason) == ("fulfilled", None)


@pytest.mark.parametrize(
    ("payment", "reason", "error", "problem"),
    [
        ("order-1", "", paysdk.ConfigurationError, "non-empty"),
        ("order-1", "   ", paysdk.ConfigurationError, "non-empty"),
        ("order-1", None, paysdk.ConfigurationError, "non-empty"),
        ("order-1", "x" * 1001, paysdk.ConfigurationError, "at most 1000"),
        (" order-1", "why", paysdk.InvalidReferenceError, "whitespace"),
        (42, "why", paysdk.InvalidReferenceError, "must be a str"),
    ],
)
def test_a_bad_reason_or_reference_is_refused_before_the_database(
    payment: object, reason: object, error: type[Exception], problem: str
) -> None:
    with (
        Ledger("postgresql://nobody@127.0.0.1:1/none", timeout=1) as ledger,
        pytest.raises(error, match=problem),
    ):
        ledger.refuse(payment, reason)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "stored"),
    [("NGN\x00", "NGN\\x00"), ("NG\udc9b", "NG\\udc9b")],
    ids=["nul", "surrogate"],
)
async def test_text_no_database_can_store_is_recorded_as_escapes_on_every_database(
    make_ledger: MakeLedger, given: str, stored: str
) -> None:
    """A NUL (which PostgreSQL's text refuses) or a lone surrogate (which no UTF-8 column holds)
    in a currency the service sent or a reason the merchant wrote is recorded as its escape, on
    SQLite and PostgreSQL alike: never a bare UnicodeEncodeError, nor a LedgerError that reads
    as an outage a retry could end."""
    ledger = make_ledger()
    refused = await ledger.refuse(paid("order-1", currency=given), f"customer {given}")
    assert (refused.state, refused.currency, refused.reason) == (
        "refused",
        stored,
        f"customer {stored}",
    )
    result = await ledger.fulfil_once(paid("order-2", currency=given), lambda payment: "ok")
    assert result.fulfilled_now
    row = await ledger.row("order-2")
    assert row is not None and (row.state, row.currency) == ("fulfilled", stored)

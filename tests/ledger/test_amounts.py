"""Amounts the service may send, however large: each ledger (sync, async, on either engine, and
Django's) on SQLite and PostgreSQL records one exactly, or refuses it for good before any
statement, never with a bare ``OverflowError`` or a ``LedgerError`` that invites a retry."""

from __future__ import annotations

import pytest

import paysdk
from paysdk.ledger import AmountOutOfRangeError, LedgerError
from tests.support.either_ledger import MakeLedger, paid

pytestmark = pytest.mark.anyio

LARGEST, SMALLEST = 2**63 - 1, -(2**63)
"""What SQLite's INTEGER and PostgreSQL's bigint hold, at either end."""

BEYOND = [
    pytest.param(2**63, id="one-past-the-largest"),
    pytest.param(SMALLEST - 1, id="one-below-the-smallest"),
    pytest.param(2**64 + 7, id="past-unsigned-64-bits"),
    pytest.param(10**40, id="forty-digits"),
    pytest.param(-(10**400), id="four-hundred-digits"),
]


async def test_the_largest_and_smallest_amounts_are_stored_exactly(
    make_ledger: MakeLedger,
) -> None:
    ledger = make_ledger()
    for reference, amount in (("order-max", LARGEST), ("order-min", SMALLEST)):
        assert (await ledger.fulfil_once(paid(reference, amount), lambda p: None)).fulfilled_now
        row = await ledger.row(reference)
        assert row is not None and (row.state, row.amount) == ("fulfilled", amount)


@pytest.mark.parametrize("amount", BEYOND)
async def test_an_amount_beyond_64_bits_is_refused_for_good_and_nothing_runs(
    make_ledger: MakeLedger, amount: int
) -> None:
    ledger = make_ledger()
    shipped: list[paysdk.VerifiedPayment] = []
    for _ in range(2):  # a retry meets the same refusal: it is no outage
        with pytest.raises(AmountOutOfRangeError, match="beyond what the ledger can record") as e:
            await ledger.fulfil_once(paid("order-big", amount), shipped.append)
        assert not isinstance(e.value, LedgerError)
        assert isinstance(e.value, paysdk.PaySDKError)
        assert e.value.payment.amount == amount
        assert e.value.reference == "order-big"
    assert shipped == []
    assert await ledger.row("order-big") is None


@pytest.mark.parametrize("amount", BEYOND)
async def test_a_refusal_of_an_amount_beyond_64_bits_is_recorded_saying_what_it_was(
    make_ledger: MakeLedger, amount: int
) -> None:
    ledger = make_ledger()
    row = await ledger.refuse(paid("order-big", amount, "USD"), "paid more than the order")
    assert (row.state, row.amount, row.currency) == ("refused", 0, "USD")
    assert row.reason is not None
    assert row.reason.startswith("paid more than the order (its amount, ")
    assert "beyond what the ledger records: stored as 0" in row.reason
    assert (str(amount) if abs(amount) < 10**100 else "integer of 1329 bits") in row.reason
    ignored = await ledger.ignore(paid("order-big-2", amount), "not ours")
    assert (ignored.state, ignored.amount) == ("ignored", 0)
    assert await ledger.row("order-big") == row

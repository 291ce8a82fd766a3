"""Listing the ledger's rows a page at a time, of one state or all, in reference order."""

from __future__ import annotations

import asyncio

import pytest

import paysdk
from paysdk.ledger import STATES
from tests.support.either_ledger import MakeLedger, paid
from tests.support.ledger_worker import abandon_claim

pytestmark = pytest.mark.anyio


async def test_pages_walk_every_row_in_reference_order_and_filter_by_state(
    make_ledger: MakeLedger, ledger_url: str
) -> None:
    ledger = make_ledger()
    for number in range(7):
        await ledger.fulfil_once(paid(f"order-{number}"), lambda payment: None)
    await ledger.refuse("order-r", "underpaid")
    await ledger.ignore("order-i", "not ours")
    abandon_claim(ledger_url, "order-u", lease=0.1)  # its worker died mid-action
    abandon_claim(ledger_url, "order-c", lease=60)  # a worker on it now
    await asyncio.sleep(0.3)

    pages: list[list[str]] = []
    after = ""
    while page := await ledger.rows_after(after, 3):
        pages.append([row.reference for row in page])
        after = page[-1].reference
    assert [len(page) for page in pages] == [3, 3, 3, 2]
    every = [reference for page in pages for reference in page]
    assert every == sorted(every) and len(every) == 11

    def of(state: str) -> list[str]:
        return [row.reference for row in rows[state]]

    rows = {state: await ledger.rows_after(state=state) for state in STATES}
    assert of("fulfilled") == [f"order-{number}" for number in range(7)]
    assert (of("refused"), of("ignored")) == (["order-r"], ["order-i"])
    assert (of("unknown"), of("claimed"), of("released")) == (["order-u"], ["order-c"], [])
    assert rows["refused"][0].reason == "underpaid"
    assert await ledger.rows_after("order-3", 2, state="fulfilled") == rows["fulfilled"][4:6]


async def test_an_unknown_state_is_a_configuration_error_that_lists_them(
    make_ledger: MakeLedger,
) -> None:
    ledger = make_ledger()
    with pytest.raises(paysdk.ConfigurationError, match="claimed, fulfilled, released, refused"):
        await ledger.rows_after(state="shipped")
    with pytest.raises(paysdk.ConfigurationError, match=r"unknown state 'refus\\u0435d'"):
        await ledger.rows_after(state="refus\u0435d")  # a Cyrillic e, shown as an escape
    with pytest.raises(paysdk.ConfigurationError, match="positive int"):
        await ledger.rows_after(limit=0)


async def test_a_limit_past_the_databases_integers_is_no_limit(make_ledger: MakeLedger) -> None:
    ledger = make_ledger()
    await ledger.fulfil_once(paid("order-1"), lambda payment: None)
    for limit in (2**63, 2**70):
        assert [row.reference for row in await ledger.rows_after(limit=limit)] == ["order-1"]


@pytest.mark.parametrize("after", [None, 5, b"order-0"])
async def test_a_page_after_something_that_is_no_reference_is_refused(
    make_ledger: MakeLedger, after: object
) -> None:
    """``after=None`` (the first page, as a loop written ``after = None`` asks for it) would
    compare every reference with NULL, and list nothing, as if the ledger were empty."""
    ledger = make_ledger()
    await ledger.fulfil_once(paid("order-1"), lambda payment: None)
    with pytest.raises(paysdk.ConfigurationError, match=r"after must be a reference.*\"\""):
        await ledger.rows_after(after, 10)  # type: ignore[arg-type]
    assert [row.reference for row in await ledger.rows_after("", 10)] == ["order-1"]


@pytest.mark.parametrize("after", ["order-0\x00", "\x00", "order-\udc9b", "\ud800"])
async def test_a_page_after_what_no_reference_holds_is_refused_on_every_database(
    make_ledger: MakeLedger, after: str
) -> None:
    """A NUL or a lone surrogate is in no reference, so ``after`` holding one is no page's last
    reference: refused alike on every database, where PostgreSQL raised a LedgerError for the
    NUL, SQLite answered the rows after it, and both a bare UnicodeEncodeError for a surrogate."""
    ledger = make_ledger()
    await ledger.fulfil_once(paid("order-1"), lambda payment: None)
    with pytest.raises(paysdk.ConfigurationError, match="NUL or a lone surrogate"):
        await ledger.rows_after(after, 10)
    assert [row.reference for row in await ledger.rows_after("order-0", 10)] == ["order-1"]

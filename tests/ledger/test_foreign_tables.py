"""A ledger given the name of a table that is not a ledger's (the app's own ``orders``, a name
mistyped into another table's): on SQLite and PostgreSQL, each ledger leaves it as it is."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest

import paysdk
from paysdk.ledger import LedgerError
from tests.support.either_ledger import MakeLedger, paid

pytestmark = pytest.mark.anyio

ORDERS = "CREATE TABLE orders (id INTEGER PRIMARY KEY, reference TEXT NOT NULL UNIQUE, amount INT)"


def run(url: str, *statements: str) -> list[tuple[object, ...]]:
    """Run ``statements`` on the test's database, outside the ledger, each committed; the last
    one's rows."""
    found: list[tuple[object, ...]] = []
    if url.startswith("sqlite:///"):
        with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as connection:
            connection.isolation_level = None
            for sql in statements:
                found = [tuple(row) for row in connection.execute(sql)]
        return found
    import psycopg

    with psycopg.connect(url, autocommit=True) as server:
        for sql in statements:
            cursor = server.execute(sql)
            found = list(cursor.fetchall()) if cursor.description else []
    return found


def shape(url: str) -> list[tuple[object, ...]]:
    """Every column and index of the test's database's ``orders``, and its rows."""
    schema = (
        "SELECT type, name, sql FROM sqlite_master ORDER BY name"
        if url.startswith("sqlite:///")
        else "SELECT 'column', column_name, data_type FROM information_schema.columns WHERE "
        "table_name = 'orders' UNION ALL SELECT 'index', indexname, indexdef FROM pg_indexes "
        "WHERE tablename = 'orders' ORDER BY 1, 2"
    )
    return [*run(url, schema), *run(url, "SELECT * FROM orders ORDER BY id")]


async def test_a_table_of_the_name_that_is_not_a_ledgers_is_neither_changed_nor_used(
    make_ledger: MakeLedger, ledger_url: str
) -> None:
    """Opening a table made before accounts migrates it (a column added, its primary key swapped);
    a table that never was a ledger's must not be "migrated" so: on PostgreSQL the app's
    ``orders`` lost its primary key. It is refused, saying why, and no action runs."""
    run(ledger_url, ORDERS, "INSERT INTO orders VALUES (1, 'order-1', 5)")
    before = shape(ledger_url)
    shipped: list[paysdk.VerifiedPayment] = []

    with pytest.raises(LedgerError, match=r"'orders' is not the ledger's") as raised:
        await make_ledger(table="orders").fulfil_once(paid(), shipped.append)

    assert "table= name of its own" in str(raised.value)
    assert shipped == []
    assert shape(ledger_url) == before

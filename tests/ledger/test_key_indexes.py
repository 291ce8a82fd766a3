"""The key check at scale: a platform's ledger holding thousands of account labels.

Every fulfilment checks that its key's rows are held under no other label
(``_statements.key_rows``): its plan reads index entries alone, none of them one a label, on SQLite
and PostgreSQL. A table made by an earlier ledger gains the index when a ledger opens it, and never
with ``create_table=False``. Plans and index lists are pinned here, never a time.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import pytest

from paysdk.ledger import Ledger, _schema, _statements
from tests.ledger.test_accounts import of

LABELS = 3000
TABLE = _schema.DEFAULT_TABLE


def _database(url: str, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
    """``sql`` (``?`` placeholders) run on the database ``url`` names; its rows."""
    if url.startswith("sqlite:///"):
        connection = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            with connection:
                return connection.execute(sql, params).fetchall()
        finally:
            connection.close()
    import psycopg

    with psycopg.connect(url, autocommit=True) as server:
        cursor = server.execute(sql.replace("?", "%s"), params)
        return cursor.fetchall() if cursor.description else []


def _many_labels(url: str) -> None:
    """A ledger of ``LABELS`` accounts, each of its own key, with its statistics gathered."""
    with Ledger(url) as ledger:
        ledger.create_table()
    rows = [(f"acct-{n:04d}", f"key-{n:04d}") for n in range(LABELS)]
    insert = (
        "INSERT INTO paysdk_fulfilments (account, reference, state, attempts, amount, currency, "
        "claimed_at, verified_by) VALUES (?, 'order-1', 'fulfilled', 1, 100, 'NGN', "
        "'2026-11-01T10:00:00.000000Z', ?)"
    )
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as connection:
            connection.executemany(insert, rows)
            connection.execute("ANALYZE")
        connection.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as server, server.cursor() as cursor:
        cursor.executemany(insert.replace("?", "%s"), rows)
        cursor.execute(f"ANALYZE {TABLE}")


def _plan(url: str, sql: str, params: Sequence[object]) -> str:
    """The database's plan for ``sql``, as text."""
    if url.startswith("sqlite:///"):
        steps = _database(url, "EXPLAIN QUERY PLAN " + sql, params)
        return "\n".join(str(step[-1]) for step in steps)
    lines = _database(url, "EXPLAIN (COSTS OFF) " + sql, params)
    return "\n".join(str(line[0]) for line in lines)


def _indexes(url: str) -> set[str]:
    """The names of the ledger table's indexes (its primary key's left out)."""
    if url.startswith("sqlite:///"):
        found = _database(url, "SELECT name FROM pragma_index_list(?) WHERE origin = 'c'", [TABLE])
    else:
        found = _database(
            url,
            "SELECT indexname FROM pg_indexes WHERE tablename = ? AND indexname NOT LIKE ?",
            [TABLE, "%pkey"],
        )
    return {str(name) for (name,) in found}


def test_a_keys_check_reads_a_few_index_entries_however_many_labels(ledger_url: str) -> None:
    """With 3,000 labels, the check of one key's rows (every fulfilment's) reads the key's
    entries of the index by key and the unlabelled ones of the index by account: no walk of the
    labels, no scan of the table."""
    _many_labels(ledger_url)
    account, key = "acct-0100", "key-0100"
    plan = _plan(ledger_url, _statements.key_rows(TABLE), [account, key, "order-2", key, key])
    for walk in ("labels", "Recursive", "Seq Scan", f"SCAN {TABLE}", "Hash"):
        assert walk not in plan, plan
    assert f"{TABLE}_by_key" in plan and f"{TABLE}_verified_by" in plan, plan
    with Ledger(ledger_url) as ledger:
        assert ledger.fulfil_once(of(account, key, "order-2"), lambda p: None).fulfilled_now
        with pytest.raises(Exception, match="under account 'acct-0100'"):
            ledger.fulfil_once(of("acct-0101", key, "order-3"), lambda p: None)


def test_a_table_an_earlier_ledger_made_gains_the_index_by_key_when_a_ledger_opens_it(
    ledger_url: str,
) -> None:
    """A table made with the index by account alone (an earlier ledger's) gains the index by
    key on the next ledger's first use; with ``create_table=False`` it is never touched."""
    with Ledger(ledger_url) as ledger:
        ledger.create_table()
    made = {f"{TABLE}_verified_by", f"{TABLE}_by_key"}
    assert _indexes(ledger_url) == made
    _database(ledger_url, f"DROP INDEX {TABLE}_by_key")
    with Ledger(ledger_url, create_table=False) as untouched:
        assert untouched.fulfil_once(of("lagos-1", "key-a"), lambda p: None).fulfilled_now
    assert _indexes(ledger_url) == {f"{TABLE}_verified_by"}
    with Ledger(ledger_url) as opened:
        assert opened.fulfil_once(of("lagos-1", "key-a"), lambda p: None).already_fulfilled
    assert _indexes(ledger_url) == made


def test_a_label_holding_rows_of_its_own_is_checked_without_walking_the_labels(
    postgres_url: str,
) -> None:
    """A bare reference's label is checked against labels in another case only where it holds
    no other row: the walk of every label runs for a new or mistyped label alone."""
    from tests.support.postgres import fresh_database

    url = fresh_database(postgres_url)
    _many_labels(url)
    explain = "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + _statements.label_rows(
        _schema.POSTGRES, TABLE
    )
    for label, walked in (("acct-0100", False), ("Acct-0100", True)):
        plan = "\n".join(
            str(line[0]) for line in _database(url, explain, [label, "order-2", label, label])
        )
        assert ("Recursive Union (never executed)" in plan) is not walked, plan

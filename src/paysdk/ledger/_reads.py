"""The ledger's rows read, I/O-free: a page of one account's rows (``paysdk ledger list``), the rows
of given references, and what reconcile compares of them. Each is a plan of steps (``_steps``) for
its one driver (``_async/run.py``), in a read transaction of its own; its SQL: ``_statements``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import _statements
from ._checks import stored_as_is
from ._rows import FOUND_COLUMNS, ROW_COLUMNS, LedgerRow, checked
from ._schema import Dialect
from ._steps import Begin, Commit, Found, LedgerPlan, Query, Rows


def read(sql: str, params: Sequence[object] = ()) -> LedgerPlan[Rows]:
    """One statement's rows, in a read transaction of its own (which waits for no writer)."""
    yield Begin(write=False)
    found: Rows = yield Query(sql, params)
    yield Commit()
    return found


def rows_for(
    dialect: Dialect, table: str, references: Sequence[str], account: str = ""
) -> LedgerPlan[dict[str, LedgerRow]]:
    """The rows of these references of one account (those that have one), in one query."""
    found = yield from _select_many(dialect, table, references, account, _statements.row(dialect))
    return {row.reference: row for row in map(LedgerRow._from_db, found)}


def found_for(
    dialect: Dialect, table: str, references: Sequence[str], account: str = ""
) -> LedgerPlan[dict[str, Found]]:
    """What reconcile compares of the rows of these references of one account, in one query; a
    row edited by hand into what the ledger never writes is a LedgerError (``checked``)."""
    found = yield from _select_many(dialect, table, references, account, _statements.found(dialect))
    return {row[0]: Found._make(checked(row, FOUND_COLUMNS)) for row in found}


def _select_many(
    dialect: Dialect, table: str, references: Sequence[str], account: str, columns: str
) -> LedgerPlan[list[tuple[Any, ...]]]:
    """The ``columns`` of these references' rows; no query for none. One no database holds as it
    is (``stored_as_is``: PostgreSQL refuses a NUL, no UTF-8 has a surrogate) is not asked for."""
    references = [reference for reference in references if stored_as_is(reference)]
    if not references:
        return []
    # one array parameter where the database takes one; else a statement each MOST_MARKS, in one
    # read transaction: SQLite refuses a statement of more parameters (SQLITE_MAX_VARIABLE_NUMBER)
    most = len(references) if dialect.arrays else _statements.MOST_MARKS
    rows: list[tuple[Any, ...]] = []
    yield Begin(write=False)
    for start in range(0, len(references), most):
        chunk = references[start : start + most]
        found: Rows = yield Query(*_statements.select_many(dialect, table, account, chunk, columns))
        rows += found.rows
    yield Commit()
    return rows


def rows_after(
    dialect: Dialect, table: str, after: str, limit: int, state: str | None, account: str = ""
) -> LedgerPlan[list[LedgerRow]]:
    """The next page of one account's rows (of ``state``, or all) after ``after``, in order."""
    found = yield from read(*_statements.rows_page(dialect, table, account, state, after, limit))
    return [LedgerRow._from_db(row) for row in found.rows]


def fulfilled_references_after(
    table: str, after: str, limit: int, account: str = ""
) -> LedgerPlan[list[str]]:
    """The next page of one account's fulfilled references after ``after``, in order."""
    found = yield from read(_statements.fulfilled_references_page(table), (account, after, limit))
    return [checked(row, ROW_COLUMNS[:1])[0] for row in found.rows]

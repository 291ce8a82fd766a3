"""The ledger's table made ready, I/O-free: created if it does not exist, one made before accounts
were part of a fulfilment's key migrated, and the key indexes an earlier ledger did not make added.
Each is a plan of steps (``_steps``) for its one driver (``_async/run.py``); SQL: ``_schema``."""

from __future__ import annotations

from . import _schema
from ._errors import LedgerError
from ._steps import Begin, Commit, LedgerPlan, Query, Rows


def ensure_schema(dialect: _schema.Dialect, table: str) -> LedgerPlan[None]:
    """Create the table if it does not exist; migrate one made before accounts were part of a
    fulfilment's key, in the same transaction, keeping every row (as the account ``''``)."""
    yield Begin()
    *lock, create = dialect.schema(table)
    for statement in lock:
        yield Query(statement)
    visible = dialect.visible()
    seen: Rows | None = None if visible is None else (yield Query(visible, (table,)))
    if seen is None or not seen.rows[0][0]:  # never a table hiding the one the path finds
        yield Query(create)
    found: Rows = yield Query(*_schema.table_columns(dialect, table))
    held = {str(name) for (name,) in found.rows}
    lacking = [name for name in _schema.OLD_COLUMNS.split(", ") if name not in held]
    if lacking:  # another table of the name: neither migrated nor used (rolled back)
        raise LedgerError(
            f"the table {table!r} is not the ledger's (it lacks the columns "
            f"{', '.join(lacking)}), so the ledger leaves it as it is and fulfils nothing: give "
            "the ledger a table= name of its own (or drop a table made by mistake)"
        )
    if "account" not in held:
        yield from add_account(dialect, table)  # which makes the key indexes
    else:
        yield from key_indexes(dialect, table)
    yield Commit()


def add_account(dialect: _schema.Dialect, table: str) -> LedgerPlan[None]:
    """Key the table by (account, reference): SQLite rebuilds it (every row copied before the old
    table goes), PostgreSQL adds the column and swaps the primary key."""
    if dialect.name == "postgresql":
        add, find_key = _schema.postgres_add_account(table)
        yield Query(add)
        keys: Rows = yield Query(find_key, (table,))
        for statement in _schema.postgres_swap_key(table, str(keys.rows[0][0])):
            yield Query(statement)
    else:
        new, build, count = _schema.sqlite_rebuild(dialect, table)
        for statement in build:
            yield Query(statement)
        copied: Rows = yield Query(count)
        kept: Rows = yield Query(_schema.count_rows(table))
        if copied.rows[0][0] != kept.rows[0][0]:
            raise LedgerError(
                f"migrating the ledger's table {table!r} to accounts copied {copied.rows[0][0]} "
                f"of its {kept.rows[0][0]} rows; nothing was changed"
            )
        for statement in _schema.sqlite_swap(table, new):
            yield Query(statement)
    yield from key_indexes(dialect, table)


def key_indexes(dialect: _schema.Dialect, table: str) -> LedgerPlan[None]:
    """Make the indexes a key's check reads (``_schema.key_indexes``) that the table lacks: a table
    made by an earlier ledger gains them when a ledger opens it."""
    for index, make in _schema.key_indexes(dialect, table):
        if dialect.name == "postgresql":  # never CREATE INDEX on a table this role does not own
            missing: Rows = yield Query(_schema.INDEX_MISSING, (index, table))
            if missing.rows and not missing.rows[0][0]:
                continue
        yield Query(make)

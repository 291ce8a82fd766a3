"""The ledger's driver (its shell: ``.._django``) on the calling thread's connection to Django's
database, SQLite or PostgreSQL. Each transaction is an ``atomic`` block of its own, committed
before the action runs and after; one inside the merchant's is refused (``DjangoDriver.begin``).
Waits are bounded by the ledger's timeout: ``SET LOCAL`` on PostgreSQL; on SQLite, the ledger's
``busy_timeout`` for the transaction (then Django's again)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from typing import Any

from django.db import DatabaseError, InterfaceError, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from ..._errors import ConfigurationError
from .. import _schema
from .._errors import LedgerError, frameless
from .._steps import Rows
from .driver import Connection
from .postgres import ISOLATION, libpq_options, local_timeouts, postgres_error
from .sqlite import sqlite_error

__all__ = ["DIALECTS", "DjangoDriver", "run_statement"]

DIALECTS = {"sqlite": _schema.SQLITE_FORMAT, "postgresql": _schema.POSTGRES}
"""Django's cursors take the "format" parameter style (``%s``, ``%%``) on every database."""
_DJANGO_ERRORS = (DatabaseError, InterfaceError)


class _Abandoned(Exception):
    """Handed to ``Atomic.__exit__`` so that it rolls the ledger's transaction back."""


class _DjangoTransaction:
    """One ``transaction.atomic`` block on Django's connection, entered and left by hand, since
    the plan's steps (begin, statements, commit) arrive one at a time."""

    def __init__(self, driver: DjangoDriver, wrapper: BaseDatabaseWrapper) -> None:
        self.driver = driver
        self.wrapper = wrapper
        self.atomic = transaction.atomic(using=driver.using)
        self.open = False
        self.failed = False
        self.busy_timeout: int | None = None
        """Django's SQLite busy timeout (ms), set back when the transaction ends."""

    def enter(self) -> None:
        try:
            if self.driver.dialect is _schema.SQLITE_FORMAT:
                self.busy_timeout = int(self._pragma("PRAGMA busy_timeout")[0][0])
                self._pragma(f"PRAGMA busy_timeout = {max(1, round(self.driver.timeout * 1000))}")
            self.atomic.__enter__()
            self.open = True
            if self.driver.dialect is _schema.POSTGRES:
                options = libpq_options(self.wrapper.connection)
                timeouts = local_timeouts(self.driver.timeout, options)
                for statement in [f"SET TRANSACTION {ISOLATION}", *timeouts]:
                    run_statement(self.wrapper, statement)
        except _DJANGO_ERRORS as exc:
            self.rollback()
            self.driver.done(self)
            raise self.driver.error(exc) from exc

    def _pragma(self, statement: str) -> list[tuple[Any, ...]]:
        return run_statement(self.wrapper, statement).rows

    def execute(self, sql: str, params: Sequence[object]) -> Rows:
        try:
            return run_statement(self.wrapper, sql, params)
        except _DJANGO_ERRORS as exc:
            raise self.driver.error(exc) from exc

    def commit(self) -> None:
        self.open = False
        try:
            self.atomic.__exit__(None, None, None)  # commits; on failure rolls back and raises
        except _DJANGO_ERRORS as exc:
            self.failed = True
            raise self.driver.error(exc) from exc

    def rollback(self) -> None:
        """Roll back if still open; Django closes a connection that cannot roll back."""
        self.failed = True
        if self.open:
            self.open = False
            with contextlib.suppress(*_DJANGO_ERRORS):
                self.atomic.__exit__(_Abandoned, _Abandoned(), None)


def run_statement(
    wrapper: BaseDatabaseWrapper, sql: str, params: Sequence[object] | None = None
) -> Rows:
    """Run one statement through Django's cursor (its error wrapping, its query log)."""
    cursor: Any = wrapper.cursor()
    try:
        if params is None:  # no parameters: the text goes as it is (no % placeholders read)
            cursor.execute(sql)
        else:
            cursor.execute(sql, params)
        rows = list(cursor.fetchall()) if cursor.description is not None else []
        return Rows(rows, int(cursor.rowcount))
    finally:
        cursor.close()


class DjangoDriver:
    """Transactions on ``django.db.connections[using]``, one ``transaction.atomic`` each."""

    def __init__(self, using: str, *, timeout: float) -> None:
        self.using = using
        self.timeout = timeout
        self.dialect = DIALECTS[connections[using].vendor]

    def begin(self, write: bool = True) -> Connection:
        """A transaction of the ledger's own on the calling thread's connection (``write``
        unused: a claim's first statement takes SQLite's write lock, and PostgreSQL locks rows);
        ConfigurationError inside the merchant's own transaction."""
        wrapper = connections[self.using]
        if wrapper.in_atomic_block:
            raise ConfigurationError(
                f"DjangoLedger cannot run inside transaction.atomic (database {self.using!r}): "
                "it commits its claim before the action runs, and the merchant's transaction "
                "would commit or roll back that claim with its own work; call it outside any "
                "atomic block (with ATOMIC_REQUESTS, decorate the callback view with "
                "@transaction.non_atomic_requests; in tests, django.test.TestCase runs each test "
                "inside one: use TransactionTestCase, or pytest-django's "
                "django_db(transaction=True))"
            )
        kept = wrapper.connection  # before get_autocommit, which connects if there is none
        try:
            autocommit = wrapper.get_autocommit()
        except _DJANGO_ERRORS as exc:  # it connects: the frames of that hold the password
            raise self.error(exc) from frameless(exc)
        if not autocommit:
            raise ConfigurationError(
                f"DjangoLedger needs Django's database {self.using!r} in autocommit mode (its "
                "default): with autocommit off, its commits would commit the merchant's work too"
            )
        opened = _DjangoTransaction(self, wrapper)
        try:
            opened.enter()
        except LedgerError:
            if kept is None or wrapper.connection is not None:  # a new one failed, or no break
                raise
            # kept by Django between calls and dropped by the server meanwhile (a restart, a
            # failover): closed as broken by ``done``, so once more on a new one, as the
            # ledger's own drivers do; nothing of the ledger's had run on it
            opened = _DjangoTransaction(self, wrapper)
            opened.enter()
        return opened

    def done(self, connection: Connection) -> None:
        """Set SQLite's busy timeout back; after a failure, close a connection that broke, so
        that the next transaction (a retried record, say) opens a new one."""
        assert isinstance(connection, _DjangoTransaction)
        wrapper = connection.wrapper
        with contextlib.suppress(*_DJANGO_ERRORS):
            if connection.busy_timeout is not None and wrapper.connection is not None:
                connection._pragma(f"PRAGMA busy_timeout = {connection.busy_timeout}")
            if connection.failed:
                wrapper.close_if_unusable_or_obsolete()

    def close(self) -> None:
        """Nothing to close: the connections are Django's."""

    def error(self, exc: Exception) -> LedgerError:
        """The ledger's error for one of ``django.db``'s, from what the database driver raised
        (its ``__cause__``): the same words as the ledger's own drivers, naming the database."""
        cause = exc.__cause__ or exc
        if isinstance(cause, sqlite3.Error):
            name = str(connections[self.using].settings_dict.get("NAME", ""))
            found = sqlite_error(cause, name, self.timeout)
        elif isinstance(cause, Exception) and type(cause).__module__.split(".")[0] == "psycopg":
            options = libpq_options(connections[self.using].connection)
            found = postgres_error(cause, self.timeout, options=options)
        else:
            found = LedgerError(f"the ledger failed: {' '.join(str(cause).split())}")
        said = str(cause)
        unmade = not _schema.before_accounts(said) and any(
            words in said for words in ("no such table", "does not exist")
        )
        hint = "; has `manage.py migrate` created the ledger's table?" if unmade else ""
        return LedgerError(f"{found} (on Django's database {self.using!r}){hint}")

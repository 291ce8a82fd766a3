"""The fulfilment ledger in the app's own database, through its SQLAlchemy engine.

    from paysdk.ledger.sqlalchemy import SQLAlchemyLedger, ledger_table

    ledger = SQLAlchemyLedger(engine)           # Flask; AsyncSQLAlchemyLedger(async_engine)
    ledger_table(Base.metadata)                 # the table in the app's own metadata

The same claims, leases, refusals and reconciliation as `paysdk.Ledger` (the very same
plans), on connections from the app's engine: SQLite (``sqlite:///``, ``sqlite+aiosqlite:///``)
or PostgreSQL through psycopg 3 (``postgresql+psycopg://``). Needs the ``sqlalchemy`` extra
(``pip install 'python-paysdk[sqlalchemy]'``); see [Fulfilment](fulfilment.md).
"""

from __future__ import annotations

import datetime as dt
import sys
from typing import TYPE_CHECKING

try:
    import sqlalchemy
except ModuleNotFoundError as _missing:  # pragma: no cover - the extra installs it
    raise ModuleNotFoundError(
        "paysdk.ledger.sqlalchemy needs 'sqlalchemy', which is not installed: "
        "pip install 'python-paysdk[sqlalchemy]'",
        name=_missing.name,
    ) from None

from .._errors import ConfigurationError
from . import _checks
from ._async.ledger import AsyncLedger
from ._base import DEFAULT_LEASE, BaseLedger
from ._databases import alchemy as _alchemy
from ._databases._async.alchemy import AsyncSQLAlchemyDriver
from ._databases._sync.alchemy import SQLAlchemyDriver
from ._databases.driver import AsyncDriver, Driver
from ._schema import DEFAULT_TABLE, KEY_INDEXES, Dialect, index_name
from ._sync.ledger import Ledger

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["AsyncSQLAlchemyLedger", "SQLAlchemyLedger", "ledger_table"]


class _OnEngine(BaseLedger):
    """What both SQLAlchemy ledgers make of the engine they are given: the ledger's SQL for its
    database, and how messages name that database; then what every ledger takes."""

    _dialect: Dialect

    def _take(
        self,
        engine: sqlalchemy.Engine | AsyncEngine,
        *,
        lease: float | dt.timedelta,
        table: str,
        create_table: bool,
        timeout: float,
    ) -> None:
        url, dialect = engine.url, engine.dialect
        self._dialect = _alchemy.dialect_of(url, dialect.name, str(dialect.driver))
        self._where = self._shown = _alchemy.where(url)
        self._backend = self._dialect.name
        self._settle(lease=lease, table=table, create_table=create_table, timeout=timeout)


class SQLAlchemyLedger(_OnEngine, Ledger):
    """A `paysdk.Ledger` whose transactions run on connections from a SQLAlchemy
    ``Engine``: the app's own database and pool (Flask, or any sync app).

    Each transaction checks a connection out of the engine's pool and gives it back once it
    ended; `close` leaves the engine, which is the app's, as it is.
    """

    def __init__(
        self,
        engine: sqlalchemy.Engine,
        *,
        lease: float | dt.timedelta = DEFAULT_LEASE,
        table: str = DEFAULT_TABLE,
        create_table: bool = True,
        timeout: float = 30.0,
    ) -> None:
        """Args:
            engine: the app's engine, on ``sqlite:///`` or ``postgresql+psycopg://``.
            lease: how long a claim holds before it reads as unknown (seconds or timedelta).
            table: the ledger's table (a plain or ``schema.table`` name).
            create_table: create the table on first use; ``False`` when the app's metadata
                (`ledger_table`) or migrations own it.
            timeout: the longest one database wait may take, in seconds: a lock (both), a
                statement on PostgreSQL (twice it); beyond it, LedgerError.

        Raises:
            ConfigurationError: ``engine`` is not an Engine on a database the ledger supports.
        """
        _check_kind(engine, wanted_async=False)
        self.engine = engine
        self._take(engine, lease=lease, table=table, create_table=create_table, timeout=timeout)

    def _open_driver(self) -> Driver:
        return SQLAlchemyDriver(
            self.engine, self._dialect, database=self._where, timeout=self.timeout
        )


class AsyncSQLAlchemyLedger(_OnEngine, AsyncLedger):
    """A `paysdk.AsyncLedger` on connections from a SQLAlchemy ``AsyncEngine``
    (``postgresql+psycopg://`` or ``sqlite+aiosqlite:///``): FastAPI, or any async app."""

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        lease: float | dt.timedelta = DEFAULT_LEASE,
        table: str = DEFAULT_TABLE,
        create_table: bool = True,
        timeout: float = 30.0,
    ) -> None:
        """Args:
            engine: the app's AsyncEngine (``create_async_engine``).
            lease: how long a claim holds before it reads as unknown (seconds or timedelta).
            table: the ledger's table (a plain or ``schema.table`` name).
            create_table: create the table on first use; ``False`` when the app owns it.
            timeout: the longest one database wait may take, in seconds.

        Raises:
            ConfigurationError: ``engine`` is not an AsyncEngine on a supported database.
        """
        _check_kind(engine, wanted_async=True)
        self.engine = engine
        self._take(engine, lease=lease, table=table, create_table=create_table, timeout=timeout)

    def _open_driver(self) -> AsyncDriver:
        return AsyncSQLAlchemyDriver(
            self.engine, self._dialect, database=self._where, timeout=self.timeout
        )


def _check_kind(engine: object, *, wanted_async: bool) -> None:
    """Refuse anything but an engine of the kind wanted; one of the other kind is told which
    ledger takes it."""
    kinds = {False: ("SQLAlchemyLedger", "Engine"), True: ("AsyncSQLAlchemyLedger", "AsyncEngine")}
    # an AsyncEngine has loaded SQLAlchemy's asyncio extension (and greenlet): never load it here
    extension = sys.modules.get("sqlalchemy.ext.asyncio")
    is_async = extension is not None and isinstance(engine, extension.AsyncEngine)
    an_engine = is_async or isinstance(engine, sqlalchemy.Engine)
    if an_engine and is_async is wanted_async:
        return
    ledger, wanted = kinds[wanted_async]
    raise ConfigurationError(
        f"{ledger} needs a sqlalchemy {wanted}, not {type(engine).__name__}"
        + (f": use {kinds[is_async][0]}" if an_engine else "")
    )


def ledger_table(metadata: sqlalchemy.MetaData, name: str = DEFAULT_TABLE) -> sqlalchemy.Table:
    """The ledger's table as SQLAlchemy ``Table`` metadata, column for column what the ledger
    creates itself: add it to the app's metadata for ``create_all`` or Alembic's autogenerate.

    Timestamps are ``TIMESTAMP WITH TIME ZONE`` on PostgreSQL and, on SQLite, ``TEXT`` holding
    UTC ISO 8601 of fixed width, as the ledger writes them.

    Args:
        metadata: the app's ``MetaData`` (``Base.metadata`` with the ORM).
        name: the table's name, as given to the ledger's ``table=`` (``schema.table`` too).

    Returns:
        The table, added to ``metadata``.

    Raises:
        ConfigurationError: ``name`` is not a plain or ``schema.table`` identifier.
    """
    schema, _, table = _checks.check_table(name).rpartition(".")
    timestamp = sqlalchemy.DateTime(timezone=True).with_variant(sqlalchemy.Text(), "sqlite")
    text = sqlalchemy.Text
    return sqlalchemy.Table(
        table,
        metadata,
        sqlalchemy.Column("reference", text, nullable=False),
        sqlalchemy.Column("state", text, nullable=False),
        sqlalchemy.Column("claim_token", text),
        sqlalchemy.Column("attempts", sqlalchemy.Integer, nullable=False),
        sqlalchemy.Column("lease_expires_at", timestamp),
        sqlalchemy.Column("amount", sqlalchemy.BigInteger, nullable=False),
        sqlalchemy.Column("currency", text, nullable=False),
        sqlalchemy.Column("claimed_at", timestamp, nullable=False),
        sqlalchemy.Column("fulfilled_at", timestamp),
        sqlalchemy.Column("last_error", text),
        sqlalchemy.Column("reason", text),
        sqlalchemy.Column("account", text, nullable=False, server_default=sqlalchemy.text("''")),
        sqlalchemy.Column("verified_by", text),
        sqlalchemy.PrimaryKeyConstraint("account", "reference"),
        *(
            sqlalchemy.Index(index_name(table, suffix), *columns)
            for suffix, columns in KEY_INDEXES.items()
        ),
        schema=schema or None,
    )

"""The ledger's driver on a shop's SQLAlchemy AsyncEngine: each transaction on a pooled connection
(``AUTOCOMMIT``: ``alchemy`` says why), given back as the shop left it (``finish``)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import sqlalchemy.exc

from ..._errors import LedgerError, frameless
from ..._schema import SQLITE, Dialect
from ..._steps import Rows
from ..._twins import async_shield
from ..alchemy import DATABASE_ERRORS, async_driver_connection, error, in_transaction
from ..driver import AsyncConnection
from ..postgres import libpq_options, opening

if TYPE_CHECKING:
    from ..alchemy import AsyncEngine, AsyncEngineConnection

__all__ = ["AsyncSQLAlchemyDriver"]

BARE = {"no_parameters": True}
"""Send a statement as it is, with no parameters: psycopg then sends it as one simple query,
which may hold several statements (``BEGIN; SET LOCAL ...``)."""


class AsyncSQLAlchemyDriver:
    """Short transactions on connections from the shop's AsyncEngine."""

    def __init__(
        self,
        engine: AsyncEngine,
        dialect: Dialect,
        *,
        database: str,
        timeout: float,
    ) -> None:
        self.engine = engine
        self.dialect = dialect
        self.database = database
        self.timeout = timeout

    async def begin(self, write: bool = True) -> AsyncConnection:
        """A pooled connection, its transaction begun (a ``write`` one on SQLite takes the write
        lock), or LedgerError. A connection the server dropped is discarded by SQLAlchemy, with
        the rest of its pool, and a new one tried at once."""
        try:
            return await self._begin(write)
        except sqlalchemy.exc.DBAPIError as exc:
            if not exc.connection_invalidated:
                raise self.error(exc) from exc
        try:
            return await self._begin(write)
        except DATABASE_ERRORS as exc:
            raise self.error(exc) from exc

    async def _begin(self, write: bool) -> AsyncSQLAlchemyTransaction:
        try:
            connection = await self.engine.connect()
        except DATABASE_ERRORS as exc:  # the frames of the engine's connect hold the password
            raise self.error(exc) from frameless(exc)
        transaction = AsyncSQLAlchemyTransaction(connection, self)
        try:
            await transaction.open(write)
        except BaseException:
            with async_shield(self.timeout):
                await transaction.finish()
            raise
        return transaction

    async def done(self, connection: AsyncConnection) -> None:
        assert isinstance(connection, AsyncSQLAlchemyTransaction)
        await connection.finish()

    async def close(self) -> None:
        """Nothing to close: the engine and its pool are the shop's."""

    def error(self, exc: Exception, options: str = "") -> LedgerError:
        return error(exc, self.dialect, self.database, self.timeout, options)


class AsyncSQLAlchemyTransaction:
    """One ledger transaction, on one connection checked out of the engine."""

    def __init__(self, connection: AsyncEngineConnection, driver: AsyncSQLAlchemyDriver) -> None:
        self.connection = connection
        self.driver = driver
        self.raw: Any = None
        self.shops_setting: Any = None
        """What the ledger changes for its transaction, as the shop left it: SQLite's busy timeout,
        or psycopg's prepare threshold (nothing is prepared: a pooler may switch connections)."""

    async def open(self, write: bool) -> None:
        """Begin the transaction; what fails is the database's (DBAPIError), left to the caller."""
        await self.connection.execution_options(isolation_level="AUTOCOMMIT")
        self.raw = await async_driver_connection(self.connection)
        if self.driver.dialect is SQLITE:
            busy = await self.connection.exec_driver_sql("PRAGMA busy_timeout", (), BARE)
            self.shops_setting = busy.scalar()
            await self._bare(f"PRAGMA busy_timeout = {round(self.driver.timeout * 1000)}")
            if in_transaction(SQLITE, self.raw):  # the app's "begin" listener said BEGIN
                await self._bare("ROLLBACK")  # (SQLAlchemy's pysqlite recipe): ours is IMMEDIATE
            await self._bare("BEGIN IMMEDIATE" if write else "BEGIN")
        else:
            self.shops_setting = self.raw.prepare_threshold
            self.raw.prepare_threshold = None
            await self._bare(opening(self.driver.timeout, self.raw.info.options or ""))

    async def execute(self, sql: str, params: Sequence[object]) -> Rows:
        try:
            result = await self.connection.exec_driver_sql(sql, tuple(params))
        except DATABASE_ERRORS as exc:
            raise self.driver.error(exc, libpq_options(self.raw)) from exc
        rows = [tuple(row) for row in result.fetchall()] if result.returns_rows else []
        return Rows(rows, result.rowcount)

    async def commit(self) -> None:
        try:
            await self._bare("COMMIT")
        except DATABASE_ERRORS as exc:
            raise self.driver.error(exc, libpq_options(self.raw)) from exc

    async def rollback(self) -> None:
        """Best effort: a connection left in its transaction is invalidated by ``finish``."""
        with contextlib.suppress(sqlalchemy.exc.SQLAlchemyError):
            await self._bare("ROLLBACK")

    async def finish(self) -> None:
        """Give the connection back to the pool as the shop left it; or, still in a transaction
        (its ROLLBACK failed) or not known to be out of one, have SQLAlchemy close it instead."""
        try:
            if self.raw is not None and not self.connection.invalidated:
                if in_transaction(self.driver.dialect, self.raw):
                    await self.connection.invalidate()
                elif self.driver.dialect is not SQLITE:
                    self.raw.prepare_threshold = self.shops_setting
                elif self.shops_setting is not None:
                    await self._bare(f"PRAGMA busy_timeout = {int(self.shops_setting)}")
        except sqlalchemy.exc.SQLAlchemyError:
            with contextlib.suppress(sqlalchemy.exc.SQLAlchemyError):
                await self.connection.invalidate()
        finally:
            await self.connection.close()

    async def _bare(self, sql: str) -> None:
        await self.connection.exec_driver_sql(sql, (), BARE)

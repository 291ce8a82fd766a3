"""The PostgreSQL backend, through psycopg 3: many workers on many machines share one ledger.

Transactions run at READ COMMITTED: the claim is ``INSERT ... ON CONFLICT DO NOTHING`` then a
compare-and-set ``UPDATE``, and PostgreSQL re-checks an UPDATE's condition against the row a
concurrent transaction committed, so exactly one worker wins each claim.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._errors import ConfigurationError
from ._driver import AsyncConnection, Connection, Idle
from ._errors import LedgerError
from ._plans import Rows
from ._sql import POSTGRES

if TYPE_CHECKING:
    import psycopg

__all__ = ["AsyncPostgresDriver", "PostgresDriver"]


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise ConfigurationError(
            "a PostgreSQL ledger needs psycopg: pip install 'python-paysdk[postgres]'"
        ) from None
    return psycopg


def _trusted(sql: str) -> Any:
    """psycopg types queries as LiteralString; ours are constants and a table name checked as
    an identifier (see ``_sql``), so they are passed as such."""
    return sql


class _PgConnection:
    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[object]) -> Rows:
        import psycopg

        try:
            cursor = self.raw.execute(_trusted(sql), list(params))
            rows = cursor.fetchall() if cursor.description is not None else []
            return Rows(rows, cursor.rowcount)
        except psycopg.Error as exc:
            raise _error(exc) from exc

    def commit(self) -> None:
        import psycopg

        try:
            self.raw.commit()
        except psycopg.Error as exc:
            raise _error(exc) from exc

    def rollback(self) -> None:
        """Best effort: a connection that cannot roll back is closed by ``done``, not reused."""
        import psycopg

        with contextlib.suppress(psycopg.Error):
            self.raw.rollback()


class PostgresDriver:
    """Short transactions on pooled psycopg connections."""

    dialect = POSTGRES

    def __init__(self, url: str, *, connect_timeout: float) -> None:
        _psycopg()
        self.url = url
        self.connect_timeout = connect_timeout
        self._idle: Idle[_PgConnection] = Idle()

    def begin(self) -> Connection:
        connection = self._idle.take()
        if connection is not None and not connection.raw.closed:
            return connection
        psycopg = _psycopg()
        try:
            raw = psycopg.connect(self.url, connect_timeout=max(1, round(self.connect_timeout)))
        except psycopg.Error as exc:
            raise _error(exc) from exc
        return _PgConnection(raw)

    def done(self, connection: Connection) -> None:
        assert isinstance(connection, _PgConnection)
        if connection.raw.closed or connection.raw.info.transaction_status != 0:  # not IDLE
            connection.raw.close()
            return
        if not self._idle.give(connection):
            connection.raw.close()

    def close(self) -> None:
        for connection in self._idle.drain():
            connection.raw.close()


class _AsyncPgConnection:
    def __init__(self, raw: psycopg.AsyncConnection[Any]) -> None:
        self.raw = raw

    async def execute(self, sql: str, params: Sequence[object]) -> Rows:
        import psycopg

        try:
            cursor = await self.raw.execute(_trusted(sql), list(params))
            rows = await cursor.fetchall() if cursor.description is not None else []
            return Rows(rows, cursor.rowcount)
        except psycopg.Error as exc:
            raise _error(exc) from exc

    async def commit(self) -> None:
        import psycopg

        try:
            await self.raw.commit()
        except psycopg.Error as exc:
            raise _error(exc) from exc

    async def rollback(self) -> None:
        import psycopg

        with contextlib.suppress(psycopg.Error):
            await self.raw.rollback()


class AsyncPostgresDriver:
    """The same, on psycopg's ``AsyncConnection``."""

    dialect = POSTGRES

    def __init__(self, url: str, *, connect_timeout: float) -> None:
        _psycopg()
        self.url = url
        self.connect_timeout = connect_timeout
        self._idle: Idle[_AsyncPgConnection] = Idle()

    async def begin(self) -> AsyncConnection:
        connection = self._idle.take()
        if connection is not None and not connection.raw.closed:
            return connection
        psycopg = _psycopg()
        try:
            raw = await psycopg.AsyncConnection.connect(
                self.url, connect_timeout=max(1, round(self.connect_timeout))
            )
        except psycopg.Error as exc:
            raise _error(exc) from exc
        return _AsyncPgConnection(raw)

    async def done(self, connection: AsyncConnection) -> None:
        assert isinstance(connection, _AsyncPgConnection)
        if connection.raw.closed or connection.raw.info.transaction_status != 0:
            await connection.raw.close()
            return
        if not self._idle.give(connection):
            await connection.raw.close()

    async def close(self) -> None:
        for connection in self._idle.drain():
            await connection.raw.close()


def _error(exc: Exception) -> LedgerError:
    return LedgerError(f"the PostgreSQL ledger failed: {' '.join(str(exc).split())}")

"""The PostgreSQL driver on pooled psycopg connections; ``..postgres`` says what it sends."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..._errors import LedgerError
from ..._schema import POSTGRES
from ..._steps import Rows
from ..._twins import async_shield
from ..driver import AsyncConnection, Idle
from ..postgres import (
    checked_url,
    client_settings,
    connect_error,
    failing_as_ledger_error,
    load_psycopg,
    opening,
    trusted,
)

if TYPE_CHECKING:
    import psycopg

__all__ = ["AsyncPostgresDriver"]


class AsyncPgConnection:
    def __init__(self, raw: psycopg.AsyncConnection[Any], timeout: float) -> None:
        self.raw = raw
        self.timeout = timeout
        self.options = raw.info.options or ""
        self.opening = opening(timeout, self.options)
        self.broken = False
        """Whether the server dropped it (a restart, a failover), as its failed ``begin`` found."""

    async def begin(self) -> None:
        """Begin a transaction, or close the connection: no caller holds one that failed to begin,
        or was cancelled as it began (closed within the timeout, whatever cancels the caller)."""
        try:
            with failing_as_ledger_error(self.timeout, self.options):
                await self.raw.execute(trusted(self.opening))
        except LedgerError:
            self.broken = self.raw.broken  # before close(), which makes it closed cleanly
            await self.raw.close()
            raise
        except BaseException:
            with async_shield(self.timeout):
                await self.raw.close()
            raise

    async def execute(self, sql: str, params: Sequence[object]) -> Rows:
        with failing_as_ledger_error(self.timeout, self.options):
            cursor = await self.raw.execute(trusted(sql), list(params))
            rows = await cursor.fetchall() if cursor.description is not None else []
            return Rows(rows, cursor.rowcount)

    async def commit(self) -> None:
        with failing_as_ledger_error(self.timeout, self.options):
            await self.raw.commit()

    async def rollback(self) -> None:
        """Best effort: a connection that cannot roll back is closed by ``done``, not reused."""
        with contextlib.suppress(load_psycopg().Error):
            await self.raw.rollback()


class AsyncPostgresDriver:
    """Short transactions on pooled psycopg connections."""

    dialect = POSTGRES

    def __init__(self, url: str, *, timeout: float) -> None:
        self.target = checked_url(url)
        self.url = url
        self.timeout = timeout
        self._idle: Idle[AsyncPgConnection] = Idle()

    async def begin(self, write: bool = True) -> AsyncConnection:
        """A connection, its transaction begun (``write`` unused: rows are locked), or LedgerError.
        An idle connection the server dropped (a restart, a failover) is closed with every other
        idle one, and a new one opened at once."""
        connection = self._idle.take()
        if connection is not None and not connection.raw.closed:
            try:
                await connection.begin()
                return connection
            except LedgerError:
                if not connection.broken:
                    raise
                for stale in self._idle.drain():  # the server went away: so did they all
                    await stale.raw.close()
        connection = await self._connect()  # a new one, whether none was idle or the idle one died
        await connection.begin()
        return connection

    async def _connect(self) -> AsyncPgConnection:
        psycopg = load_psycopg()
        try:
            raw = await psycopg.AsyncConnection.connect(self.url, **client_settings(self.timeout))
        except psycopg.Error as exc:
            failed = connect_error(exc, self.timeout, self.target)
        else:
            return AsyncPgConnection(raw, self.timeout)
        raise failed  # outside the except block: psycopg's text is no implicit context

    async def done(self, connection: AsyncConnection) -> None:
        assert isinstance(connection, AsyncPgConnection)
        raw = connection.raw
        if raw.closed or raw.info.transaction_status != 0 or not self._idle.give(connection):
            await raw.close()  # closed, still in a transaction (not IDLE), or enough are idle

    async def close(self) -> None:
        for connection in self._idle.drain():
            await connection.raw.close()

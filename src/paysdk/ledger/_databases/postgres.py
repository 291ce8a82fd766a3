"""The PostgreSQL backend, through psycopg 3: many workers on many machines share one ledger.

Transactions run at READ COMMITTED: the claim is ``INSERT ... ON CONFLICT DO NOTHING`` then a
compare-and-set ``UPDATE``, and PostgreSQL re-checks an UPDATE's condition against the row a
concurrent transaction committed, so exactly one worker wins each claim. Every wait is bounded
by the ledger's timeout: connecting, each lock, a dead peer (TCP); a statement by twice it, and a
transaction left idle by ten times.

It works through a connection pooler (PgBouncer, in transaction or session mode): the ledger
sends no startup parameter of its own (no ``options``: a pooler refuses what it cannot track),
sets the server's timeouts per transaction with ``SET LOCAL`` in the round trip of its ``BEGIN``,
and never prepares a statement on the server (a pooler may run the next transaction on another
server connection, where it does not exist).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..._errors import ConfigurationError
from .._errors import LedgerError
from .._sql import POSTGRES
from .._steps import Rows
from .driver import AsyncConnection, Connection, Idle
from .postgres_url import PostgresURL, parse_url, scrub

if TYPE_CHECKING:
    import psycopg

__all__ = ["AsyncPostgresDriver", "PostgresDriver"]


def checked_url(url: str) -> PostgresURL:
    """``url`` as libpq reads it, or a ConfigurationError that names what is wrong, never the
    password (``_pg_url``); needs psycopg (the ``postgres`` extra)."""
    psycopg = _psycopg()
    from psycopg.conninfo import conninfo_to_dict

    return parse_url(url, conninfo_to_dict, psycopg.Error)


def _connect_error(exc: Exception, timeout: float, url: PostgresURL) -> LedgerError:
    """The ledger's error for a failed connect, with the URL's secrets hidden; chained to
    psycopg's only when that holds none of them (a traceback prints the cause's text)."""
    failed = postgres_error(exc, timeout, url.secrets)
    failed.__cause__ = exc if scrub(str(exc), url.secrets) == str(exc) else None
    return failed


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


def _client_settings(timeout: float) -> dict[str, Any]:
    """psycopg's and libpq's own settings, none of them sent to the server: connecting and a
    dead peer bounded by ``timeout``, transactions begun by the ledger, nothing prepared."""
    seconds = max(1, round(timeout))
    return {
        "connect_timeout": max(2, seconds),  # libpq's smallest
        "keepalives": 1,
        "keepalives_idle": seconds,
        "keepalives_interval": seconds,
        "keepalives_count": 3,
        "tcp_user_timeout": max(1, round(timeout * 1000)),
        "autocommit": True,  # so BEGIN and the timeouts go in one round trip (see _opening)
        "prepare_threshold": None,  # a pooler may run the next statement on another connection
    }


def _opening(timeout: float, options: str) -> str:
    """``BEGIN`` and this transaction's timeouts, as one simple query: one round trip.

    Args:
        timeout: the ledger's timeout, in seconds.
        options: the libpq ``options`` the connection was opened with (``-c name=value ...``).
    """
    return "; ".join(["BEGIN", *local_timeouts(timeout, options)])


def local_timeouts(timeout: float, options: str) -> list[str]:
    """The ``SET LOCAL`` statements that bound a transaction's waits by the ledger's timeout.

    ``SET LOCAL`` lasts until the transaction ends, so a pooled server connection is left as it
    was found. A statement may wait a whole lock_timeout: it gets twice, so a lock wait is the one
    named. A timeout the connection's own ``options`` (the URL's, or ``PGOPTIONS``) set wins.

    Args:
        timeout: the ledger's timeout, in seconds.
        options: the libpq ``options`` the connection was opened with (``-c name=value ...``).
    """
    ms = max(1, round(timeout * 1000))
    wanted = {
        "lock_timeout": ms,
        "statement_timeout": 2 * ms,
        "idle_in_transaction_session_timeout": 10 * ms,
    }
    given = _options_set(options)
    return [f"SET LOCAL {name} = {value}" for name, value in wanted.items() if name not in given]


def _options_set(options: str) -> set[str]:
    """The settings libpq ``options`` set: ``-c name=value``, ``-cname=value``, ``--name=value``,
    separated by spaces (a backslash escapes the next character), as PostgreSQL reads them.

    Args:
        options: the ``options`` connection parameter, possibly empty.
    """
    words = [re.sub(r"\\(.)", r"\1", word) for word in re.findall(r"(?:\\.|\S)+", options)]
    settings: list[str] = []
    for index, word in enumerate(words):
        if word == "-c" and index + 1 < len(words):
            settings.append(words[index + 1])
        elif word.startswith(("-c", "--")) and len(word) > 2:
            settings.append(word[2:])
    return {setting.partition("=")[0].lower().replace("-", "_") for setting in settings}


class _PgConnection:
    def __init__(self, raw: psycopg.Connection[Any], timeout: float) -> None:
        self.raw = raw
        self.timeout = timeout
        self.opening = _opening(timeout, raw.info.options or "")

    def begin(self) -> None:
        import psycopg

        try:
            self.raw.execute(_trusted(self.opening))
        except psycopg.Error as exc:
            raise postgres_error(exc, self.timeout) from exc

    def execute(self, sql: str, params: Sequence[object]) -> Rows:
        import psycopg

        try:
            cursor = self.raw.execute(_trusted(sql), list(params))
            rows = cursor.fetchall() if cursor.description is not None else []
            return Rows(rows, cursor.rowcount)
        except psycopg.Error as exc:
            raise postgres_error(exc, self.timeout) from exc

    def commit(self) -> None:
        import psycopg

        try:
            self.raw.commit()
        except psycopg.Error as exc:
            raise postgres_error(exc, self.timeout) from exc

    def rollback(self) -> None:
        """Best effort: a connection that cannot roll back is closed by ``done``, not reused."""
        import psycopg

        with contextlib.suppress(psycopg.Error):
            self.raw.rollback()


class PostgresDriver:
    """Short transactions on pooled psycopg connections."""

    dialect = POSTGRES

    def __init__(self, url: str, *, timeout: float) -> None:
        self.target = checked_url(url)
        self.url = url
        self.timeout = timeout
        self._idle: Idle[_PgConnection] = Idle()

    def begin(self, write: bool = True) -> Connection:
        """A transaction at READ COMMITTED; reads and writes alike (row locks, not a file's).

        An idle connection the server dropped (a restart, a failover, a pooler's restart) is
        closed, with every other idle one, and a new connection opened in its place at once.

        Args:
            write: unused: PostgreSQL locks rows, not the database.

        Returns:
            The connection, its transaction begun.

        Raises:
            LedgerError: no connection could be opened, or its transaction begun.
        """
        connection = self._idle.take()
        if connection is not None and not connection.raw.closed:
            try:
                connection.begin()
                return connection
            except LedgerError:
                broken = connection.raw.broken  # before close(), which makes it closed cleanly
                connection.raw.close()
                if not broken:
                    raise
                for stale in self._idle.drain():  # the server went away: so did they all
                    stale.raw.close()
        connection = self._connect()  # a new one, whether none was idle or the idle one died
        try:
            connection.begin()
        except LedgerError:
            connection.raw.close()
            raise
        return connection

    def _connect(self) -> _PgConnection:
        psycopg = _psycopg()
        try:
            raw = psycopg.connect(self.url, **_client_settings(self.timeout))
        except psycopg.Error as exc:
            failed = _connect_error(exc, self.timeout, self.target)
        else:
            return _PgConnection(raw, self.timeout)
        raise failed  # outside the except block: psycopg's text is no implicit context

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
    def __init__(self, raw: psycopg.AsyncConnection[Any], timeout: float) -> None:
        self.raw = raw
        self.timeout = timeout
        self.opening = _opening(timeout, raw.info.options or "")

    async def begin(self) -> None:
        import psycopg

        try:
            await self.raw.execute(_trusted(self.opening))
        except psycopg.Error as exc:
            raise postgres_error(exc, self.timeout) from exc

    async def execute(self, sql: str, params: Sequence[object]) -> Rows:
        import psycopg

        try:
            cursor = await self.raw.execute(_trusted(sql), list(params))
            rows = await cursor.fetchall() if cursor.description is not None else []
            return Rows(rows, cursor.rowcount)
        except psycopg.Error as exc:
            raise postgres_error(exc, self.timeout) from exc

    async def commit(self) -> None:
        import psycopg

        try:
            await self.raw.commit()
        except psycopg.Error as exc:
            raise postgres_error(exc, self.timeout) from exc

    async def rollback(self) -> None:
        import psycopg

        with contextlib.suppress(psycopg.Error):
            await self.raw.rollback()


class AsyncPostgresDriver:
    """The same, on psycopg's ``AsyncConnection``."""

    dialect = POSTGRES

    def __init__(self, url: str, *, timeout: float) -> None:
        self.target = checked_url(url)
        self.url = url
        self.timeout = timeout
        self._idle: Idle[_AsyncPgConnection] = Idle()

    async def begin(self, write: bool = True) -> AsyncConnection:
        connection = self._idle.take()
        if connection is not None and not connection.raw.closed:
            try:
                await connection.begin()
                return connection
            except LedgerError:
                broken = connection.raw.broken
                await connection.raw.close()
                if not broken:
                    raise
                for stale in self._idle.drain():
                    await stale.raw.close()
        connection = await self._connect()
        try:
            await connection.begin()
        except LedgerError:
            await connection.raw.close()
            raise
        return connection

    async def _connect(self) -> _AsyncPgConnection:
        psycopg = _psycopg()
        try:
            raw = await psycopg.AsyncConnection.connect(self.url, **_client_settings(self.timeout))
        except psycopg.Error as exc:
            failed = _connect_error(exc, self.timeout, self.target)
        else:
            return _AsyncPgConnection(raw, self.timeout)
        raise failed  # outside the except block: psycopg's text is no implicit context

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


def postgres_error(exc: Exception, timeout: float, secrets: tuple[str, ...] = ()) -> LedgerError:
    """The ledger's error for psycopg's; a timed-out wait says which wait, and for how long.

    Args:
        exc: what psycopg raised.
        timeout: the ledger's timeout, in seconds.
        secrets: text the message must not hold (the URL, its password): hidden.
    """
    import psycopg.errors

    detail = " ".join(scrub(str(exc), secrets).split())
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return LedgerError(
            f"the PostgreSQL ledger waited more than {timeout:g}s for a lock another "
            f"transaction holds (the ledger's timeout): {detail}"
        )
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return LedgerError(
            f"a PostgreSQL ledger statement took more than {2 * timeout:g}s (twice the "
            f"ledger's timeout): {detail}"
        )
    return LedgerError(f"the PostgreSQL ledger failed: {detail}")

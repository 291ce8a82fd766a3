"""What the SQLAlchemy drivers (``_async/alchemy.py`` and its twin) share: which engines they
take, whether a connection is in a transaction, what a database error means. Their connections
run in ``AUTOCOMMIT`` mode so that the ledger writes its own ``BEGIN``: SQLite's ``BEGIN
IMMEDIATE`` (the write lock before the claim is read), PostgreSQL's with its timeouts."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

import sqlalchemy
import sqlalchemy.exc

from ..._errors import ConfigurationError
from .._errors import LedgerError
from .._schema import POSTGRES, SQLITE, Dialect
from .postgres import postgres_error
from .sqlite import sqlite_error

if TYPE_CHECKING:
    from sqlalchemy import Connection as EngineConnection
    from sqlalchemy import Engine
    from sqlalchemy.ext.asyncio import AsyncConnection as AsyncEngineConnection
    from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = [
    "DATABASE_ERRORS",
    "AsyncEngine",
    "AsyncEngineConnection",
    "Engine",
    "EngineConnection",
    "async_driver_connection",
    "dialect_of",
    "driver_connection",
    "error",
    "in_transaction",
    "where",
]

DRIVERS = {
    ("sqlite", "pysqlite"): SQLITE,
    ("sqlite", "aiosqlite"): SQLITE,
    ("postgresql", "psycopg"): POSTGRES,
}
"""The engines' databases and DBAPI drivers the ledger runs on, and its SQL for each."""

DATABASE_ERRORS = (sqlalchemy.exc.DBAPIError, sqlalchemy.exc.TimeoutError)
"""What the database (or the pool waiting for a connection to it) raises: LedgerError. Anything
else SQLAlchemy raises (a statement it refuses, a closed connection used) is a bug, and stays."""


def dialect_of(url: sqlalchemy.URL, name: str, driver: str) -> Dialect:
    """The ledger's SQL for an engine's ``url`` and its dialect's ``name`` and ``driver``;
    ConfigurationError for another, or for an in-memory SQLite database (it is not shared)."""
    if name not in ("sqlite", "postgresql"):
        raise ConfigurationError(
            f"a SQLAlchemy ledger runs on SQLite or PostgreSQL, not {name!r} ({url.drivername})"
        )
    dialect = DRIVERS.get((name, driver))
    if dialect is None:
        wanted = (
            "psycopg 3: an engine URL starting postgresql+psycopg://"
            if name == "postgresql"
            else "sqlite3 or aiosqlite: an engine URL starting sqlite:/// or sqlite+aiosqlite:///"
        )
        raise ConfigurationError(
            f"a SQLAlchemy ledger on {name} needs {wanted}, not {url.drivername}://"
        )
    if name == "sqlite" and (url.database in (None, "", ":memory:") or "mode=memory" in str(url)):
        raise ConfigurationError(
            "an in-memory SQLite ledger forgets everything and is not shared: give the engine "
            "a file (sqlite:///path.db)"
        )
    return dialect


def where(url: sqlalchemy.URL) -> str:
    """The engine's database for messages: a SQLite file, or ``driver://host:port/database``
    (never the user, the password or the query)."""
    if url.get_backend_name() == "sqlite":
        return str(url.database)
    port = f":{url.port}" if url.port else ""
    return f"{url.drivername}://{url.host or ''}{port}/{url.database or ''}"


def driver_connection(connection: EngineConnection) -> Any:
    """The DBAPI driver's own connection under ``connection``: sqlite3's or psycopg's."""
    return connection.connection.driver_connection


async def async_driver_connection(connection: AsyncEngineConnection) -> Any:
    """The async driver's own connection under ``connection``: aiosqlite's or psycopg's."""
    return (await connection.get_raw_connection()).driver_connection


def in_transaction(dialect: Dialect, driven: Any) -> bool:
    """Whether SQLite (or the server) still holds a transaction open on the driver's own
    connection ``driven``: such a connection never goes back to the pool."""
    if dialect is SQLITE:
        return bool(driven.in_transaction)
    return bool(driven.info.transaction_status != 0)  # psycopg: not IDLE


def error(
    exc: Exception, dialect: Dialect, database: str, timeout: float, options: str = ""
) -> LedgerError:
    """The ledger's error for SQLAlchemy's ``exc`` (a DBAPIError, whose ``orig`` is the driver's,
    or the pool's TimeoutError), worded as the ledger's own drivers word it; ``database`` as
    `where` names it, ``options`` the failed PostgreSQL connection's (``postgres_error``)."""
    if isinstance(exc, sqlalchemy.exc.TimeoutError):
        return LedgerError(
            f"the ledger's database {database!r} failed: the engine's pool gave no connection "
            f"in time ({exc}): raise its pool_size or max_overflow, or hold connections less"
        )
    orig = getattr(exc, "orig", None)
    if dialect is SQLITE and isinstance(orig, sqlite3.Error):
        failed = sqlite_error(orig, database, timeout)
    elif isinstance(orig, Exception) and type(orig).__module__.startswith("psycopg"):
        failed = postgres_error(orig, timeout, options=options)
    else:
        failed = LedgerError(f"the ledger's database {database!r} failed: {orig or exc}")
    if getattr(exc, "connection_invalidated", False):
        return LedgerError(f"{failed} (the connection was lost; SQLAlchemy discarded it)")
    return failed

"""SQLAlchemy engines on the ledger tests' databases: a SQLite file or a fresh PostgreSQL database,
reached through an ``Engine`` (``"sync"``) or an ``AsyncEngine`` (``"async"``)."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlalchemy
    from sqlalchemy.ext.asyncio import AsyncEngine

    from paysdk.ledger.sqlalchemy import AsyncSQLAlchemyLedger, SQLAlchemyLedger


def engine_url(ledger_url: str, kind: str) -> str:
    """The SQLAlchemy URL of the database a ledger URL names, for an engine of ``kind``.

    Args:
        ledger_url: ``sqlite:///path`` or ``postgresql://...``, as ``paysdk.Ledger`` takes.
        kind: ``"sync"`` (sqlite3, psycopg) or ``"async"`` (aiosqlite, psycopg's async).
    """
    scheme, rest = ledger_url.split("://", 1)
    if scheme == "sqlite":
        return f"sqlite+aiosqlite://{rest}" if kind == "async" else ledger_url
    return f"postgresql+psycopg://{rest}"


def make_engine(ledger_url: str, kind: str) -> sqlalchemy.Engine | AsyncEngine:
    """An engine of ``kind`` on the database ``ledger_url`` names (dispose of it after), always
    with a pool that keeps connections (early SQLAlchemy 2.0 releases gave aiosqlite none)."""
    import sqlalchemy.pool

    if kind == "async":
        from sqlalchemy.ext.asyncio import create_async_engine

        queue = sqlalchemy.pool.AsyncAdaptedQueuePool
        return create_async_engine(engine_url(ledger_url, kind), poolclass=queue)
    return sqlalchemy.create_engine(
        engine_url(ledger_url, kind), poolclass=sqlalchemy.pool.QueuePool
    )


def open_ledger(
    engine: sqlalchemy.Engine | AsyncEngine, **options: Any
) -> SQLAlchemyLedger | AsyncSQLAlchemyLedger:
    """The SQLAlchemy ledger for the engine's kind: an ``AsyncSQLAlchemyLedger`` on an
    ``AsyncEngine``, a ``SQLAlchemyLedger`` on an ``Engine``."""
    import sqlalchemy

    from paysdk.ledger.sqlalchemy import AsyncSQLAlchemyLedger, SQLAlchemyLedger

    if isinstance(engine, sqlalchemy.Engine):
        return SQLAlchemyLedger(engine, **options)
    return AsyncSQLAlchemyLedger(engine, **options)


async def dispose(engine: sqlalchemy.Engine | AsyncEngine) -> None:
    """Close the engine's pooled connections, sync or async."""
    import sqlalchemy

    if isinstance(engine, sqlalchemy.Engine):
        engine.dispose()
    else:
        await engine.dispose()


async def call(ledger: object, method: str, *args: Any, **kwargs: Any) -> Any:
    """``ledger.method(...)``, awaited when the ledger is async: one test body for both."""
    result = getattr(ledger, method)(*args, **kwargs)
    return await result if inspect.isawaitable(result) else result


async def create_all(
    engine: sqlalchemy.Engine | AsyncEngine, metadata: sqlalchemy.MetaData
) -> None:
    """The app's ``metadata.create_all``, as a sync or an async app runs it."""
    import sqlalchemy

    if isinstance(engine, sqlalchemy.Engine):
        metadata.create_all(engine)
    else:
        async with engine.begin() as connection:
            await connection.run_sync(metadata.create_all)


async def run_sql(engine: sqlalchemy.Engine | AsyncEngine, sql: str) -> None:
    """One statement of the app's own, committed."""
    import sqlalchemy

    if isinstance(engine, sqlalchemy.Engine):
        with engine.begin() as connection:
            connection.exec_driver_sql(sql)
    else:
        async with engine.begin() as connection:
            await connection.exec_driver_sql(sql)

"""How the SQLAlchemy ledger uses the app's engine: its connections go back to the pool as the
app left them, the app's "begin" listener, a pool with none to give, a server that dropped a
connection or is down, PgBouncer; on a SQLite file and a real PostgreSQL server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest
import sqlalchemy
from sqlalchemy.ext.asyncio import AsyncEngine

from paysdk.ledger import LedgerError, Outcome
from paysdk.ledger.sqlalchemy import SQLAlchemyLedger
from tests.support.either_ledger import paid
from tests.support.engines import call, dispose, make_engine, open_ledger, run_sql
from tests.support.postgres import fresh_database, through

pytestmark = pytest.mark.anyio


async def test_a_dropped_table_is_a_ledger_error_and_the_action_does_not_run(
    engine: Any,
) -> None:
    ledger = open_ledger(engine)
    await call(ledger, "create_table")
    await run_sql(engine, "DROP TABLE paysdk_fulfilments")
    ran: list[str] = []

    with pytest.raises(LedgerError, match="paysdk_fulfilments") as caught:
        await call(ledger, "fulfil_once", paid("order-1"), ran.append)

    assert ran == []
    assert isinstance(caught.value.__cause__, sqlalchemy.exc.DBAPIError)


async def test_connections_go_back_to_the_pool_as_the_app_left_them(
    engine: Any, ledger_url: str
) -> None:
    """Out of any transaction, with the app's own lock and busy timeouts and prepare threshold,
    after a fulfilment, a failed action and a failed statement alike."""
    ledger = open_ledger(engine, timeout=3)
    await call(ledger, "fulfil_once", paid("order-1"), lambda p: None)
    with pytest.raises(ZeroDivisionError):
        await call(ledger, "fulfil_once", paid("order-2"), lambda p: 1 / 0)
    await run_sql(engine, "DROP TABLE paysdk_fulfilments")
    with pytest.raises(LedgerError):
        await call(ledger, "fulfil_once", paid("order-3"), lambda p: None)

    sync_engine = engine.sync_engine if isinstance(engine, AsyncEngine) else engine
    pool = sync_engine.pool
    assert isinstance(pool, sqlalchemy.QueuePool) and pool.checkedout() == 0
    if sync_engine.dialect.name == "sqlite":
        shown = await settings(engine, "PRAGMA busy_timeout", "sqlite")
        assert shown == 5000  # sqlite3's default for the engine's connections, not the ledger's
    else:
        assert await settings(engine, "SHOW lock_timeout", "postgresql") == ("0", 5, False)
        with psycopg.connect(ledger_url, autocommit=True) as admin:
            states = admin.execute(
                "SELECT state FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()"
            ).fetchall()
        assert states and {state for (state,) in states} == {"idle"}


def test_an_app_whose_listener_begins_each_transaction_still_gets_the_write_lock_first(
    tmp_path: Path,
) -> None:
    """SQLAlchemy's recipe for SQLite transactions: the driver's own turned off, and a "begin"
    listener that says BEGIN (deferred). The ledger's claim needs BEGIN IMMEDIATE all the same."""
    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'shop.db'}")
    began: list[str] = []

    @sqlalchemy.event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: Any, record: object) -> None:
        dbapi_connection.isolation_level = None

    @sqlalchemy.event.listens_for(engine, "begin")
    def on_begin(connection: sqlalchemy.Connection) -> None:
        began.append("BEGIN")
        connection.exec_driver_sql("BEGIN")

    ledger = SQLAlchemyLedger(engine)
    assert ledger.fulfil_once(paid("order-1"), lambda p: "shipped").fulfilled_now
    assert ledger.fulfil_once(paid("order-1"), lambda p: "again").already_fulfilled
    assert began  # the listener did run
    engine.dispose()


def test_a_pool_that_gives_no_connection_in_time_is_a_ledger_error(tmp_path: Path) -> None:
    engine = sqlalchemy.create_engine(
        f"sqlite:///{tmp_path / 'shop.db'}", pool_size=1, max_overflow=0, pool_timeout=0.2
    )
    ledger = SQLAlchemyLedger(engine)
    ledger.create_table()
    with engine.connect(), pytest.raises(LedgerError, match="pool gave no connection in time"):
        ledger.fulfil_once(paid("order-1"), lambda p: None)  # the app holds the only one
    assert ledger.fulfil_once(paid("order-1"), lambda p: None).fulfilled_now
    engine.dispose()


async def settings(engine: Any, sql: str, backend: str) -> object:
    """What a connection from the engine's pool shows: the setting ``sql`` reads, and on
    PostgreSQL psycopg's prepare threshold and autocommit."""
    if isinstance(engine, AsyncEngine):
        async with engine.connect() as connection:
            value = (await connection.exec_driver_sql(sql)).scalar()
            raw: Any = (await connection.get_raw_connection()).driver_connection
    else:
        with engine.connect() as connection:
            value = connection.exec_driver_sql(sql).scalar()
            raw = connection.connection.driver_connection
    if backend == "sqlite":
        return value
    return value, raw.prepare_threshold, raw.autocommit


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_connection_the_server_dropped_is_discarded_and_another_used(
    postgres_url: str, kind: str
) -> None:
    url = fresh_database(postgres_url)
    engine = make_engine(url, kind)
    ledger = open_ledger(engine)
    await call(ledger, "fulfil_once", paid("order-1"), lambda p: None)
    with psycopg.connect(url, autocommit=True) as admin:  # the pooled connection dies
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )

    result = await call(ledger, "fulfil_once", paid("order-2"), lambda p: "shipped")

    assert result.outcome is Outcome.FULFILLED
    await dispose(engine)


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_server_that_is_down_is_a_ledger_error(tmp_path: Path, kind: str) -> None:
    from tests.support.postgres import restartable_cluster

    with restartable_cluster() as cluster:
        engine = make_engine(cluster.url, kind)
        ledger = open_ledger(engine, timeout=2)
        await call(ledger, "create_table")
        cluster.stop()
        with pytest.raises(LedgerError, match="the PostgreSQL ledger failed: connection"):
            await call(ledger, "fulfil_once", paid("order-1"), lambda p: None)
        await dispose(engine)


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_through_pgbouncer_the_ledger_prepares_no_statement(
    forgetful_pgbouncer: str, postgres_url: str, kind: str
) -> None:
    # psycopg prepares a statement the 6th time it runs: 20 claims would use one prepared.
    engine = make_engine(through(forgetful_pgbouncer, fresh_database(postgres_url)), kind)
    ledger = open_ledger(engine)
    outcomes = [
        (await call(ledger, "fulfil_once", paid(f"order-{n % 10}"), lambda p: None)).outcome
        for n in range(20)
    ]
    assert outcomes == [Outcome.FULFILLED] * 10 + [Outcome.ALREADY_FULFILLED] * 10
    await dispose(engine)

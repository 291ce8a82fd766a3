"""The ledger tests' shared fixtures: ledgers (sync and async on each database, on connections
of their own or on a SQLAlchemy engine), worker processes (forked from a forkserver, started
together), the shop's sandbox, and a PgBouncer that forgets prepared statements."""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from paysdk.ledger import AsyncLedger, Ledger
from paysdk.sandbox import Sandbox
from tests.support.either_ledger import EitherLedger, MakeLedger
from tests.support.engines import dispose, make_engine, open_ledger
from tests.support.ledger_worker import Workers
from tests.support.postgres import throwaway_pgbouncer

PRELOADED = [
    "paysdk",
    "paysdk.ledger",
    "tests.support.ledger_worker",
    "psycopg",
    "sqlalchemy",
    "sqlalchemy.ext.asyncio",
    "aiosqlite",
    "sqlalchemy.dialects.sqlite.aiosqlite",
    "sqlalchemy.dialects.sqlite.pysqlite",
    "sqlalchemy.dialects.postgresql.psycopg",
    "paysdk.ledger.sqlalchemy",
    "paysdk._transport.httpx_sync",  # what a Client imports when it is made
    "tests.support.engines",
    "paysdk.integrations.django",
    "tests.support.django_site",
]
"""What the forkserver imports before it forks a worker (no connection, engine or settings)."""


@pytest.fixture(scope="module")
def forkserver() -> multiprocessing.context.ForkServerContext:
    """Workers fork from a clean process that imported, once, paysdk and what a worker's ledger
    runs on (PostgreSQL's driver, SQLAlchemy, Django): fast, and thread-free. Eight workers a
    race each importing SQLAlchemy or Django again cost more CPU than the race itself."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOADED)
    return context


@pytest.fixture
def workers(forkserver: multiprocessing.context.ForkServerContext) -> Iterator[Workers]:
    spawned = Workers(forkserver)
    yield spawned
    spawned.kill_all()


@pytest.fixture(params=["sync", "async", "sqlalchemy-sync", "sqlalchemy-async"])
async def make_ledger(request: pytest.FixtureRequest, ledger_url: str) -> AsyncIterator[MakeLedger]:
    """Ledgers on the test's database (SQLite or PostgreSQL), sync or async: on connections of
    their own, or (``sqlalchemy-``) each on a SQLAlchemy engine of its own; closed after."""
    kind: str = request.param
    made: list[Ledger | AsyncLedger] = []
    engines: list[Any] = []

    def make(**options: Any) -> EitherLedger:
        if kind.startswith("sqlalchemy-"):
            engines.append(make_engine(ledger_url, kind.removeprefix("sqlalchemy-")))
            made.append(open_ledger(engines[-1], **options))
        else:
            made.append((AsyncLedger if kind == "async" else Ledger)(ledger_url, **options))
        return EitherLedger(made[-1])

    yield make
    for ledger in made:
        if isinstance(ledger, AsyncLedger):
            await ledger.close()
        else:
            ledger.close()
    for engine in engines:
        await dispose(engine)


@pytest.fixture(params=["sync", "async"])
async def engine(request: pytest.FixtureRequest, ledger_url: str) -> AsyncIterator[Any]:
    """An app's SQLAlchemy Engine or AsyncEngine on the test's SQLite file or PostgreSQL
    database, disposed of after."""
    made = make_engine(ledger_url, request.param)
    yield made
    await dispose(made)


@pytest.fixture
def shop_service() -> Iterator[Sandbox]:
    """The bundled seed (order-1042 paid; order-1043 failed) and two payments for this shop."""
    with Sandbox() as sandbox:
        sandbox.add_payment("shop-1", amount=700, currency="NGN")
        sandbox.add_payment("shop-2", amount=100, currency="NGN")  # the order says 900
        yield sandbox


@pytest.fixture
def forgetful_pgbouncer(postgres_url: str) -> Iterator[str]:
    """A PgBouncer in transaction mode whose server connections forget every prepared statement
    between transactions (``DISCARD ALL`` after each), as a connection another client used last
    would not know it; it ignores an ``options`` startup parameter rather than refusing it."""
    settings: dict[str, str | int] = {
        "server_reset_query": "DISCARD ALL",
        "server_reset_query_always": 1,
        "ignore_startup_parameters": "options",
    }
    with throwaway_pgbouncer(postgres_url, "transaction", settings) as url:
        yield url

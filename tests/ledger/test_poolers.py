"""The PostgreSQL ledger through a real PgBouncer, in transaction and in session pool mode.

A pooler refuses a startup parameter it cannot track (``options``), and in transaction mode runs
each transaction on whichever server connection is free, where a statement prepared on another
does not exist. The throwaway PgBouncer of tests/support/postgres.py keeps its default settings
unless a test says otherwise. (Eight processes racing through it: tests/ledger/test_races.py.)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import paysdk
from paysdk.ledger import AsyncLedger, Ledger, LedgerError
from tests.support.postgres import (
    an_uncommitted_claim,
    fresh_database,
    through,
    throwaway_pgbouncer,
)

pytestmark = pytest.mark.anyio


def paid(reference: str) -> paysdk.VerifiedPayment:
    return paysdk.VerifiedPayment(reference=reference, amount=2500, currency="NGN", success=True)


async def fulfil_each(kind: str, url: str, references: list[str], **options: Any) -> list[str]:
    """Fulfil each reference twice on one ledger (so statements repeat); the outcomes.

    Args:
        kind: ``"sync"`` for a Ledger, ``"async"`` for an AsyncLedger.
        url: the ledger's URL.
        references: the payments' references, each fulfilled twice in turn.
        **options: the ledger's options (``timeout=``...).
    """
    seen: list[str] = []
    if kind == "sync":
        with Ledger(url, **options) as ledger:
            for reference in references * 2:
                seen.append(str(ledger.fulfil_once(paid(reference), lambda p: None).outcome))
    else:
        async with AsyncLedger(url, **options) as async_ledger:
            for reference in references * 2:
                result = await async_ledger.fulfil_once(paid(reference), lambda p: None)
                seen.append(str(result.outcome))
    return seen


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_the_ledger_works_through_pgbouncer_with_its_default_settings(
    pooled_ledger_url: str, kind: str
) -> None:
    # PgBouncer's defaults refuse a connection that sends a startup parameter such as options.
    references = [f"order-{n}" for n in range(3)]
    outcomes = await fulfil_each(kind, pooled_ledger_url, references)
    assert outcomes == ["fulfilled"] * 3 + ["already_fulfilled"] * 3


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_the_ledger_prepares_no_statement_on_the_server(
    forgetful_pgbouncer: str, postgres_url: str, kind: str
) -> None:
    # psycopg prepares a statement the 6th time it runs: 20 claims would use one prepared.
    url = through(forgetful_pgbouncer, fresh_database(postgres_url))
    references = [f"order-{n}" for n in range(10)]
    outcomes = await fulfil_each(kind, url, references)
    assert outcomes == ["fulfilled"] * 10 + ["already_fulfilled"] * 10


@pytest.fixture
def one_server_connection(postgres_url: str) -> Iterator[str]:
    """A PgBouncer in transaction mode with one server connection, which every client shares."""
    with throwaway_pgbouncer(postgres_url, "transaction", {"default_pool_size": 1}) as url:
        yield url


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_through_pgbouncer_a_lock_wait_is_bounded_and_the_timeouts_stay_in_the_transaction(
    one_server_connection: str, postgres_url: str, kind: str
) -> None:
    direct = fresh_database(postgres_url)
    pooled = through(one_server_connection, direct)
    with Ledger(pooled) as setup:
        setup.create_table()
    with an_uncommitted_claim(direct, "order-1"):
        started = time.monotonic()
        with pytest.raises(LedgerError, match=r"waited more than 1s for a lock"):
            await fulfil_each(kind, pooled, ["order-1"], timeout=1)
        assert time.monotonic() - started < 5
    # The one server connection the ledger used is left with the server's own settings.
    with psycopg.connect(pooled, autocommit=True) as other_client:
        shown = [other_client.execute(f"SHOW {name}").fetchone() for name in TIMEOUTS]
    assert shown == [("0",)] * 3


TIMEOUTS = ("lock_timeout", "statement_timeout", "idle_in_transaction_session_timeout")


def test_a_timeout_the_url_sets_wins_over_the_ledgers(postgres_url: str) -> None:
    direct = fresh_database(postgres_url)
    with Ledger(direct) as setup:
        setup.create_table()
    url = f"{direct}?options=-c%20lock_timeout%3D200"
    with psycopg.connect(direct) as holder:
        holder.execute(
            "INSERT INTO paysdk_fulfilments (reference, state, attempts, amount, currency, "
            "claimed_at) VALUES ('order-1', 'claimed', 1, 2500, 'NGN', now())"
        )
        watchdog = threading.Timer(8, holder.rollback)
        watchdog.start()
        started = time.monotonic()
        with Ledger(url, timeout=30) as ledger, pytest.raises(LedgerError, match="lock"):
            ledger.fulfil_once(paid("order-1"), lambda p: None)
        assert time.monotonic() - started < 5  # the URL's 200 ms, not the ledger's 30 s
        watchdog.cancel()
        holder.rollback()


@pytest.mark.parametrize("kind", ["sync", "async", "sqlalchemy-sync", "sqlalchemy-async"])
@pytest.mark.parametrize("setting", ["lock_timeout", "statement_timeout"])
async def test_a_wait_the_urls_timeout_cut_is_not_said_to_be_the_ledgers(
    postgres_url: str, kind: str, setting: str
) -> None:
    """A lock wait cut by a timeout the URL's options set (which wins over the ledger's) is
    reported as that setting's, never as the ledger's 30 s, which it did not wait."""
    from tests.support.either_ledger import EitherLedger
    from tests.support.engines import dispose, make_engine, open_ledger

    direct = fresh_database(postgres_url)
    with Ledger(direct) as setup:
        setup.create_table()
    url = f"{direct}?options=-c%20{setting}%3D200"
    engine = make_engine(url, kind.removeprefix("sqlalchemy-")) if "sqlalchemy" in kind else None
    if engine is not None:
        made: Any = open_ledger(engine, timeout=30)
    else:
        made = (AsyncLedger if kind == "async" else Ledger)(url, timeout=30)
    ledger = EitherLedger(made)
    try:
        with an_uncommitted_claim(direct), pytest.raises(LedgerError) as raised:
            await ledger.fulfil_once(paid("order-1"), lambda p: None)
    finally:
        await ledger.close()
        if engine is not None:
            await dispose(engine)
    assert f"than the {setting} its connection's options set: canceling statement" in str(
        raised.value
    )
    assert "30s" not in str(raised.value) and "60s" not in str(raised.value)


def test_a_wait_in_pgbouncers_queue_ends_at_its_query_wait_timeout_as_a_ledger_error(
    postgres_url: str,
) -> None:
    """Every server connection of PgBouncer's pool in use: the ledger's first statement waits in
    PgBouncer's queue, which only PgBouncer's ``query_wait_timeout`` bounds (docs/fulfilment.md
    says to set it no longer than the ledger's timeout); its end is a LedgerError that names it."""
    direct = fresh_database(postgres_url)
    with Ledger(direct) as setup:
        setup.create_table()
    settings = {"default_pool_size": 1, "query_wait_timeout": 1}
    with throwaway_pgbouncer(postgres_url, "transaction", settings) as pooler:
        pooled = through(pooler, direct)
        with psycopg.connect(pooled) as holder:
            holder.execute("SELECT 1")  # its transaction holds the pool's one server connection
            started = time.monotonic()
            with (
                Ledger(pooled, timeout=30, create_table=False) as ledger,
                pytest.raises(LedgerError, match="query_wait_timeout"),
            ):
                ledger.fulfil_once(paid("order-1"), lambda p: None)
            assert time.monotonic() - started < 10  # PgBouncer's 1 s, not the ledger's 30 s
            holder.rollback()

"""The ledger tests' ledgers (sync and async on each database) and worker processes."""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from paysdk.ledger import AsyncLedger, Ledger
from tests.support.either_ledger import EitherLedger, MakeLedger
from tests.support.ledger_worker import Workers


@pytest.fixture(scope="module")
def forkserver() -> multiprocessing.context.ForkServerContext:
    """Workers fork from a clean process that imported paysdk once: fast, and thread-free."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["paysdk", "paysdk.ledger", "tests.support.ledger_worker"])
    return context


@pytest.fixture
def workers(forkserver: multiprocessing.context.ForkServerContext) -> Iterator[Workers]:
    spawned = Workers(forkserver)
    yield spawned
    spawned.kill_all()


@pytest.fixture(params=["sync", "async"])
async def make_ledger(request: pytest.FixtureRequest, ledger_url: str) -> AsyncIterator[MakeLedger]:
    """Ledgers on the test's database (SQLite or PostgreSQL), sync or async, closed after."""
    made: list[Ledger | AsyncLedger] = []

    def make(**options: Any) -> EitherLedger:
        cls = AsyncLedger if request.param == "async" else Ledger
        made.append(cls(ledger_url, **options))
        return EitherLedger(made[-1])

    yield make
    for ledger in made:
        if isinstance(ledger, AsyncLedger):
            await ledger.close()
        else:
            ledger.close()

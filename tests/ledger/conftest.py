"""The ledger tests' worker processes: forked from a forkserver, started together."""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
from collections.abc import Iterator

import pytest

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

"""Races for real: many processes deliver the same callbacks at once; a worker dies mid-action.

Each worker is a process (tests/support/ledger_worker.py, forked from a forkserver) verifying
against a real sandbox on loopback and fulfilling through a ledger on a SQLite file or a real
PostgreSQL server, directly or through PgBouncer. Every action appends a line to a shared file:
the test counts how often each one ran.
"""

from __future__ import annotations

import collections
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import paysdk
from paysdk.ledger import Ledger, Outcome
from paysdk.sandbox import Sandbox
from tests.support.ledger_worker import Job, Workers
from tests.support.postgres import fresh_database, through, throwaway_pgbouncer

REFERENCES = [f"race-{n:03d}" for n in range(50)]
WORKERS = 8  # still twice PgBouncer's 4 server connections in transaction mode


@pytest.fixture(scope="module")
def race_service() -> Iterator[Sandbox]:
    with Sandbox() as sandbox:
        for reference in [*REFERENCES, "killed-1"]:
            sandbox.add_payment(reference, amount=1000, currency="NGN")
        yield sandbox


def job(sandbox: Sandbox, ledger_url: str, effects: Path, *references: str, **options: Any) -> Job:
    return Job(
        ledger_url, sandbox.base_url, sandbox.secret_key, str(effects), references, **options
    )


def effects_of(path: Path) -> collections.Counter[tuple[str, str]]:
    """How often each action started or finished, by (what, reference)."""
    lines = path.read_text().splitlines() if path.exists() else []
    return collections.Counter((line.split()[0], line.split()[1]) for line in lines)


def test_eight_processes_deliver_the_same_fifty_callbacks_and_each_ships_once(
    race_service: Sandbox, ledger_url: str, tmp_path: Path, workers: Workers
) -> None:
    race(race_service, ledger_url, tmp_path / "effects.log", workers)


def test_through_pgbouncer_eight_processes_deliver_fifty_callbacks_and_each_ships_once(
    race_service: Sandbox, pooled_ledger_url: str, tmp_path: Path, workers: Workers
) -> None:
    """The same race through PgBouncer with its default settings, in transaction mode (8
    workers share 4 server connections, a transaction on whichever is free) and session mode."""
    race(race_service, pooled_ledger_url, tmp_path / "effects.log", workers)


@pytest.mark.parametrize("engine", ["sync", "async"])
def test_eight_processes_each_with_its_own_sqlalchemy_engine_ship_each_callback_once(
    race_service: Sandbox, ledger_url: str, tmp_path: Path, workers: Workers, engine: str
) -> None:
    """The race again, each worker fulfilling through a SQLAlchemy ledger on an Engine (or an
    AsyncEngine) of its own on the same SQLite file or PostgreSQL database."""
    race(race_service, ledger_url, tmp_path / "effects.log", workers, engine=engine)


def test_through_pgbouncer_sqlalchemy_engines_ship_each_callback_once(
    race_service: Sandbox, postgres_url: str, tmp_path: Path, workers: Workers
) -> None:
    """Eight Engines through PgBouncer in transaction mode (4 server connections): psycopg
    would prepare a repeated statement on whichever server connection ran it, and the next
    transaction may run on another."""
    with throwaway_pgbouncer(postgres_url, "transaction", {"default_pool_size": 4}) as pooler:
        url = through(pooler, fresh_database(postgres_url))
        race(race_service, url, tmp_path / "effects.log", workers, engine="sync")


def race(
    sandbox: Sandbox, ledger_url: str, effects: Path, workers: Workers, **options: Any
) -> None:
    """Eight processes deliver the same fifty callbacks at once: each ships once, no error.

    Args:
        sandbox: the service the workers verify against.
        ledger_url: the ledger they share.
        effects: the file each action appends a line to.
        workers: starts the processes.
        **options: the workers' Job's options (``engine="sync"``...).
    """
    everyone = workers.start(WORKERS, job(sandbox, ledger_url, effects, *REFERENCES, **options))
    outcomes = workers.finish(everyone)

    assert effects_of(effects) == {("done", reference): 1 for reference in REFERENCES}
    assert outcomes["fulfilled"] == len(REFERENCES)
    assert sum(outcomes.values()) == WORKERS * len(REFERENCES)
    assert set(outcomes) <= {"fulfilled", "already_fulfilled", "in_progress"}
    with Ledger(ledger_url) as ledger:
        rows = ledger.rows(REFERENCES)
    assert sorted(rows) == REFERENCES
    assert all(row.fulfilled and row.attempts == 1 for row in rows.values())


def test_a_worker_killed_mid_action_is_held_after_its_lease_until_a_person_resolves_it(
    race_service: Sandbox, ledger_url: str, tmp_path: Path, workers: Workers
) -> None:
    effects = tmp_path / "effects.log"
    (hung,) = workers.start(
        1, job(race_service, ledger_url, effects, "killed-1", hang=True, lease=2)
    )
    while effects_of(effects)[("started", "killed-1")] == 0:
        assert hung.is_alive(), "the worker exited before it started the action"
        time.sleep(0.02)
    hung.kill()  # SIGKILL: no cleanup, no release; whether it shipped is unknown
    hung.join()
    assert hung.exitcode == -signal.SIGKILL

    payment = paysdk.VerifiedPayment(
        reference="killed-1", amount=1000, currency="NGN", success=True
    )
    with Ledger(ledger_url) as ledger:
        assert ledger.fulfil_once(payment, print).outcome is Outcome.IN_PROGRESS  # lease holds

    # Deliveries keep coming (as retries of a 503 would): once the lease ends they find the
    # outcome unknown, and none runs the action.
    waiting = workers.start(4, job(race_service, ledger_url, effects, "killed-1", until_done=True))
    seen = workers.finish(waiting)
    assert seen["unknown"] == 4  # each stopped at unknown, after some 503s while it was live
    assert set(seen) <= {"in_progress", "unknown"}
    assert effects_of(effects) == {("started", "killed-1"): 1}

    with Ledger(ledger_url) as ledger:  # a person checks the warehouse: it never shipped
        ledger.resolve("killed-1", ran=False)
    rescuers = workers.start(4, job(race_service, ledger_url, effects, "killed-1", until_done=True))
    outcomes = workers.finish(rescuers)

    assert effects_of(effects) == {("started", "killed-1"): 1, ("done", "killed-1"): 1}
    assert outcomes["fulfilled"] == 1
    with Ledger(ledger_url) as ledger:
        row = ledger.row("killed-1")
    assert row is not None
    assert (row.state, row.attempts) == ("fulfilled", 2)

"""Races for real: many processes deliver the same callbacks at once; a worker dies mid-action.

Each worker is a process (tests/support/ledger_worker.py, forked from a forkserver) verifying
against a real sandbox on loopback and fulfilling through a ledger on a SQLite file or a real
PostgreSQL server, directly or through PgBouncer. Every action appends a line to a shared file:
the test counts how often each one ran.
"""

from __future__ import annotations

import collections
import multiprocessing
import multiprocessing.context
import signal
import time
from collections.abc import Iterator, Sequence
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any

import pytest

import paysdk
from paysdk.ledger import Ledger, Outcome
from paysdk.sandbox import Sandbox
from tests.support.ledger_worker import Job, deliver

REFERENCES = [f"race-{n:03d}" for n in range(50)]
WORKERS = 16


@pytest.fixture(scope="module")
def race_service() -> Iterator[Sandbox]:
    with Sandbox() as sandbox:
        for reference in [*REFERENCES, "killed-1"]:
            sandbox.add_payment(reference, amount=1000, currency="NGN")
        yield sandbox


@pytest.fixture(scope="module")
def forkserver() -> multiprocessing.context.ForkServerContext:
    """Workers fork from a clean process that imported paysdk once: fast, and thread-free."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["paysdk", "paysdk.ledger", "tests.support.ledger_worker"])
    return context


class Workers:
    """Worker processes that start together at a barrier; killed if a test leaves any behind."""

    def __init__(self, context: multiprocessing.context.ForkServerContext) -> None:
        self.context = context
        self.results: Queue[dict[str, int]] = context.Queue()
        self.processes: list[BaseProcess] = []
        self.barriers: list[object] = []  # alive until the workers end: they share it

    def start(self, count: int, job: Job) -> list[BaseProcess]:
        barrier = self.context.Barrier(count)
        self.barriers.append(barrier)
        started: list[BaseProcess] = [
            self.context.Process(target=deliver, args=(job, barrier, self.results))
            for _ in range(count)
        ]
        for process in started:
            process.start()
        self.processes.extend(started)
        return started

    def finish(self, processes: Sequence[BaseProcess]) -> collections.Counter[str]:
        """Wait for these workers; the sum of the outcomes they saw."""
        total: collections.Counter[str] = collections.Counter()
        for _ in processes:
            total.update(self.results.get(timeout=120))
        for process in processes:
            process.join(timeout=60)
            assert process.exitcode == 0
        return total

    def kill_all(self) -> None:
        for process in self.processes:
            if process.is_alive():
                process.kill()
            process.join()
            process.close()
        self.results.close()
        self.results.join_thread()


@pytest.fixture
def workers(forkserver: multiprocessing.context.ForkServerContext) -> Iterator[Workers]:
    spawned = Workers(forkserver)
    yield spawned
    spawned.kill_all()


def job(sandbox: Sandbox, ledger_url: str, effects: Path, *references: str, **options: Any) -> Job:
    return Job(
        ledger_url, sandbox.base_url, sandbox.secret_key, str(effects), references, **options
    )


def effects_of(path: Path) -> collections.Counter[tuple[str, str]]:
    """How often each action started or finished, by (what, reference)."""
    lines = path.read_text().splitlines() if path.exists() else []
    return collections.Counter((line.split()[0], line.split()[1]) for line in lines)


def test_sixteen_processes_deliver_the_same_fifty_callbacks_and_each_ships_once(
    race_service: Sandbox, ledger_url: str, tmp_path: Path, workers: Workers
) -> None:
    race(race_service, ledger_url, tmp_path / "effects.log", workers)


def test_through_pgbouncer_sixteen_processes_deliver_fifty_callbacks_and_each_ships_once(
    race_service: Sandbox, pooled_ledger_url: str, tmp_path: Path, workers: Workers
) -> None:
    """The same race through PgBouncer with its default settings, in transaction mode (16
    workers share 4 server connections, a transaction on whichever is free) and session mode."""
    race(race_service, pooled_ledger_url, tmp_path / "effects.log", workers)


def race(sandbox: Sandbox, ledger_url: str, effects: Path, workers: Workers) -> None:
    """Sixteen processes deliver the same fifty callbacks at once: each ships once, no error.

    Args:
        sandbox: the service the workers verify against.
        ledger_url: the ledger they share.
        effects: the file each action appends a line to.
        workers: starts the processes.
    """
    everyone = workers.start(WORKERS, job(sandbox, ledger_url, effects, *REFERENCES))
    outcomes = workers.finish(everyone)

    assert effects_of(effects) == {("done", reference): 1 for reference in REFERENCES}
    assert outcomes["fulfilled"] == len(REFERENCES)
    assert sum(outcomes.values()) == WORKERS * len(REFERENCES)
    assert set(outcomes) <= {"fulfilled", "already_fulfilled", "in_progress"}
    with Ledger(ledger_url) as ledger:
        rows = ledger.rows(REFERENCES)
    assert sorted(rows) == REFERENCES
    assert all(row.fulfilled and row.attempts == 1 for row in rows.values())


def test_a_worker_killed_mid_action_is_fulfilled_once_after_its_lease(
    race_service: Sandbox, ledger_url: str, tmp_path: Path, workers: Workers
) -> None:
    effects = tmp_path / "effects.log"
    (hung,) = workers.start(
        1, job(race_service, ledger_url, effects, "killed-1", hang=True, lease=4)
    )
    while effects_of(effects)[("started", "killed-1")] == 0:
        assert hung.is_alive(), "the worker exited before it started the action"
        time.sleep(0.02)
    hung.kill()  # SIGKILL: no cleanup, no release; its claim stays until the lease ends
    hung.join()
    assert hung.exitcode == -signal.SIGKILL

    payment = paysdk.VerifiedPayment(
        reference="killed-1", amount=1000, currency="NGN", success=True
    )
    with Ledger(ledger_url) as ledger:
        assert ledger.fulfil_once(payment, print).outcome is Outcome.IN_PROGRESS  # lease holds

    # Deliveries keep coming (as retries of a 503 would) until the lease lets one take over.
    rescuers = workers.start(4, job(race_service, ledger_url, effects, "killed-1", until_done=True))
    outcomes = workers.finish(rescuers)

    assert effects_of(effects) == {("started", "killed-1"): 1, ("done", "killed-1"): 1}
    assert outcomes["fulfilled"] == 1
    with Ledger(ledger_url) as ledger:
        row = ledger.row("killed-1")
    assert row is not None
    assert (row.state, row.attempts) == ("fulfilled", 2)

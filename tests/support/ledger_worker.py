"""A merchant worker process for the ledger's race tests, started through a forkserver.

Each worker waits at a start barrier (so all begin at once), then delivers each callback as a
handler would: verify against the sandbox, then ``fulfil_once``. The action appends one line to
the effects file (``O_APPEND``: whole lines from many processes), so the test counts how often
each action really ran. ``hang`` claims a reference and never finishes: the test kills it.
:func:`deliver_through_outages` fulfils without the sandbox, retrying what the database's
outages interrupt, as the service would retry a 503.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import multiprocessing.context
import os
import random
import time
from collections.abc import Callable, Sequence
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio.from_thread

import paysdk
from paysdk.ledger import FulfilResult, LedgerError, Outcome, UnrecordedFulfilmentError

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

T = TypeVar("T")
Deliver = Callable[["Job", Barrier, "Queue[dict[str, int]]"], None]


@dataclasses.dataclass(frozen=True)
class Job:
    ledger: str
    base_url: str
    secret_key: str
    effects: str
    references: tuple[str, ...]
    lease: float = 60
    hang: bool = False
    action_seconds: float = 0.005
    until_done: bool = False
    """Retry what is in progress elsewhere, as the service would retry a 503."""
    django: dict[str, Any] | None = None
    """Fulfil through ``DjangoLedger`` on Django configured with this ``DATABASES["default"]``
    (tests/support/django_site.py), rather than ``paysdk.Ledger(ledger)``."""
    engine: str = ""
    """``"sync"`` or ``"async"``: fulfil through a SQLAlchemy ledger on the worker's own Engine
    or AsyncEngine on the database ``ledger`` names, not a Ledger on the URL."""


class Fulfiller(Protocol):
    def fulfil_once(
        self, payment: paysdk.VerifiedPayment, action: Callable[[paysdk.VerifiedPayment], T]
    ) -> FulfilResult[T]: ...
    def close(self) -> None: ...


def open_ledger(job: Job) -> Fulfiller:
    """The worker's ledger: on ``job.ledger``'s URL, on Django's connection to its database, or
    on an engine of its own on that database."""
    if job.django is not None:
        from paysdk.integrations.django import DjangoLedger
        from tests.support.django_site import configure

        configure({"default": job.django})
        return DjangoLedger(lease=job.lease)
    if not job.engine:
        return paysdk.Ledger(job.ledger, lease=job.lease)
    import sqlalchemy

    from paysdk.ledger.sqlalchemy import SQLAlchemyLedger
    from tests.support.engines import make_engine

    engine = make_engine(job.ledger, job.engine)
    if isinstance(engine, sqlalchemy.Engine):
        return SQLAlchemyLedger(engine, lease=job.lease)
    return OnItsOwnLoop(engine, lease=job.lease)


class OnItsOwnLoop:
    """An AsyncSQLAlchemyLedger that a sync worker drives, on one event loop of its own (in a
    thread: anyio's blocking portal), where its AsyncEngine's connections live."""

    def __init__(self, engine: AsyncEngine, *, lease: float) -> None:
        from paysdk.ledger.sqlalchemy import AsyncSQLAlchemyLedger

        self.engine = engine
        self.ledger = AsyncSQLAlchemyLedger(engine, lease=lease)
        self._stack = contextlib.ExitStack()
        self.portal = self._stack.enter_context(anyio.from_thread.start_blocking_portal())

    def fulfil_once(
        self, payment: paysdk.VerifiedPayment, action: Callable[[paysdk.VerifiedPayment], T]
    ) -> FulfilResult[T]:
        async def fulfil() -> FulfilResult[T]:
            return await self.ledger.fulfil_once(payment, action)

        return self.portal.call(fulfil)

    def close(self) -> None:
        with self._stack:
            self.portal.call(self.engine.dispose)


def _effect(path: str, line: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{line}\n".encode())
    finally:
        os.close(fd)


def deliver(job: Job, start: Barrier, results: Queue[dict[str, int]]) -> None:
    """Deliver every callback of ``job`` once (or until done); put the outcomes seen."""
    expected = paysdk.Expected(amount=1000, currency="NGN")

    def ship(payment: paysdk.VerifiedPayment) -> str:
        if job.hang:
            _effect(job.effects, f"started {payment.reference} {os.getpid()}")
            time.sleep(3600)
        time.sleep(job.action_seconds)  # long enough for others to arrive while it runs
        _effect(job.effects, f"done {payment.reference} {os.getpid()}")
        return payment.reference

    references = list(job.references)
    random.shuffle(references)
    outcomes: collections.Counter[str] = collections.Counter()
    client = paysdk.Client(secret_key=job.secret_key, base_url=job.base_url)
    ledger = open_ledger(job)
    start.wait()
    with client, contextlib.closing(ledger):
        for reference in references:
            while True:
                payment = client.verify_callback(
                    f"reference={reference}", lookup=lambda r: expected
                )
                outcome = ledger.fulfil_once(payment, ship).outcome
                outcomes[str(outcome)] += 1
                if not (job.until_done and outcome is Outcome.IN_PROGRESS):
                    break
                time.sleep(0.2)
    results.put(dict(outcomes))


def deliver_through_outages(job: Job, start: Barrier, results: Queue[dict[str, int]]) -> None:
    """Fulfil every reference of ``job`` (built by hand: no sandbox) until it is settled: a
    LedgerError (the database is away) or an in-progress claim is tried again, as the service
    retries a 503. Puts the outcomes and errors seen."""

    def ship(payment: paysdk.VerifiedPayment) -> str:
        time.sleep(job.action_seconds)
        _effect(job.effects, f"done {payment.reference} {os.getpid()}")
        return payment.reference

    references = list(job.references)
    random.shuffle(references)
    seen: collections.Counter[str] = collections.Counter()
    ledger = paysdk.Ledger(job.ledger, lease=job.lease, timeout=5)
    start.wait()
    deadline = time.monotonic() + 60
    with ledger:
        for reference in references:
            payment = paysdk.VerifiedPayment(
                reference=reference, amount=1000, currency="NGN", success=True
            )
            while time.monotonic() < deadline:
                try:
                    outcome = ledger.fulfil_once(payment, ship).outcome
                except UnrecordedFulfilmentError:
                    seen["unrecorded"] += 1
                    break
                except LedgerError:
                    seen["ledger_error"] += 1
                    time.sleep(0.05)
                    continue
                seen[str(outcome)] += 1
                if outcome is not Outcome.IN_PROGRESS:
                    break
                time.sleep(0.05)
    results.put(dict(seen))


class Workers:
    """Worker processes that start together at a barrier; killed if a test leaves any behind."""

    def __init__(self, context: multiprocessing.context.ForkServerContext) -> None:
        self.context = context
        self.results: Queue[dict[str, int]] = context.Queue()
        self.processes: list[BaseProcess] = []
        self.barriers: list[object] = []  # alive until the workers end: they share it

    def start(self, count: int, job: Job, target: Deliver = deliver) -> list[BaseProcess]:
        """Start ``count`` workers running ``target(job, ...)``, released together.

        Args:
            count: how many processes.
            job: what each delivers.
            target: the function each runs (:func:`deliver` unless told).
        """
        barrier = self.context.Barrier(count)
        self.barriers.append(barrier)
        started: list[BaseProcess] = [
            self.context.Process(target=target, args=(job, barrier, self.results))
            for _ in range(count)
        ]
        for process in started:
            process.start()
        self.processes.extend(started)
        return started

    def finish(self, processes: Sequence[BaseProcess]) -> collections.Counter[str]:
        """Wait for these workers; the sum of the outcomes they saw.

        Args:
            processes: workers :meth:`start` started.
        """
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


def abandon_claim(url: str, reference: str, lease: float) -> None:
    """Claim ``reference`` and stop before its action, as a worker killed mid-action leaves it.

    Args:
        url: the ledger's URL.
        reference: the payment to claim.
        lease: the claim's lease, in seconds.
    """
    from paysdk.ledger._steps import Act, LedgerPlan
    from paysdk.ledger._sync.run import run_plan

    def until_the_action(plan: LedgerPlan[object]) -> LedgerPlan[None]:
        step = next(plan)
        while not isinstance(step, Act):
            step = plan.send((yield step))
        plan.close()

    payment = paysdk.VerifiedPayment(reference=reference, amount=1000, currency="NGN", success=True)
    with paysdk.Ledger(url, lease=lease) as ledger:
        ledger.create_table()
        run_plan(ledger._driver, until_the_action(ledger._fulfil_plan(payment)), timeout=5)

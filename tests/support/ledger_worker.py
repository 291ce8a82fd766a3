"""A merchant worker process for the ledger's race tests, started through a forkserver.

Each worker waits at a start barrier (so all begin at once), then delivers each callback as a
handler would: verify against the sandbox, then ``fulfil_once``. The action appends one line to
the effects file (``O_APPEND``: whole lines from many processes), so the test counts how often
each action really ran. ``hang`` claims a reference and never finishes: the test kills it.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import random
import time
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier

import paysdk
from paysdk.ledger import Outcome


@dataclasses.dataclass(frozen=True)
class Job:
    ledger: str
    base_url: str
    secret_key: str
    effects: str
    references: tuple[str, ...]
    lease: float = 60
    hang: bool = False
    until_done: bool = False
    """Retry what is in progress elsewhere, as the service would retry a 503."""


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
        time.sleep(0.005)  # long enough for others to arrive while it runs
        _effect(job.effects, f"done {payment.reference} {os.getpid()}")
        return payment.reference

    references = list(job.references)
    random.shuffle(references)
    outcomes: collections.Counter[str] = collections.Counter()
    client = paysdk.Client(secret_key=job.secret_key, base_url=job.base_url)
    ledger = paysdk.Ledger(job.ledger, lease=job.lease)
    start.wait()
    with client, ledger:
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

"""Races for real on Django's connection: separate processes, each configuring Django against the
same database (the migrated SQLite file, or the database on the real PostgreSQL server), deliver
the same callbacks at once through ``DjangoLedger``; each action runs exactly once.

The workers are tests/support/ledger_worker.py's, forked from a forkserver: each verifies against
a real sandbox on loopback, then fulfils, and every action appends a line to a shared file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connections

from paysdk.integrations.django import DjangoLedger
from paysdk.sandbox import Sandbox
from tests.ledger.test_races import effects_of
from tests.support.django_site import postgres_settings, sqlite_settings, url_of
from tests.support.ledger_worker import Job, Workers

REFERENCES = [f"django-race-{n:03d}" for n in range(40)]
WORKERS = 8


@pytest.fixture(scope="module")
def race_service() -> Iterator[Sandbox]:
    with Sandbox() as sandbox:
        for reference in REFERENCES:
            sandbox.add_payment(reference, amount=1000, currency="NGN")
        yield sandbox


def test_processes_on_djangos_connection_run_each_action_once(
    using: str, race_service: Sandbox, tmp_path: Path, workers: Workers
) -> None:
    effects = tmp_path / "effects.log"
    name = connections[using].settings_dict["NAME"]
    if connections[using].vendor == "sqlite":
        database = sqlite_settings(name)
    else:
        database = postgres_settings(url_of(using))
    job = Job(
        "",  # no URL: a worker opening paysdk.Ledger instead would fail
        race_service.base_url,
        race_service.secret_key,
        str(effects),
        tuple(REFERENCES),
        django=database,
    )
    outcomes = workers.finish(workers.start(WORKERS, job))

    assert effects_of(effects) == {("done", reference): 1 for reference in REFERENCES}
    assert outcomes["fulfilled"] == len(REFERENCES)
    assert sum(outcomes.values()) == WORKERS * len(REFERENCES)
    assert set(outcomes) <= {"fulfilled", "already_fulfilled", "in_progress"}
    rows = DjangoLedger(using).rows(REFERENCES)
    assert sorted(rows) == REFERENCES
    assert all(row.fulfilled and row.attempts == 1 for row in rows.values())

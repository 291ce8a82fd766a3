"""Exactly once through a real PostgreSQL restart (``pg_ctl restart -m fast``) in mid-run.

Eight worker processes (tests/support/ledger_worker.py) fulfil the same 160 payments while the
server is restarted under them: every connection, pooled or in use, is cut. An action that ran
while the server went away must still be recorded, not run again once its lease (3 s here) ends.
Each action appends a line to a file: the test counts how often each one ran.
"""

from __future__ import annotations

import collections
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from paysdk.ledger import AsyncLedger, Ledger, LedgerError
from tests.support.either_ledger import EitherLedger, paid
from tests.support.ledger_worker import Job, Workers, deliver_through_outages
from tests.support.lost_answer import LostCommitAnswer
from tests.support.postgres import Cluster, fresh_database, restartable_cluster

REFERENCES = [f"restart-{n:03d}" for n in range(160)]
WORKERS = 8


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A cluster of this module's own: restarting the session's would disturb other tests."""
    with restartable_cluster() as started:
        yield started


def done_lines(effects: Path) -> collections.Counter[str]:
    lines = effects.read_text().splitlines() if effects.exists() else []
    return collections.Counter(line.split()[1] for line in lines)


def test_every_action_runs_once_when_postgres_restarts_in_mid_run(
    cluster: Cluster, tmp_path: Path, workers: Workers
) -> None:
    url, effects = fresh_database(cluster.url), tmp_path / "effects.log"
    with Ledger(url) as setup:
        setup.create_table()
    job = Job(url, "", "", str(effects), tuple(REFERENCES), lease=3, action_seconds=0.1)
    everyone = workers.start(WORKERS, job, target=deliver_through_outages)

    restarted = threading.Event()
    done_by_then: list[int] = []

    def restart_when_a_quarter_is_done() -> None:
        deadline = time.monotonic() + 20
        while sum(done_lines(effects).values()) < len(REFERENCES) // 4:
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)
        cluster.restart()  # -m fast: every session is terminated, actions in flight keep going
        done_by_then.append(sum(done_lines(effects).values()))
        restarted.set()

    restarter = threading.Thread(target=restart_when_a_quarter_is_done)
    restarter.start()
    outcomes = workers.finish(everyone)
    restarter.join()

    assert restarted.is_set(), "the run ended before the server was restarted"
    assert done_by_then[0] < len(REFERENCES) * 3 // 4  # it was back long before the end
    ran = done_lines(effects)
    assert {reference: ran[reference] for reference in REFERENCES} == dict.fromkeys(REFERENCES, 1)
    assert outcomes["unrecorded"] == 0
    with Ledger(url) as ledger:
        rows = ledger.rows(REFERENCES)
    assert sorted(rows) == REFERENCES
    assert {row.state for row in rows.values()} == {"fulfilled"}


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_claim_whose_commit_answer_was_lost_is_released_not_held_for_a_person(
    postgres_url: str, kind: str
) -> None:
    """The server committed the claim, and the connection was cut before its answer arrived:
    the action did not run, so the claim is given up (the next delivery fulfils the payment)
    rather than held until its lease ends and then read as ``unknown``."""
    url = fresh_database(postgres_url)
    with Ledger(url) as setup:
        setup.create_table()
    server = urllib.parse.urlsplit(url)
    assert server.port is not None
    ran: list[str] = []
    with LostCommitAnswer("127.0.0.1", server.port) as relay:
        relayed = url.replace(f":{server.port}/", f":{relay.port}/")
        made = (AsyncLedger if kind == "async" else Ledger)(relayed, create_table=False, timeout=2)
        ledger = EitherLedger(made)
        try:
            with pytest.raises(LedgerError, match="server closed the connection"):
                await ledger.fulfil_once(paid(), lambda payment: ran.append(payment.reference))
            assert relay.cut.is_set() and ran == []
            row = await ledger.row("order-1")
            assert row is not None and (row.state, row._claim_token) == ("released", None)
            with psycopg.connect(url) as database:
                found = database.execute("SELECT last_error FROM paysdk_fulfilments").fetchall()
            assert found[0][0].startswith("the claim's commit went unanswered; no action ran")
            again = await ledger.fulfil_once(paid(), lambda payment: ran.append(payment.reference))
        finally:
            await made.close() if isinstance(made, AsyncLedger) else made.close()
    assert again.fulfilled_now and ran == ["order-1"]

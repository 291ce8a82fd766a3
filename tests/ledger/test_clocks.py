"""Leases are decided by the database's clock, not by the workers' (which may be an hour off).

Worker B is a process run under libfaketime (Debian's faketime: ``make test`` installs it), its
clock an hour ahead or behind, against the real PostgreSQL server while worker A, in this
process, holds a claim. Only the worker's clock is faked: the server keeps the true time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import paysdk
from paysdk.ledger import Ledger
from tests.support.postgres import fresh_database, tool

WORKER = Path(__file__).resolve().parents[1] / "support" / "clock_worker.py"
HOUR = 3600


def deliver_with_clock(offset: str, url: str, effects: Path) -> dict[str, Any]:
    """Worker B delivers ``order-1`` with its clock moved by ``offset`` (``+1h``, ``-1h``).

    Args:
        offset: libfaketime's relative time, added to B's clock.
        url: the ledger's URL.
        effects: the file B's action appends to.
    """
    faketime = str(tool("faketime"))  # where scripts/find_postgres.py finds it, or what to install
    env = {**os.environ, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}  # timeouts keep the true pace
    command = [faketime, "-f", offset, sys.executable, str(WORKER), url, "order-1", "60"]
    done = subprocess.run(
        [*command, str(effects)], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    seen: dict[str, Any] = json.loads(done.stdout)
    return seen


def paid() -> paysdk.VerifiedPayment:
    return paysdk.VerifiedPayment(reference="order-1", amount=1000, currency="NGN", success=True)


def ran(effects: Path) -> list[str]:
    """Whose action ran: ``A`` (this process) or ``B`` (the worker), in order."""
    lines = effects.read_text().splitlines() if effects.exists() else []
    return ["A" if line.split()[2] == str(os.getpid()) else "B" for line in lines]


def ship_as_a(effects: Path) -> None:
    with open(effects, "a", encoding="utf-8") as out:
        out.write(f"done order-1 {os.getpid()}\n")


def test_a_worker_whose_clock_is_an_hour_ahead_never_takes_a_live_claim(
    postgres_url: str, tmp_path: Path
) -> None:
    url, effects = fresh_database(postgres_url), tmp_path / "effects.log"
    seen: list[dict[str, Any]] = []

    def ship_while_b_delivers(payment: paysdk.VerifiedPayment) -> str:
        seen.append(deliver_with_clock("+1h", url, effects))  # A's claim has 30 s to run
        ship_as_a(effects)
        return "shipped"

    with Ledger(url, lease=30) as worker_a:
        result = worker_a.fulfil_once(paid(), ship_while_b_delivers)  # B never ran it

    (b,) = seen
    assert HOUR - 60 < b["clock"] - time.time() < HOUR + 60  # B's clock was an hour ahead
    assert b["outcome"] == "in_progress"
    assert result.fulfilled_now
    assert ran(effects) == ["A"]  # B's action never ran


def test_a_worker_whose_clock_is_an_hour_behind_sees_an_expired_claim_as_unknown(
    postgres_url: str, tmp_path: Path
) -> None:
    url, effects = fresh_database(postgres_url), tmp_path / "effects.log"
    seen: list[dict[str, Any]] = []

    def hang_past_the_lease(payment: paysdk.VerifiedPayment) -> None:
        time.sleep(1.5)  # A's lease of 1 s is over, by the server's clock
        seen.append(deliver_with_clock("-1h", url, effects))
        ship_as_a(effects)

    with Ledger(url, lease=1) as worker_a:
        result = worker_a.fulfil_once(paid(), hang_past_the_lease)
        row = worker_a.row("order-1")

    (b,) = seen
    assert -HOUR - 60 < b["clock"] - time.time() < -HOUR + 60  # B's clock was an hour behind
    assert b["outcome"] == "unknown"  # expired by the server's clock: held, not run again
    assert ran(effects) == ["A"]
    assert result.fulfilled_now  # A, late, still recorded its own
    assert row is not None
    assert (row.state, row.attempts) == ("fulfilled", 1)

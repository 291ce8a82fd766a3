"""Row 6: ``Ledger.reconcile`` of a long list against a ledger of as many rows.

Reconcile streams the list and looks its payments up in the ledger a batch at a time, then pages
through the fulfilled rows: its time should be the list's transfer plus about one plain read of
the ledger, and its memory flat. Both baselines run in the same run, each job in a fresh process:
``iter_payments()`` of the same list (the transfer), and one plain ``SELECT`` of the same rows
through sqlite3. The ledger is a SQLite file seeded once, outside any timing, to match the bench
server's list: a fulfilled row for each completed payment, a refused one for each other.
"""

from __future__ import annotations

import sqlite3
import statistics
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._measure import JobFailed, JobResult, run_job
from ._results import MB, Goal, Result, failed, mb, seconds_text
from ._server import BLOCK, ListBody

if TYPE_CHECKING:
    from ._bench import Bench

__all__ = ["reconcile", "seed_ledger"]

WHEN = "2026-11-01T09:00:00.000000Z"


def _rows(count: int) -> Iterator[tuple[object, ...]]:
    """The ledger rows the bench server's list of ``count`` payments calls for, in its order."""
    from paysdk.sandbox import default_payments

    seed = [record.list_shape() for record in default_payments()]
    for n in range(count):
        payment = seed[(n % BLOCK) % len(seed)]
        paid = payment["status"] == "COMPLETED"
        yield (
            f"order-{n:09d}",
            "fulfilled" if paid else "refused",
            1 if paid else 0,
            payment["amount"],
            payment["currency"],
            WHEN,
            WHEN if paid else None,
            None if paid else "the payment failed",
        )


def seed_ledger(path: Path, count: int) -> None:
    """A SQLite ledger at ``path`` matching a list of ``count`` payments, in one transaction."""
    import paysdk

    with paysdk.Ledger(path) as ledger:
        ledger.create_table()
        table = ledger.table
    connection = sqlite3.connect(path)
    try:
        with connection:
            connection.executemany(
                f"INSERT INTO {table} (reference, state, attempts, amount, currency, "  # noqa: S608
                "claimed_at, fulfilled_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                _rows(count),
            )
    finally:
        connection.close()


def reconcile(bench: Bench) -> list[Result]:
    """Reconcile's time against the transfer and a plain read of the ledger; its peak RSS."""
    count, rounds = bench.sizes.reconcile_count, bench.sizes.list_rounds
    url = bench.server.base_url(count)
    row = f"6. reconcile {count:,} payments, SQLite"
    size = ListBody(count).length / MB
    print(f"\n{row} ({size:,.0f} MB list, a ledger of {count:,} rows); each job in a fresh process")
    runs: dict[str, list[JobResult]] = {"list-iter": [], "ledger-select": [], "reconcile": []}
    with tempfile.TemporaryDirectory() as tmp:
        ledger = Path(tmp) / "ledger.db"
        seed_ledger(ledger, count)
        params: dict[str, dict[str, Any]] = {
            "list-iter": {"base_url": url, "key": bench.key},
            "ledger-select": {"ledger": str(ledger)},
            "reconcile": {"base_url": url, "key": bench.key, "ledger": f"sqlite:///{ledger}"},
        }
        error = ""
        try:
            for _ in range(rounds):
                for name, job in runs.items():
                    result = run_job(name, **params[name])
                    if result.details["count"] != count:
                        raise JobFailed(f"{name} saw {result.details['count']} of {count}")
                    if result.details.get("problems"):
                        raise JobFailed(f"reconcile found {result.details['problems']} problems")
                    job.append(result)
        except JobFailed as exc:
            error = str(exc)
    for name, what in (
        ("list-iter", "Client.iter_payments()"),
        ("ledger-select", "one plain SELECT (sqlite3)"),
        ("reconcile", "Ledger.reconcile()"),
    ):
        _print_job(name, what, runs[name], error)
    return _results(row, runs, error)


def _results(row: str, runs: dict[str, list[JobResult]], error: str) -> list[Result]:
    """Reconcile's time (wall, then CPU) as a ratio to the transfer plus one read of the ledger,
    and to the transfer alone; its peak RSS in MB, with the transfer's for comparison."""
    measures = (
        "reconcile vs list + plain SELECT",
        "reconcile vs list + plain SELECT, CPU time",
        "reconcile vs list alone",
        "reconcile peak RSS",
    )
    if error or not all(runs.values()):
        return [failed(row, m, "-", error, "MB" if "RSS" in m else "x") for m in measures]

    def median(name: str) -> float:
        return statistics.median(r.seconds for r in runs[name])

    def cpu(name: str) -> float:
        return float(statistics.median(r.details["cpu_seconds"] for r in runs[name]))

    transfer, select, whole = median("list-iter"), median("ledger-select"), median("reconcile")
    both_cpu, whole_cpu = cpu("list-iter") + cpu("ledger-select"), cpu("reconcile")
    peak = max(r.peak_rss_bytes for r in runs["reconcile"])
    list_peak = max(r.peak_rss_bytes for r in runs["list-iter"])
    return [
        Result(
            row,
            measures[0],
            seconds_text(transfer + select),
            seconds_text(whole),
            whole / (transfer + select),
            goal=Goal("<=", 1.5),
        ),
        Result(
            row,
            measures[1],
            seconds_text(both_cpu),
            seconds_text(whole_cpu),
            whole_cpu / both_cpu,
        ),
        Result(row, measures[2], seconds_text(transfer), seconds_text(whole), whole / transfer),
        Result(
            row,
            measures[3],
            f"{mb(list_peak)} (list alone)",
            f"{mb(peak)} ({peak / list_peak:.2f}x)",
            peak / MB,
            unit="MB",
            goal=Goal("<", 100, "MB"),
        ),
    ]


def _print_job(role: str, what: str, runs: list[JobResult], error: str) -> None:
    if not runs:
        print(f"  {role:<14} {what:<28} FAILED: {error}")
        return
    seconds = statistics.median(r.seconds for r in runs)
    cpu = statistics.median(r.details["cpu_seconds"] for r in runs)
    peak = max(r.peak_rss_bytes for r in runs)
    print(
        f"  {role:<14} {what:<28} {seconds_text(seconds):>8} (CPU {seconds_text(cpu)})"
        f"   peak RSS {mb(peak):>7}"
    )

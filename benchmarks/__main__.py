"""``make bench``: each row of the performance table as a ratio to its baseline, both in one run.

    python -m benchmarks [--quick] [--only ROW ...] [--list-count N] [--reconcile-count N]

Starts the canned-answer server (benchmarks/_server.py) in a child process, runs each row (each
job in a fresh interpreter, see benchmarks/_jobs.py), prints its detail as it goes and, at the
end, a Markdown table for docs/performance.md. Exits 1 if a job failed; an unmet goal is a
result, not a failure. Numbers are read by people and never asserted.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import platform
import sys
import time
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from ._results import Result, table
from ._rows import FULL, QUICK, ROWS, Bench
from ._server import BenchServer

KEY = "sk_bench_0123456789"


def machine() -> str:
    """Where the numbers come from: cores, Python and the versions of what is measured."""
    versions = []
    for package in ("paysdk", "httpx", "pydantic", "pydantic-core", "aiohttp"):
        try:
            versions.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            versions.append(f"{package} (not installed)")
    return (
        f"{os.cpu_count()} cores, {platform.system()} {platform.machine()}, "
        f"Python {platform.python_version()}; " + ", ".join(versions)
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.splitlines()[0].replace("``", "")
    )
    parser.add_argument("--quick", action="store_true", help="little work: a smoke run in seconds")
    parser.add_argument(
        "--only", action="append", choices=list(ROWS), metavar="ROW",
        help=f"run only this row (repeatable): {', '.join(ROWS)}",
    )  # fmt: skip
    parser.add_argument(
        "--list-count", type=int, metavar="N", help="payments in row 1's list (default 1,000,000)"
    )
    parser.add_argument(
        "--reconcile-count",
        type=int,
        metavar="N",
        help="payments in row 6's list and rows in its ledger (default 1,000,000)",
    )
    parser.add_argument(
        "--list-rounds", type=int, metavar="N", help="rounds of row 1's jobs (default 1)"
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.list_count is not None:
        sizes = dataclasses.replace(sizes, list_count=args.list_count)
    if args.reconcile_count is not None:
        sizes = dataclasses.replace(sizes, reconcile_count=args.reconcile_count)
    if args.list_rounds is not None:
        sizes = dataclasses.replace(sizes, list_rounds=args.list_rounds)
    started = time.perf_counter()
    print(machine())
    command = " ".join(["python -m benchmarks", *(sys.argv[1:] if argv is None else argv)])
    print(f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC: {command}")
    results: list[Result] = []
    with BenchServer(KEY) as server:
        bench = Bench(server=server, key=KEY, sizes=sizes)
        for name in args.only or list(ROWS):
            results += ROWS[name](bench)
    print(f"\n{table(results)}\n\n({time.perf_counter() - started:.0f} s in all)")
    return 1 if any(r.value is None for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())

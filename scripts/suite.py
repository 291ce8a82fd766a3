"""The test suite in two passes: what can share the machine in parallel (pytest-xdist, one file
per worker at a time), then what needs the machine to itself (the ``serial`` tier), one test at a
time. ``make unit`` and each ``make matrix`` job run it; the tiers are ``tests/tiers.py``'s.

Usage: ``python scripts/suite.py [--tier all|full|smoke|once|serial] [--workers N] [PYTEST ARGS]``.

- ``all``: every test (``make test``).
- ``full``: every test that depends on the interpreter (a full matrix job): all but ``once``.
- ``smoke``: the subset for the Pythons between the support window's ends.
- ``once``: the interpreter-independent tests alone (packaging, docs site, benchmark reporting).
- ``serial``: the tests that need the machine to themselves alone.

Each pass's time goes to ``STEP_TIMES``'s file, for ``.ci/run``'s table (``scripts/steps.py``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from steps import record

ROOT = Path(__file__).resolve().parents[1]

SELECTIONS = {
    "all": "",
    "full": "not once",
    "smoke": "smoke and not once",
    "once": "once",
    "serial": "serial",
}
"""Each tier as a pytest ``-m`` expression; the passes add ``serial`` or ``not serial`` to it."""

NO_TESTS_COLLECTED = 5
"""pytest's exit code when a selection is empty: a pass with nothing of the tier's to run."""


def passes(tier: str) -> list[tuple[str, str]]:
    """The tier's passes, in order: each a name and the ``-m`` expression it runs."""
    selected = SELECTIONS[tier]

    def both(marker: str) -> str:
        return f"({selected}) and {marker}" if selected else marker

    return [("parallel", both("not serial")), ("serial", both("serial"))]


def worker_count() -> int:
    """One worker per core this process may use, at least two (so that a file waiting on a
    server overlaps another's work even on one core)."""
    return max(2, len(os.sched_getaffinity(0)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tier", choices=SELECTIONS, default="all")
    parser.add_argument("--workers", type=int, default=None, help="parallel pass's workers")
    parser.add_argument("--label", default="unit", help="the name its times are recorded under")
    args, pytest_args = parser.parse_known_args(argv)
    workers = args.workers or worker_count()
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args]
    empty = 0
    for name, expression in passes(args.tier):
        shared = ["-n", str(workers), "--dist", "loadfile"] if name == "parallel" else []
        print(f"\n== {args.label} ({args.tier}): {name} pass, -m {expression!r}", flush=True)
        started = time.monotonic()
        code = subprocess.call([*pytest, *shared, "-m", expression], cwd=ROOT)
        seconds = time.monotonic() - started
        record(f"{args.label} ({args.tier}): {name} pass", seconds)
        print(f"== {name} pass: {seconds:.0f} s", flush=True)
        empty += code == NO_TESTS_COLLECTED
        if code not in (0, NO_TESTS_COLLECTED):
            return code
    if empty == len(passes(args.tier)):
        print(f"no test of the {args.tier!r} tier was selected", file=sys.stderr)
        return NO_TESTS_COLLECTED
    return 0


if __name__ == "__main__":
    sys.exit(main())

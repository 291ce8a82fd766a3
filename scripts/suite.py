"""The test suite on every core: pytest-xdist runs each file on one worker, and the tests that
must not share the machine with each other (the ``serial`` tier: many-process races, restarts,
clocks, memory peaks, the benchmarks' rows) one after another on a worker of their own, started
first, while the other workers take the files. ``make unit`` and each ``make matrix`` job run it;
the tiers are ``tests/tiers.py``'s and the scheduling ``tests/conftest.py``'s.

Usage: ``python scripts/suite.py [--tier all|full|smoke|once|serial] [--workers N | --spare N]
[PYTEST ARGS]``.

- ``all``: every test (``make test``).
- ``full``: every test that depends on the interpreter (a full matrix job): all but ``once``.
- ``smoke``: the subset for the Pythons between the support window's ends.
- ``once``: the interpreter-independent tests alone (packaging, docs site, benchmark reporting).
- ``serial``: the tests that must not share the machine with each other, alone.

Its time goes to ``STEP_TIMES``'s file, for ``.ci/run``'s table (``scripts/steps.py``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from steps import TIMES, record

ROOT = Path(__file__).resolve().parents[1]

SELECTIONS = {
    "all": "",
    "full": "not once",
    "smoke": "smoke and not once and not serial",
    "once": "once",
    "serial": "serial",
}
"""Each tier as a pytest ``-m`` expression. The smoke tier leaves out the serial tests it would
hold (the memory peaks): the support window's ends measure them."""


def collected(tier: str) -> list[str]:
    """Where pytest looks for ``tier``'s tests, so that a job collects (imports) no more than it
    runs: the smoke tier's own files and directories; for the full tier, everything but the
    ``once`` tier's files; everything for the others."""
    sys.path.insert(0, str(ROOT))
    from tests.tiers import ONCE, SMOKE

    if tier == "smoke":
        return sorted({entry.partition("::")[0] for entry in SMOKE})
    if tier == "full":
        return [f"--ignore={entry}" for entry in ONCE if "::" not in entry]
    return []


UNSET = (TIMES, "PYTHONDONTWRITEBYTECODE")
"""The environment's variables the suite's processes run without."""


def worker_count(spare: int = 2) -> int:
    """One worker per core this process may use, and ``spare`` more: the serial tier's worker
    spends most of its time waiting on the processes and servers it started, and many files wait
    on subprocesses, servers and timeouts.

    Args:
        spare: workers beyond one per core: two when the suite has the machine to itself (``make
            test``), fewer where other suites share it (``make matrix``'s lanes).

    Returns:
        How many xdist workers.
    """
    return len(os.sched_getaffinity(0)) + spare


def command(tier: str, workers: int, pytest_args: Sequence[str] = ()) -> list[str]:
    """The pytest command line that runs ``tier`` on ``workers`` workers.

    Args:
        tier: a key of ``SELECTIONS``.
        workers: how many xdist workers.
        pytest_args: more of pytest's arguments (paths, ``-k``, ``-x``...).

    Returns:
        The command, to run from the repository's root.
    """
    selection = ["-m", SELECTIONS[tier]] if SELECTIONS[tier] else []
    return [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-n",
        str(workers),
        "--dist",
        "loadfile",
        "--no-loadscope-reorder",  # in collection order: the serial tier first
        *selection,
        *pytest_args,
        *collected(tier),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tier", choices=SELECTIONS, default="all")
    parser.add_argument("--workers", type=int, default=None, help="xdist workers")
    parser.add_argument(
        "--spare", type=int, default=2, help="workers beyond one per core (unless --workers)"
    )
    parser.add_argument("--label", default="unit", help="the name its time is recorded under")
    args, pytest_args = parser.parse_known_args(argv)
    workers = args.workers or worker_count(args.spare)
    print(f"\n== {args.label}: the {args.tier} tier on {workers} workers", flush=True)
    started = time.monotonic()
    # The tests run scripts that record times too (the matrix's): not into this run's table.
    # And they write bytecode even where PYTHONDONTWRITEBYTECODE is set (many CI images): the
    # suite's hundreds of Python processes would each compile paysdk, its tests (pytest's
    # rewritten asserts) and the frameworks again. The caches are .gitignore'd.
    env = {name: value for name, value in os.environ.items() if name not in UNSET}
    code = subprocess.call(command(args.tier, workers, pytest_args), cwd=ROOT, env=env)
    seconds = time.monotonic() - started
    record(f"{args.label} ({args.tier} tier)", seconds)
    print(f"== {args.label}: {seconds:.0f} s", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())

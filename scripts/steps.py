"""Run make targets one after another and say how long each took: ``make test``'s steps, so that
the next slowdown shows in the table the day it starts.

Usage:
  ``python scripts/steps.py TARGET ...``: run ``make TARGET`` for each in turn, stopping at the
  first that fails, then print the table of their times.
  ``python scripts/steps.py --table FILE``: print the table of the times recorded in FILE.

Every step, and each pass or job the steps record themselves (``scripts/suite.py``,
``scripts/matrix.py``), appends ``name<TAB>seconds`` to the file named by ``STEP_TIMES`` when it is
set; ``.ci/run`` sets it and prints the whole run's table at the end. Standard library only: it
runs before ``.venv`` exists.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMES = "STEP_TIMES"
"""The environment variable naming the file each step appends its time to."""


def record(name: str, seconds: float) -> None:
    """Append ``name``'s time to the file ``STEP_TIMES`` names, if it names one.

    Args:
        name: what took the time, as the table will show it.
        seconds: how long it took.
    """
    path = os.environ.get(TIMES)
    if path:
        with open(path, "a", encoding="utf-8") as sink:
            sink.write(f"{name}\t{seconds:.0f}\n")


def table(rows: Sequence[tuple[str, float]], title: str) -> str:
    """The rows as a table of minutes and seconds, under ``title``."""
    width = max([len(name) for name, _ in rows] + [len(title)])
    lines = [title, "-" * (width + 10)]
    lines += [f"{name:<{width}}  {int(s) // 60:3d}:{int(s) % 60:02d}" for name, s in rows]
    return "\n".join(lines)


def read(path: Path) -> list[tuple[str, float]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        name, _, seconds = line.rpartition("\t")
        if name:
            rows.append((name, float(seconds)))
    return rows


def run(targets: Sequence[str]) -> int:
    make = os.environ.get("MAKE", "make")
    done: list[tuple[str, float]] = []
    code = 0
    for target in targets:
        started = time.monotonic()
        code = subprocess.call([make, "--no-print-directory", target], cwd=ROOT)
        seconds = time.monotonic() - started
        name = f"make {target}" + ("" if code == 0 else f" (failed, exit {code})")
        done.append((name, seconds))
        record(name, seconds)
        if code != 0:
            break
    done.append(("total", sum(seconds for _, seconds in done)))
    print("\n" + table(done, "step times (min:s)"), flush=True)
    return code


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["--table"] and len(argv) == 2:
        rows = read(Path(argv[1]))
        print("\n" + table(rows, "step times of this run (min:s)"), flush=True)
        return 0
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    return run(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Run make targets and say how long each took: ``make test``'s steps, so that the next slowdown
shows in the table the day it starts.

Usage:
  ``python scripts/steps.py TARGET ... [--beside TARGET ...]``: run ``make TARGET`` for each in
  turn, stopping at the first that fails, then print the table of their times. The targets after
  ``--beside`` run one after another while the last target before it runs: ``make test`` checks
  lint, types, the docs and the wheel while the suite's workers wait on their servers, with
  their output held and shown after the suite's.
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
import threading
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


def make(target: str, **options: object) -> subprocess.CompletedProcess[bytes]:
    """``make target`` in the repository's root, with ``subprocess.run``'s ``options``."""
    command = [os.environ.get("MAKE", "make"), "--no-print-directory", target]
    return subprocess.run(command, cwd=ROOT, check=False, **options)  # type: ignore[call-overload,no-any-return]


def outcome(target: str, code: int) -> str:
    return f"make {target}" + ("" if code == 0 else f" (failed, exit {code})")


class Beside(threading.Thread):
    """Targets run one after another, output held, while the main step runs; stops at the first
    that fails."""

    def __init__(self, targets: Sequence[str]) -> None:
        super().__init__(daemon=True)
        self.targets = targets
        self.done: list[tuple[str, float]] = []
        self.output: list[tuple[str, bytes]] = []
        self.code = 0

    def run(self) -> None:
        for target in self.targets:
            started = time.monotonic()
            done = make(target, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            seconds = time.monotonic() - started
            name = outcome(target, done.returncode)
            self.done.append((f"{name} (beside)", seconds))
            self.output.append((name, done.stdout))
            record(name, seconds)
            if done.returncode != 0:
                self.code = done.returncode
                return

    def show(self) -> None:
        """Print each target's held output under its name."""
        for name, output in self.output:
            print(f"\n== {name} ==", flush=True)
            sys.stdout.buffer.write(output)
            sys.stdout.flush()


def run(targets: Sequence[str], beside: Sequence[str] = ()) -> int:
    """Run ``targets`` in turn, ``beside`` beside the last of them; print the table of times.

    Args:
        targets: make targets, run one after another, stopping at the first that fails.
        beside: make targets run one after another while the last of ``targets`` runs.

    Returns:
        0, or the exit status of the first target that failed.
    """
    done: list[tuple[str, float]] = []
    code = 0
    started_all = time.monotonic()
    alongside = Beside(beside)
    for index, target in enumerate(targets):
        if index == len(targets) - 1 and beside:
            alongside.start()
        started = time.monotonic()
        code = make(target).returncode
        seconds = time.monotonic() - started
        done.append((outcome(target, code), seconds))
        record(done[-1][0], seconds)
        if code != 0:
            break
    if alongside.is_alive() or alongside.done:
        alongside.join()
        alongside.show()
        done += alongside.done
        code = code or alongside.code
    done.append(("total", time.monotonic() - started_all))
    print("\n" + table(done, "step times (min:s)"), flush=True)
    return code


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["--table"] and len(argv) == 2:
        rows = read(Path(argv[1]))
        print("\n" + table(rows, "step times of this run (min:s)"), flush=True)
        return 0
    cut = argv.index("--beside") if "--beside" in argv else len(argv)
    targets, beside = list(argv[:cut]), list(argv[cut + 1 :])
    if not targets or any(target.startswith("-") for target in (*targets, *beside)):
        print(__doc__, file=sys.stderr)
        return 2
    return run(targets, beside)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

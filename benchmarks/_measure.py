"""How the benchmarks time things: A and B interleaved, jobs in child processes, cold imports.

Everything here compares a candidate with its baseline *in the same run*, alternating them
(A B, B A, A B, ...), and reports the median of the per-round ratios: load from other processes
on the machine then slows both sides of a round alike, and one disturbed round moves the median
little, where a single ratio of two totals would take the whole disturbance.
"""

from __future__ import annotations

import gc
import itertools
import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
"""The repository: child processes run here so ``python -m benchmarks...`` finds the package."""
JOB_TIMEOUT: Final = 900.0
"""Seconds a child job may take: a million-payment list_payments() takes about a minute."""


@dataclass(frozen=True)
class Paired:
    """Seconds per round of a baseline and a candidate, measured alternately."""

    baseline: Sequence[float]
    candidate: Sequence[float]

    @property
    def ratios(self) -> list[float]:
        """Candidate over baseline per round: 1.00 is no cost, 2.00 twice the time."""
        return [c / b for b, c in zip(self.baseline, self.candidate, strict=True)]

    @property
    def ratio(self) -> float:
        """The median per-round ratio of the candidate's time to the baseline's."""
        return statistics.median(self.ratios)

    @property
    def speedup(self) -> float:
        """The median per-round ratio of the candidate's throughput to the baseline's."""
        return statistics.median(b / c for b, c in zip(self.baseline, self.candidate, strict=True))


def paired(baseline: Callable[[], float], candidate: Callable[[], float], rounds: int) -> Paired:
    """Run both ``rounds`` times, alternating which goes first; each call returns its seconds."""
    base, cand = interleaved((baseline, candidate), rounds)
    return Paired(base, cand)


def interleaved(runs: Sequence[Callable[[], float]], rounds: int) -> list[list[float]]:
    """Run each ``rounds`` times, each round in the next of every order of the runs (A B, B A;
    A B C, A C B, B A C, ...), so over whole cycles each runs before each other as often as
    after; the seconds each call returned, run by run."""
    orders = list(itertools.permutations(range(len(runs))))
    seconds: list[list[float]] = [[] for _ in runs]
    for round_ in range(rounds):
        for which in orders[round_ % len(orders)]:
            seconds[which].append(runs[which]())
    return seconds


def timed(
    fn: Callable[[], object],
    calls: int,
    *,
    cpu: list[float] | None = None,
    collect: bool = False,
) -> Callable[[], float]:
    """A callable that makes ``calls`` calls of ``fn`` and returns the wall seconds they took.

    ``cpu`` collects this process's CPU seconds for the same calls: on a shared machine it moves
    far less than wall time when other processes take the cores. ``collect`` runs the cyclic
    GC before each timing (outside it), so every timing starts from the same heap.
    """

    def run() -> float:
        if collect:
            gc.collect()
        cpu_start, start = time.process_time(), time.perf_counter()
        for _ in range(calls):
            fn()
        wall = time.perf_counter() - start
        if cpu is not None:
            cpu.append(time.process_time() - cpu_start)
        return wall

    return run


def peak_rss(usage: resource.struct_rusage) -> int:
    """``ru_maxrss`` in bytes: Linux counts kilobytes, macOS bytes."""
    return usage.ru_maxrss if sys.platform == "darwin" else usage.ru_maxrss * 1024


# --- jobs in child processes ------------------------------------------------------------------


class JobFailed(Exception):
    """A child job failed: it exited with an error (the message is the last line it wrote to
    stderr), ran past its timeout, or printed no report the parent could read."""


@dataclass(frozen=True)
class JobResult:
    """What a job in a child process measured, and how much memory that process ever held."""

    seconds: float
    """Wall time of the measured work alone: no interpreter start-up, imports or set-up."""
    peak_rss_bytes: int
    """``ru_maxrss`` of the child at the end: the most memory it ever had resident."""
    ready_rss_bytes: int
    """``ru_maxrss`` just before the measured work began (after imports and set-up)."""
    details: dict[str, Any] = field(default_factory=dict)


def run_job(
    name: str,
    *,
    job_timeout: float = JOB_TIMEOUT,
    module: str = "benchmarks._jobs",
    **params: Any,
) -> JobResult:
    """Run job ``name`` of ``module`` (:mod:`benchmarks._jobs`, or one whose ``main`` is that
    module's) in a fresh interpreter and return what it reported.

    Whatever goes wrong with the child is :class:`JobFailed`, so its row shows FAILED and the
    run goes on.
    """
    command = [sys.executable, "-m", module, name, json.dumps(params)]
    try:
        done = subprocess.run(  # noqa: S603 - our own interpreter and module
            command, capture_output=True, text=True, cwd=ROOT, timeout=job_timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise JobFailed(f"{name}: did not finish within {job_timeout:g}s") from None
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        raise JobFailed(f"{name}: {lines[-1]}")
    return JobResult(**_report(name, done.stdout))


def _report(name: str, stdout: str) -> dict[str, Any]:
    """The fields of a :class:`JobResult` from the last line a job printed."""
    lines = stdout.strip().splitlines()
    if not lines:
        raise JobFailed(f"{name}: printed no report")
    try:
        report = json.loads(lines[-1])
        return {
            "seconds": float(report.pop("seconds")),
            "peak_rss_bytes": int(report.pop("peak_rss_bytes")),
            "ready_rss_bytes": int(report.pop("ready_rss_bytes")),
            "details": report,
        }
    except (ValueError, TypeError, KeyError, AttributeError):
        raise JobFailed(f"{name}: printed no report, but {lines[-1][:200]!r}") from None


def command_seconds(code: str, cpu: list[float] | None = None) -> float:
    """Wall time of ``python -c code`` in a fresh interpreter: start-up and imports included.

    ``cpu`` collects the CPU seconds that interpreter used (from ``RUSAGE_CHILDREN``).
    """
    before = _children_cpu()
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)  # noqa: S603
    wall = time.perf_counter() - start
    if cpu is not None:
        cpu.append(_children_cpu() - before)
    return wall


def compile_paysdk() -> None:
    """Write paysdk's bytecode, as ``pip install`` does for a wheel.

    An editable checkout run with ``PYTHONDONTWRITEBYTECODE=1`` would otherwise compile every
    module from source at each start, which no installed copy does, while httpx and pydantic
    start from the bytecode pip wrote for them.
    """
    import paysdk

    package = str(Path(paysdk.__file__).parent)
    subprocess.run(  # noqa: S603 - our own interpreter and package
        [sys.executable, "-m", "compileall", "-q", package], check=True, cwd=ROOT
    )


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime

"""How a row reports a comparison timed in rounds: the wall-time result judged against its goal,
the CPU time of the same rounds as context, and the per-round ratios printed as they come."""

from __future__ import annotations

import statistics
import subprocess
from collections.abc import Callable

from ._measure import JobFailed, JobResult, Paired, command_seconds, compile_paysdk, paired
from ._results import Goal, Result, failed, seconds_text

__all__ = ["compare_commands", "pair_results", "paired_job", "print_pair", "warm"]


def paired_job(
    row: str,
    measure: str,
    labels: tuple[str, str],
    goal: Goal | None,
    run: Callable[[], JobResult],
    calls: int = 1,
    wall: bool = True,
) -> list[Result]:
    """Results of a job that timed both sides alternately, ``calls`` calls a round.

    The goal is judged on wall time, what a user waits; the CPU time of the same rounds follows
    as context, steadier when other processes share the cores. ``wall=False`` reports CPU alone.
    """
    try:
        job = run()
    except JobFailed as exc:
        return [failed(row, measure, "-", str(exc))]
    details = job.details
    return pair_results(
        row,
        measure,
        labels,
        goal,
        Paired(details["baseline"], details["candidate"]) if wall else None,
        Paired(details["baseline_cpu"], details["candidate_cpu"]),
        calls,
    )


def pair_results(
    row: str,
    measure: str,
    labels: tuple[str, str],
    goal: Goal | None,
    wall: Paired | None,
    cpu: Paired | None = None,
    calls: int = 1,
    roles: tuple[str, str] = ("baseline", "paysdk"),
) -> list[Result]:
    """The wall-time result (judged against ``goal``) and the CPU-time one (context)."""
    results: list[Result] = []
    for clock, pair in (("wall", wall), ("CPU", cpu)):
        if pair is None:
            continue
        print_pair(f"{labels[0]} ({clock})", f"{labels[1]} ({clock})", pair, calls, roles)
        base = seconds_text(statistics.median(pair.baseline) / calls)
        cand = seconds_text(statistics.median(pair.candidate) / calls)
        if clock == "wall":
            results.append(Result(row, measure, base, cand, pair.ratio, goal=goal))
        else:
            results.append(Result(row, f"{measure}, CPU time", base, cand, pair.ratio))
    return results


def print_pair(
    baseline: str,
    candidate: str,
    pair: Paired,
    calls: int = 1,
    roles: tuple[str, str] = ("baseline", "paysdk"),
) -> None:
    base = statistics.median(pair.baseline) / calls
    cand = statistics.median(pair.candidate) / calls
    each = " per call" if calls > 1 else ""
    print(f"  {roles[0]:<9} {baseline:<34} {seconds_text(base):>10}{each} (median)")
    print(f"  {roles[1]:<9} {candidate:<34} {seconds_text(cand):>10}{each} (median)")
    print("  ratios by round: " + " ".join(f"{r:.2f}" for r in pair.ratios))


def compare_commands(
    row: str, measure: str, baseline: str, candidate: str, pairs: int, goal: Goal | None
) -> list[Result]:
    cpu: tuple[list[float], list[float]] = ([], [])
    try:
        warm(baseline, candidate)
        wall = paired(
            lambda: command_seconds(baseline, cpu[0]),
            lambda: command_seconds(candidate, cpu[1]),
            pairs,
        )
    except subprocess.CalledProcessError as exc:
        return [failed(row, measure, "-", f"python -c failed with exit status {exc.returncode}")]
    labels = (f"python -c {baseline.splitlines()[0][:14]}...", "python -c import paysdk...")
    return pair_results(row, measure, labels, goal, wall, Paired(*cpu))


def warm(*commands: str) -> None:
    compile_paysdk()  # as pip does on install; PYTHONDONTWRITEBYTECODE may be set here
    for code in commands:  # warm the disk cache and the bytecode of each
        command_seconds(code)

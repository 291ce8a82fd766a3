"""The benchmarks' measuring and judging: alternation, medians, child jobs, goals."""

from __future__ import annotations

import shutil
import socket
import sys
import time
from collections.abc import Callable

import pytest

from benchmarks._measure import JobFailed, Paired, interleaved, paired, run_job
from benchmarks._results import Goal, Result, failed, table
from tests.support.ports import unused_port


def test_paired_alternates_which_side_goes_first_and_takes_the_median_ratio() -> None:
    order: list[str] = []
    base_times = iter([1.0, 2.0, 1.0, 4.0])
    cand_times = iter([2.0, 3.0, 3.0, 4.0])

    def baseline() -> float:
        order.append("A")
        return next(base_times)

    def candidate() -> float:
        order.append("B")
        return next(cand_times)

    result = paired(baseline, candidate, 4)
    assert order == ["A", "B", "B", "A", "A", "B", "B", "A"]
    assert result.ratios == [2.0, 1.5, 3.0, 1.0]
    assert result.ratio == 1.75
    assert Paired([2.0, 1.0, 9.0], [1.0, 1.0, 1.0]).speedup == 2.0


def test_interleaved_runs_each_round_in_the_next_order_and_keeps_each_runs_seconds() -> None:
    order: list[str] = []

    def run(name: str, seconds: float) -> Callable[[], float]:
        def timed() -> float:
            order.append(name)
            return seconds + len(order) / 100

        return timed

    result = interleaved([run("A", 1), run("B", 2), run("C", 3)], 7)
    assert " ".join("".join(order[n : n + 3]) for n in range(0, 21, 3)) == (
        "ABC ACB BAC BCA CAB CBA ABC"
    )
    assert result[0][:3] == pytest.approx([1.01, 1.04, 1.08])
    assert [len(seconds) for seconds in result] == [7, 7, 7]


def test_a_job_reports_its_seconds_and_the_memory_it_held() -> None:
    result = run_job("parse", count=50, rounds=2)
    assert len(result.details["baseline"]) == len(result.details["candidate"]) == 2
    assert 0 < result.ready_rss_bytes <= result.peak_rss_bytes
    assert result.seconds >= sum(result.details["baseline"])


def test_a_failing_job_raises_with_the_childs_error() -> None:
    port = unused_port()
    with pytest.raises(JobFailed, match=r"list-json: httpx\.ConnectError"):
        run_job("list-json", base_url=f"http://127.0.0.1:{port}", key="sk_unused")


def test_a_job_that_hangs_fails_at_its_timeout() -> None:
    with socket.socket() as silent:  # accepts connections (the kernel does), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(JobFailed, match=r"^list-json: did not finish within 1\.5s$"):
            run_job(
                "list-json", job_timeout=1.5, base_url=f"http://127.0.0.1:{port}", key="sk_unused"
            )
        assert time.monotonic() - started < 10


@pytest.mark.parametrize(
    ("program", "message"),
    [
        ("true", r"^parse: printed no report$"),  # exits 0, prints nothing
        ("echo", r"^parse: printed no report, but '-m benchmarks\._jobs parse "),  # not JSON
    ],
)
def test_a_job_without_a_report_fails_with_a_clear_message(
    monkeypatch: pytest.MonkeyPatch, program: str, message: str
) -> None:
    executable = shutil.which(program)
    assert executable is not None
    monkeypatch.setattr(sys, "executable", executable)  # the "interpreter" run_job starts
    with pytest.raises(JobFailed, match=message):
        run_job("parse", count=1, rounds=1)


@pytest.mark.parametrize(
    ("goal", "value", "verdict"),
    [
        (Goal("<=", 1.1), 1.1, "met"),
        (Goal("<=", 1.1), 1.11, "NOT met"),
        (Goal(">=", 10.0), 10.0, "met"),
        (Goal(">=", 10.0), 9.99, "NOT met"),
        (Goal("<", 100, "MB"), 100, "NOT met"),
        (Goal("<", 100, "MB"), 99.9, "met"),
        (None, 3.0, "context"),
    ],
)
def test_a_result_is_judged_against_its_goal(goal: Goal | None, value: float, verdict: str) -> None:
    assert Result("row", "measure", "1 s", "2 s", value, goal=goal).verdict == verdict


def test_a_failed_measure_shows_its_error_and_no_figure() -> None:
    result = failed("1. list", "iter_payments() time", "8.71 s", "list-iter: AttributeError: ...")
    assert result.verdict == "FAILED: list-iter: AttributeError: ..."
    assert result.figure == "-"
    assert "| 1. list | iter_payments() time | 8.71 s | - | - | - | FAILED" in table([result])

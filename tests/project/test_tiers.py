"""The tiers (tests/tiers.py) and how they run (scripts/suite.py, scripts/matrix.py): every entry
names tests that exist, every test runs in exactly one pass, and the matrix spends its full suites
on the support window's ends."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.scripts import load_script
from tests.tiers import TIERS, tiers_of

ROOT = Path(__file__).resolve().parents[2]
suite = load_script("suite")
matrix = load_script("matrix")
steps = load_script("steps")
SAMPLE = [
    "tests/ledger/test_races.py",  # serial
    "tests/ledger/test_reconcile.py",  # one test of it serial
    "tests/benchmarks/test_rows.py",  # serial and once
    "tests/benchmarks/test_measure.py",  # once
    "tests/core/test_expected.py",  # smoke
    "tests/ledger/test_set_aside.py",  # none
]
"""Files of every kind of tier, for a collection that stays quick."""


@pytest.mark.parametrize(("tier", "entry"), [(t, e) for t, es in TIERS.items() for e in es])
def test_each_entry_names_a_test_file_or_directory_that_exists(tier: str, entry: str) -> None:
    path, _, name = entry.partition("::")
    assert (ROOT / path).exists(), f"{tier}: {path} does not exist"
    if name:
        assert f"def {name}" in (ROOT / path).read_text(encoding="utf-8"), f"{tier}: {entry}"


def test_a_test_is_in_each_tier_one_of_whose_entries_is_a_prefix_of_its_id() -> None:
    assert tiers_of("tests/ledger/test_races.py::test_x[sqlite]") == ["serial"]
    assert tiers_of("tests/benchmarks/test_rows.py::test_y") == ["serial", "once"]
    assert tiers_of("tests/client/test_clients.py::test_z") == ["smoke"]
    assert tiers_of("tests/ledger/test_sqlalchemy.py::test_w") == []


def test_the_serial_tier_runs_on_one_worker_first_and_each_file_on_one_worker() -> None:
    """Collected for real: each tier's selection is what tests/tiers.py says; with
    the serial tests are collected first."""

    def collected(*argv: str) -> list[str]:
        base = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        result = subprocess.run(
            [*base, *argv, *SAMPLE], cwd=ROOT, capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return [line for line in result.stdout.splitlines() if "::" in line]

    everything = collected()
    serial = [test for test in everything if "serial" in tiers_of(test)]
    assert serial and everything[: len(serial)] == serial
    assert any(test.startswith("tests/ledger/test_races.py") for test in serial)
    for tier in ("once", "smoke", "serial"):
        chosen = set(collected("-m", suite.SELECTIONS[tier]))
        assert chosen == {test for test in everything if tier in tiers_of(test)}, tier
    assert set(collected("-m", suite.SELECTIONS["full"])) == {
        test for test in everything if "once" not in tiers_of(test)
    }


def test_the_serial_tests_share_one_worker_and_each_file_keeps_to_one() -> None:
    """Run for real on three workers: which worker ran each test."""
    quick = ["tests/core/test_expected.py", "tests/core/test_references.py"]
    serial = ["tests/transport/test_memory.py", "tests/ledger/test_clocks.py"]
    memory = [*serial, "-k", "not test_memory or sync-200MB or sync-endless"]
    options = ["-v", "-p", "no:cacheprovider", "-n", "3", "--dist", "loadfile"]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *options, *quick, *memory],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    workers: dict[str, set[str]] = {}
    for worker, test in re.findall(r"^\[(gw\d+)\] \[ *\d+%\] PASSED (.+?) *$", result.stdout, re.M):
        group = "serial" if "serial" in tiers_of(test) else test.partition("::")[0]
        workers.setdefault(group, set()).add(worker)
    assert set(workers) == {"serial", *quick}, result.stdout
    assert all(f"PASSED {path}::" in result.stdout for path in serial)
    assert all(len(ran_on) == 1 for ran_on in workers.values()), workers


def test_the_suite_runs_a_tier_by_file_on_every_core_and_one_more() -> None:
    command = suite.command("smoke", 3, ["-x"])
    assert command[command.index("-n") + 1] == "3"
    assert command[command.index("--dist") + 1] == "loadfile"
    assert command[-4:] == ["--no-loadscope-reorder", "-m", "smoke and not once", "-x"]
    assert suite.command("all", 3)[-1] == "--no-loadscope-reorder"
    assert suite.worker_count() == len(os.sched_getaffinity(0)) + 1


def test_the_matrix_runs_the_full_suite_at_both_ends_and_the_smoke_tier_between() -> None:
    jobs = {job.name: job.tier for job in matrix.JOBS}
    assert jobs == {
        "3.10-lowest": "full",
        "3.10-newest": "smoke",
        "3.12-newest": "smoke",
        "3.13-newest": "smoke",
        "3.14-newest": "smoke",
        "3.15-newest": "full",
    }
    assert {job.tier for job in matrix.in_full(matrix.JOBS)} == {"full"}
    command = matrix.JOBS[0].suite("/venv/bin/python", "/src")
    assert command[:2] == ["/venv/bin/python", "/src/scripts/suite.py"]
    assert command[command.index("--tier") + 1] == "full"


def test_each_step_s_time_is_recorded_and_tabled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    times = tmp_path / "times.tsv"
    monkeypatch.setenv("STEP_TIMES", str(times))
    steps.record("make lint", 12.4)
    steps.record("unit (all): parallel pass", 185)
    rows = steps.read(times)
    assert rows == [("make lint", 12.0), ("unit (all): parallel pass", 185.0)]
    table = steps.table(rows, "step times (min:s)").splitlines()
    assert table[0] == "step times (min:s)"
    assert table[2].split() == ["make", "lint", "0:12"]
    assert table[3].endswith("  3:05")

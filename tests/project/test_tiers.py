"""The tiers (tests/tiers.py) and how they run (scripts/suite.py, scripts/matrix.py): every entry
names tests that exist, the serial tier runs on one worker of its own, and the matrix spends its
full suites on the support window's ends."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests import conftest
from tests.conftest import worker_group
from tests.support.scheduling import LONGEST
from tests.support.scripts import load_script
from tests.tiers import TIERS, tiers_of

ROOT = Path(__file__).resolve().parents[2]
suite = load_script("suite")
matrix = load_script("matrix")
steps = load_script("steps")


@pytest.mark.parametrize(("tier", "entry"), [(t, e) for t, es in TIERS.items() for e in es])
def test_each_entry_names_a_test_file_or_directory_that_exists(tier: str, entry: str) -> None:
    path, _, name = entry.partition("::")
    assert (ROOT / path).exists(), f"{tier}: {path} does not exist"
    if name:
        assert f"def {name}" in (ROOT / path).read_text(encoding="utf-8"), f"{tier}: {entry}"


def test_each_of_the_longest_files_exists_once() -> None:
    assert [path for path in LONGEST if not (ROOT / path).is_file()] == []
    assert len(set(LONGEST)) == len(LONGEST)


def test_a_test_is_in_each_tier_one_of_whose_entries_is_a_prefix_of_its_id() -> None:
    assert tiers_of("tests/ledger/test_races.py::test_x[sqlite]") == ["serial"]
    assert tiers_of("tests/benchmarks/test_rows.py::test_y") == ["serial", "once"]
    assert tiers_of("tests/client/test_clients.py::test_z") == ["smoke"]
    assert tiers_of("tests/ledger/test_sqlalchemy.py::test_w") == []


class Item:
    """As much of a collected test as the tests' conftest reads and writes."""

    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid
        self.marks: list[str] = []

    def add_marker(self, mark: str | pytest.MarkDecorator) -> None:
        self.marks.append(mark if isinstance(mark, str) else mark.name)

    def get_closest_marker(self, name: str) -> str | None:
        return name if name in self.marks else None


def test_each_test_is_marked_with_its_tiers_and_the_serial_tier_then_the_longest_run_first() -> (
    None
):
    from tests.conftest import pytest_collection_modifyitems

    items = [
        Item("tests/core/test_expected.py::test_a"),
        Item("tests/ledger/test_set_aside.py::test_b[sqlite]"),
        Item("tests/ledger/test_races.py::test_c[postgres]"),
        Item("tests/benchmarks/test_measure.py::test_d"),
        Item("tests/benchmarks/test_rows.py::test_e[import]"),
        Item("tests/ledger/test_ledger.py::test_f"),
        Item("tests/project/test_docs_shell.py::test_g"),
        Item("tests/ledger/test_ledger.py::test_h"),
    ]
    pytest_collection_modifyitems(items)  # type: ignore[arg-type]
    assert [(item.nodeid.split("/")[-1], item.marks) for item in items] == [
        ("test_races.py::test_c[postgres]", ["serial"]),
        ("test_rows.py::test_e[import]", ["serial", "once"]),
        ("test_docs_shell.py::test_g", ["once"]),  # the longest files next, longest first
        ("test_ledger.py::test_f", ["smoke"]),
        ("test_ledger.py::test_h", ["smoke"]),
        ("test_expected.py::test_a", ["smoke"]),
        ("test_set_aside.py::test_b[sqlite]", []),
        ("test_measure.py::test_d", ["once"]),
    ]


SCHEDULED_PROJECT_CONFTEST = """
import sys

sys.path.insert(0, {root!r})
from tests.support.scheduling import scheduler_by


def group_of(nodeid):
    path = nodeid.partition("::")[0]
    return "serial" if path.startswith("test_serial") else path


pytest_xdist_make_scheduler = scheduler_by(group_of)
"""

SCHEDULED_PROJECT_TEST = """
import time

import pytest


@pytest.mark.parametrize("n", range(4))
def test_takes_a_moment(n):
    time.sleep(0.1)
"""


def test_each_group_of_tests_runs_on_one_worker_of_three(tmp_path: Path) -> None:
    """Run for real on three workers, in a project of four files two of which form one group:
    which worker ran each test."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(SCHEDULED_PROJECT_CONFTEST.format(root=str(ROOT)))
    files = ["test_serial_a.py", "test_serial_b.py", "test_quick_a.py", "test_quick_b.py"]
    for name in files:
        (tmp_path / name).write_text(SCHEDULED_PROJECT_TEST)
    # xdist alone of the installed plugins: each of the four processes would import the rest
    plugins = ["-p", "no:cacheprovider", "-p", "xdist.plugin"]
    options = ["-v", *plugins, "-n", "3", "--dist", "loadfile"]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *options],
        cwd=tmp_path,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    workers: dict[str, set[str]] = {}
    ran = re.findall(r"^\[(gw\d+)\] \[ *\d+%\] PASSED (.+?) *$", result.stdout, re.M)
    for worker, test in ran:
        group = "serial" if test.startswith("test_serial") else test.partition("::")[0]
        workers.setdefault(group, set()).add(worker)
    assert len(ran) == 16, result.stdout
    assert set(workers) == {"serial", "test_quick_a.py", "test_quick_b.py"}, result.stdout
    assert all(len(ran_on) == 1 for ran_on in workers.values()), workers


def test_the_suite_groups_the_serial_tier_and_each_other_file() -> None:
    assert worker_group("tests/ledger/test_races.py::test_x[postgres]") == "serial"
    assert worker_group("tests/transport/test_memory.py::test_y") == "serial"
    assert worker_group("tests/core/test_expected.py::test_z[1]") == "tests/core/test_expected.py"
    assert conftest.pytest_xdist_make_scheduler.__name__ == "pytest_xdist_make_scheduler"


def test_the_suite_runs_a_tier_by_file_on_every_core_and_two_more() -> None:
    command = suite.command("smoke", 3, ["-x"])
    assert command[command.index("-n") + 1] == "3"
    assert command[command.index("--dist") + 1] == "loadfile"
    marks = command.index("-m", command.index("--no-loadscope-reorder"))
    assert command[marks - 1 : marks + 3] == [
        "--no-loadscope-reorder", "-m", "smoke and not once and not serial", "-x"
    ]  # fmt: skip
    paths = command[marks + 3 :]  # the smoke tier collects its own files alone
    assert all(entry.startswith(tuple(paths)) for entry in TIERS["smoke"])
    assert all((ROOT / path).exists() for path in paths)
    assert suite.command("all", 3)[-1] == "--no-loadscope-reorder"
    full = suite.command("full", 3)  # the once tier's files are not even imported
    ignored = {arg.removeprefix("--ignore=") for arg in full if arg.startswith("--ignore=")}
    assert ignored == {entry for entry in TIERS["once"] if "::" not in entry}
    assert all((ROOT / path).exists() for path in ignored)
    assert suite.worker_count() == len(os.sched_getaffinity(0)) + 2
    assert suite.worker_count(1) == len(os.sched_getaffinity(0)) + 1


def test_the_matrix_runs_the_full_suite_at_both_ends_and_the_smoke_tier_between() -> None:
    jobs = {job.name: job.tier for job in matrix.JOBS}
    assert jobs == {
        "3.10-lowest": "full",
        "3.10-newest": "smoke",
        "3.12-newest-httpx2": "smoke",
        "3.13-newest": "smoke",
        "3.14-newest": "smoke",
        "3.15-newest": "full",
    }
    assert {job.tier for job in matrix.in_full(matrix.JOBS)} == {"full"}
    each_change = matrix.selected(matrix.JOBS, [], full=False)
    assert [job.name for job in matrix.JOBS if job not in each_change] == ["3.10-newest"]
    release = matrix.selected(matrix.JOBS, [], full=True)
    assert [job.name for job in release] == list(jobs)
    assert {job.tier for job in release} == {"full"}
    asked = matrix.selected(matrix.JOBS, ["3.10-newest"], full=False)
    assert [(job.name, job.tier) for job in asked] == [("3.10-newest", "smoke")]
    command = matrix.JOBS[0].suite("/venv/bin/python", "/src")
    assert command[:2] == ["/venv/bin/python", "/src/scripts/suite.py"]
    assert command[command.index("--tier") + 1] == "full"
    assert "--spare" not in command  # make test's workers: the environment is compiled
    assert "--compile-bytecode" in matrix.JOBS[0].install("uv", "/venv/bin/python", "/src")


def test_the_matrix_runs_its_full_jobs_first_then_the_smoke_jobs_in_sid_first() -> None:
    each_change = matrix.selected(matrix.JOBS, [], full=False)
    assert [job.name for job in matrix.queue(each_change)] == [
        "3.10-lowest",
        "3.15-newest",
        "3.14-newest",
        "3.12-newest-httpx2",
        "3.13-newest",
    ]


def test_the_matrix_runs_one_suite_at_a_time_and_makes_the_next_environment_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The suites run in the queue's order, none beside another; each environment after the
    first is made while the suite before it runs, and what making it said is shown with its job."""
    events: list[str] = []

    def make(job: Any, *args: Any) -> Any:  # on_host's and in_sid's arguments
        args[-1].interpreter = "3.x"
        matrix.say(f"made the environment of {job.name}")
        events.append(f"make {job.name}")

        def suite() -> None:
            events.append(f"start {job.name}")
            time.sleep(0.2)
            events.append(f"end {job.name}")

        return suite

    monkeypatch.setattr(matrix, "on_host", make)
    monkeypatch.setattr(matrix, "in_sid", make)
    assert matrix.main(["--work", str(tmp_path), "--keep-chroot"]) == 0
    names = [job.name for job in matrix.queue(matrix.selected(matrix.JOBS, [], full=False))]
    suites = [event for event in events if not event.startswith("make")]
    assert suites == [event for name in names for event in (f"start {name}", f"end {name}")]
    for before, after in itertools.pairwise(names):
        assert events.index(f"make {after}") < events.index(f"end {before}")
    out = capsys.readouterr().out
    assert "the jobs, one after another: " + ", ".join(names) in out
    for before, after in itertools.pairwise(names):
        assert out.index(f"matrix job {before}: passed") < out.index(f"environment of {after}")


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


STEPS_MAKEFILE = """\
suite:
\t@touch suite-running; for i in $$(seq 400); do [ -e lint-ran ] && break; sleep 0.05; done
\t@rm suite-running; echo suite-done
lint:
\t@for i in $$(seq 400); do [ -e suite-running ] && break; sleep 0.05; done
\t@test -e suite-running && echo lint-said && touch lint-ran
types:
\t@echo types-said; exit 3
docs:
\t@echo docs-never
"""


def test_steps_beside_the_suite_run_at_once_and_show_their_output_after_it(
    tmp_path: Path,
) -> None:
    """``make test``'s shape: the checks run one after another beside the suite, their output
    held until the suite's is done; the first that fails stops them and fails the run."""
    (tmp_path / "Makefile").write_text(STEPS_MAKEFILE)  # each waits for the other to start
    wrapper = tmp_path / "make"
    wrapper.write_text(f'#!/bin/sh\ncd "{tmp_path}" && exec make "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "MAKE": str(wrapper), "STEP_TIMES": str(tmp_path / "times.tsv")}
    script = [sys.executable, str(ROOT / "scripts" / "steps.py")]
    passed = subprocess.run(
        [*script, "suite", "--beside", "lint"], env=env, capture_output=True, text=True, timeout=60
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
    out = passed.stdout
    assert out.index("suite-done") < out.index("== make lint ==") < out.index("lint-said")
    assert "make lint (beside)" in out
    (tmp_path / "lint-ran").unlink()
    failed = subprocess.run(
        [*script, "suite", "--beside", "lint", "types", "docs"],
        env=env,
        timeout=60,
        capture_output=True,
        text=True,
    )
    assert failed.returncode == 2  # make says 2 when a recipe fails
    assert "suite-done" in failed.stdout and "types-said" in failed.stdout
    assert "docs-never" not in failed.stdout
    assert "make types (failed, exit 2) (beside)" in failed.stdout
    recorded = sorted(name for name, _ in steps.read(tmp_path / "times.tsv"))
    assert recorded == sorted(
        ["make suite", "make lint", "make suite", "make lint", "make types (failed, exit 2)"]
    )

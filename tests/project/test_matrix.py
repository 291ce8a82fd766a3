"""scripts/matrix.py (``make matrix``): which versions each job must prove, the classifiers that
say so, and jobs that cannot start failing with their reason."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.support.scripts import SCRIPTS, load_script

SCRIPT = SCRIPTS / "matrix.py"
matrix = load_script("matrix")
floors, sid_chroot, steps = (  # the modules the script imports, as it imports them
    importlib.import_module(name) for name in ("matrix_floors", "matrix_sid", "matrix_steps")
)
PROJECT = floors.load_project()


def names(requirements: list[Requirement]) -> set[str]:
    return {requirement.name.lower() for requirement in requirements}


def test_the_suites_requirements_expand_the_extras_and_follow_markers() -> None:
    on_310 = names(floors.requirements(PROJECT, ["tests"], "3.10.13"))
    on_312 = names(floors.requirements(PROJECT, ["tests"], "3.12.1"))
    assert {"httpx", "pydantic", "aiohttp", "django", "starlette", "psycopg", "pytest"} <= on_312
    assert "python-paysdk" not in on_312  # its extras are expanded, not required again
    assert {"tomli", "pymdown-extensions"} <= on_310 - on_312  # python_version < '3.11'


def test_every_requirement_of_the_suite_declares_the_floor_the_lowest_job_proves() -> None:
    for version in ("3.10.13", "3.15.0"):
        for requirement in floors.requirements(PROJECT, ["tests"], version):
            assert floors.floor(requirement) is not None, requirement


def test_a_floor_is_proven_only_by_that_very_version() -> None:
    wanted = [Requirement("httpx>=0.25,<1"), Requirement("Flask>=2.3.3"), Requirement("tomli")]
    installed = {"httpx": "0.25.0", "flask": "3.0.0", "tomli": "2.0.0"}
    assert floors.unproven_floors(wanted, installed) == [
        "Flask>=2.3.3: the lowest resolution installed 3.0.0, not 2.3.3; 2.3.3 cannot be"
        " installed with the rest, so the floor is 3.0.0",
        "tomli: declares no minimum, so none is tested",
    ]
    assert floors.unproven_floors([Requirement("pytest>=8")], {}) == ["pytest>=8: not installed"]


def test_the_classifiers_name_exactly_the_pythons_the_matrix_runs() -> None:
    tested = {job.python for job in matrix.JOBS} | {matrix.MAKE_TEST_PYTHON}
    prefix = "Programming Language :: Python :: 3."
    classified = {
        text.removeprefix("Programming Language :: Python :: ")
        for text in PROJECT["classifiers"]
        if text.startswith(prefix)
    }
    assert classified == tested
    lowest = min(tested, key=lambda version: tuple(map(int, version.split("."))))
    assert PROJECT["requires-python"] == f">={lowest}"
    assert [job.name for job in matrix.JOBS if job.resolution == matrix.LOWEST] == [
        f"{lowest}-lowest"
    ]


def test_make_test_on_another_python_adds_a_job_for_its_own() -> None:
    assert matrix.jobs_for(matrix.MAKE_TEST_PYTHON) == matrix.JOBS
    added = set(matrix.jobs_for("3.12")) - set(matrix.JOBS)
    assert [job.name for job in added] == [f"{matrix.MAKE_TEST_PYTHON}-newest"]


def test_one_job_runs_on_httpx2_standing_in_for_httpx_and_the_others_on_httpx() -> None:
    """The 3.12 smoke job installs httpx2 beside the suite's needs and makes its interpreters
    import it as httpx (scripts/httpx2_alias.py); every other job installs only those needs."""
    (aliased,) = [job for job in matrix.JOBS if job.httpx2]
    assert (aliased.name, aliased.tier) == ("3.12-newest-httpx2", "smoke")
    assert aliased.installs("/src") == ["-e", "/src[tests]", "httpx2", "httpcore2"]
    assert aliased.aliasing("/venv/bin/python", "/src") == [
        "/venv/bin/python",
        "/src/scripts/httpx2_alias.py",
    ]
    assert (SCRIPTS / "httpx2_alias.py").is_file()
    for job in matrix.JOBS:
        if job is not aliased:
            assert (job.installs("/src"), job.aliasing("/py", "/src")) == (
                ["-e", "/src[tests]"],
                None,
            )
    plain = {job.python for job in matrix.JOBS if not job.httpx2} | {matrix.MAKE_TEST_PYTHON}
    assert plain == {"3.10", "3.11", "3.13", "3.14", "3.15"}  # as the JOBS comment says


def test_a_job_without_its_interpreter_fails_with_the_reason(tmp_path: Path) -> None:
    empty = tmp_path / "bin"  # PATH: no python3.10 on it
    empty.mkdir()
    env = {**os.environ, "PYENV_ROOT": str(tmp_path / "no-pyenv"), "PATH": str(empty)}
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--job", "3.10-lowest", "--work", str(tmp_path / "work")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    reason = f"cannot start: no Python 3.10: none under {tmp_path / 'no-pyenv' / 'versions'}"
    assert reason in result.stdout
    assert "3.10-lowest  full   Python ?" in result.stdout.split("matrix summary:")[1]


def test_a_chroot_that_cannot_be_built_fails_both_of_its_jobs_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def failing_run(argv: list[str], *, step: str, **_: object) -> str:
        calls.append(step)
        raise steps.StepFailed(f"{step} exited with 1: E: no route to the mirror")

    monkeypatch.setattr(sid_chroot, "run", failing_run)
    monkeypatch.setattr(sid_chroot.shutil, "which", lambda name: f"/usr/sbin/{name}")
    sid = sid_chroot.Sid(tmp_path / "sid")
    sid_jobs = [job for job in matrix.JOBS if job.in_sid]
    outcomes = [matrix.run_job(job, sid, tmp_path) for job in sid_jobs]
    reason = (
        "cannot start: the sid chroot cannot be built: mmdebstrap sid exited with 1:"
        " E: no route to the mirror"
    )
    assert [outcome.failure for outcome in outcomes] == [reason, reason]
    assert calls == ["mmdebstrap sid"]  # tried once, not again for the second job
    sid.teardown()
    assert not (tmp_path / "sid").exists()

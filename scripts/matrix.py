"""``make matrix``: the test suite on every Python paysdk supports, at the lowest and the newest
versions of what it depends on.

The support window's ends run the full suite (the ``full`` tier of ``tests/tiers.py``: all but the
interpreter-independent tests, which ``make test`` runs once): Python 3.10 at the lowest declared
versions, where old dependencies break first, and 3.15 at the newest, where new interpreters and
releases do. The Pythons between run the ``smoke`` tier: the core, parsing, the clients, the
transport, the helpers and what changes with the interpreter. ``--full`` (``make matrix-full``,
for a release) runs the full suite in every job, and the release-only job too: Python 3.10 at
the newest versions, which lies between the ends (3.10 at the lowest, 3.11 at the newest in
``make test``).

Each job makes a fresh environment with uv, installs ``.[tests]`` into it and runs its tier with
``scripts/suite.py``. The httpx2 job also installs httpx2 and httpcore2, httpx's successors, and
``scripts/httpx2_alias.py``, which makes its every interpreter import them as httpx and httpcore,
as an application that calls ``httpx2.alias_httpx()`` does. The jobs run one after another, in
``queue``'s order: the full jobs first, then the smoke jobs; each suite has the cores to itself,
for suites side by side took more CPU in all than one after another (docs/support.md gives the
figures). Pythons up to 3.13 come from pyenv (or ``pythonX.Y`` on PATH);
3.14 and 3.15 from Debian sid, in a chroot built under ``.matrix/`` and taken down at the end. A
job that cannot start fails with the reason, and the lowest job fails if a declared minimum is
not what it installed: the floors in pyproject.toml are exactly those it proves. ``make test`` is
the 3.11 job with the newest versions.

Usage: ``python scripts/matrix.py [--full] [--job NAME ...] [--keep-chroot] [--prepare]
[--teardown]``. ``--prepare`` builds the sid chroot alone and leaves it, for the next run to use
as it is (``.ci/run`` does it beside ``make test``); ``--teardown`` takes it down. The modules
beside this one: ``matrix_floors.py`` (what each job must install), ``matrix_steps.py``
(running a step, finding an interpreter), ``matrix_sid.py`` (the sid chroot).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from matrix_floors import direct_versions, load_project, requirements, unproven_floors, versions_of
from matrix_sid import Sid
from matrix_steps import CannotStart, StepFailed, find_python, quietly, run, say, uv
from packaging.requirements import Requirement
from steps import record

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "python-paysdk"
EXTRA = "tests"
LOWEST = "lowest-direct"
NEWEST = "highest"
FULL = "full"
SMOKE = "smoke"
HTTPX2 = ("httpx2", "httpcore2")
"""What an httpx2 job installs beside ``.[tests]``, which still brings httpx: at the job's
resolution, with the rest."""
ALIAS_SCRIPT = "scripts/httpx2_alias.py"
"""Run by a venv's Python, it makes that venv's interpreters import httpx2 as httpx."""


@dataclass(frozen=True)
class Job:
    """One interpreter with one resolution of the dependencies."""

    python: str
    resolution: str
    tier: str = SMOKE
    in_sid: bool = False
    release_only: bool = False
    """Run by ``make matrix-full`` (``--full``) or by name (``--job``), not on each change."""
    httpx2: bool = False
    """httpx2 stands in for httpx: installed with the rest, and aliased as an app would."""

    @property
    def name(self) -> str:
        versions = "lowest" if self.resolution == LOWEST else "newest"
        return f"{self.python}-{versions}" + ("-httpx2" if self.httpx2 else "")

    def installs(self, root: str) -> list[str]:
        """What ``uv pip install`` installs, the repository at ``root``."""
        return ["-e", f"{root}[{EXTRA}]", *(HTTPX2 if self.httpx2 else ())]

    def install(self, uv: str, python: str, root: str) -> list[str]:
        """The command that installs this job's packages into ``python``'s venv, compiled: the
        environment is made while the suite before it runs, and else each of the suite's
        workers and subprocesses would compile what it imports, several at once."""
        return [
            *(uv, "pip", "install", "--compile-bytecode", "--python", python),
            *("--resolution", self.resolution, *self.installs(root)),
        ]

    def aliasing(self, python: str, root: str) -> list[str] | None:
        """The command that makes ``python``'s venv import httpx2 as httpx, if this job does."""
        return [python, f"{root}/{ALIAS_SCRIPT}"] if self.httpx2 else None

    def suite(self, python: str, root: str) -> list[str]:
        """The command that runs this job's tier with ``python``, the repository at ``root``."""
        label = f"matrix {self.name}"
        return [python, f"{root}/scripts/suite.py", "--tier", self.tier, "--label", label]


MAKE_TEST_PYTHON = "3.11"
"""``python3`` on this machine kind: ``make test`` is its job, with the newest versions."""

JOBS = (
    Job("3.10", LOWEST, FULL),
    # what a fresh install on Ubuntu 22.04 gets: between the window's ends (3.10 at the lowest
    # versions, 3.11 at the newest in make test), so for a release
    Job("3.10", NEWEST, release_only=True),
    # httpx2 stands in for httpx here rather than in a job of its own, which CI has no time for:
    # plain httpx stays proven on 3.10, 3.11 (make test), 3.13, 3.14 and 3.15, and what is 3.12's
    # own (the sqlite3 module's transactions, say) does not depend on which httpx is installed
    Job("3.12", NEWEST, httpx2=True),
    Job("3.13", NEWEST),
    Job("3.14", NEWEST, in_sid=True),
    Job("3.15", NEWEST, FULL, in_sid=True),
)


def jobs_for(running: str) -> tuple[Job, ...]:
    """The matrix when ``make test`` ran on Python ``running``: 3.11 gets a job of its own when
    ``make test`` did not cover it."""
    if running == MAKE_TEST_PYTHON:
        return JOBS
    return (*JOBS[:2], Job(MAKE_TEST_PYTHON, NEWEST, FULL), *JOBS[2:])


def selected(jobs: Sequence[Job], names: Sequence[str], *, full: bool) -> list[Job]:
    """The jobs a run makes: those ``names`` names, or else each but the release-only ones
    (all of them with ``full``); with ``full``, each runs the full suite.

    Args:
        jobs: the matrix (``jobs_for``).
        names: the jobs asked for by name (``--job``); empty for the default.
        full: ``--full`` (``make matrix-full``).

    Returns:
        The jobs to run, in the matrix's order.
    """
    chosen = [
        job for job in jobs if job.name in names or (not names and (full or not job.release_only))
    ]
    return list(in_full(chosen)) if full else chosen


def in_full(jobs: Sequence[Job]) -> tuple[Job, ...]:
    """The same jobs, each running the full suite (``make matrix-full``)."""
    return tuple(replace(job, tier=FULL) for job in jobs)


@dataclass
class Outcome:
    """How a job ended, for the summary."""

    job: Job
    interpreter: str = "?"
    failure: str | None = None
    seconds: float = 0.0
    details: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    """What making the environment said, shown when the job's suite starts."""


Suite = Callable[[], None]
"""A job's suite, to run once its environment is made: raises ``StepFailed`` if it fails."""


def on_host(job: Job, venv: Path, log: Path, outcome: Outcome) -> Suite:
    """Make ``job``'s environment in ``venv`` with the host's Python; its suite, to run."""
    python = find_python(job.python)
    shutil.rmtree(venv, ignore_errors=True)
    outcome.interpreter = run(
        [str(python), "-c", "import platform; print(platform.python_version())"],
        step="the interpreter",
        log=log,
    ).strip()
    say(f"interpreter: {python} (Python {outcome.interpreter})")
    run(
        [str(uv()), "venv", "--quiet", "--seed", "--python", str(python), str(venv)],
        step="uv venv",
        log=log,
    )
    target = ["--python", str(venv / "bin" / "python")]
    run(
        job.install(str(uv()), str(venv / "bin" / "python"), str(ROOT)),
        step=f"uv pip install ({job.resolution})",
        log=log,
    )
    aliasing = job.aliasing(str(venv / "bin" / "python"), str(ROOT))
    if aliasing:
        run(aliasing, step="httpx2 aliasing", log=log)
    freeze = run([str(uv()), "pip", "freeze", *target], step="uv pip freeze", log=log, echo=False)
    unproven = check_versions(job, outcome, freeze)

    def suite() -> None:
        with failing_too(unproven):
            run(
                job.suite(str(venv / "bin" / "python"), str(ROOT)), step="pytest", log=log, cwd=ROOT
            )

    return suite


def sid_python(job: Job, sid: Sid, log: Path) -> str:
    """Build the chroot (or take the one left built) and install ``job``'s Python in it."""
    sid.build(log)
    package = f"python{job.python}-venv"  # with ensurepip, which the tests use: Debian splits it
    try:
        sid.install(package, log)
    except StepFailed as error:
        raise CannotStart(f"Debian sid has no {package}: {error}") from error
    return f"/usr/bin/python{job.python}"


def in_sid(job: Job, sid: Sid, log: Path, outcome: Outcome) -> Suite:
    """Make ``job``'s environment in the sid chroot; its suite, to run."""
    python = sid_python(job, sid, log)
    outcome.interpreter = sid.chroot(
        [python, "-c", "import platform; print(platform.python_version())"],
        step="the interpreter",
        log=log,
    ).strip()
    say(f"interpreter: {python} in Debian sid (Python {outcome.interpreter})")
    venv = f"/venvs/{job.name}"
    sid.chroot(
        ["uv", "venv", "--quiet", "--seed", "--clear", "--python", python, venv],
        step="uv venv",
        log=log,
    )
    target = ["--python", f"{venv}/bin/python"]
    sid.chroot(
        job.install("uv", f"{venv}/bin/python", "/src"),
        step=f"uv pip install ({job.resolution})",
        log=log,
    )
    aliasing = job.aliasing(f"{venv}/bin/python", "/src")
    if aliasing:
        sid.chroot(aliasing, step="httpx2 aliasing", log=log)
    freeze = sid.chroot(["uv", "pip", "freeze", *target], step="uv pip freeze", log=log, echo=False)
    unproven = check_versions(job, outcome, freeze)

    def suite() -> None:
        with failing_too(unproven):
            sid.chroot(job.suite(f"{venv}/bin/python", "/src"), step="pytest", cwd="/src", log=log)

    return suite


def check_versions(job: Job, outcome: Outcome, freeze: str) -> str | None:
    """Say what was installed; in the lowest job, say which floors it did not prove."""
    wanted = requirements(load_project(), [EXTRA], outcome.interpreter)
    installed = versions_of(freeze)
    standing_in = [Requirement(name) for name in HTTPX2] if job.httpx2 else []
    outcome.details = direct_versions([*wanted, *standing_in], installed)
    say(f"declared dependencies as installed ({job.resolution}): {' '.join(outcome.details)}")
    if job.resolution == LOWEST:
        problems = unproven_floors(wanted, installed)
        for problem in problems:
            say(f"floor not proven: {problem}")
        if problems:
            return f"{len(problems)} declared minimums are not what installs"
    return None


@contextmanager
def failing_too(problem: str | None) -> Iterator[None]:
    """Run the block (the suite) whatever ``problem`` is, then fail with it and the block's own."""
    try:
        yield
    except StepFailed as failed:
        raise StepFailed("; ".join(filter(None, (str(failed), problem)))) from None
    if problem:
        raise StepFailed(problem)


@contextmanager
def banner(job: Job) -> Iterator[None]:
    line = "=" * 100
    say(
        f"\n{line}\nmatrix job {job.name}: Python {job.python}, {job.resolution} versions,"
        f"{' httpx2 standing in for httpx,' if job.httpx2 else ''} the {job.tier} tier\n{line}"
    )
    yield


def make_environment(job: Job, sid: Sid, work: Path) -> tuple[Outcome, Suite | None]:
    """Make ``job``'s environment under ``work``, quietly: what it says waits in the outcome, its
    commands' output goes to the job's log alone. Its suite, or ``None`` if it cannot run."""
    outcome = Outcome(job)
    log = work / f"{job.name}.log"
    log.unlink(missing_ok=True)
    started = time.monotonic()
    suite: Suite | None = None
    with quietly(outcome.said):
        try:
            if job.in_sid:
                suite = in_sid(job, sid, log, outcome)
            else:
                suite = on_host(job, work / job.name, log, outcome)
        except CannotStart as error:
            outcome.failure = f"cannot start: {error}"
        except StepFailed as error:
            outcome.failure = f"failed at {error}"
    outcome.seconds = time.monotonic() - started
    return outcome, suite


def run_suite(outcome: Outcome, suite: Suite | None) -> Outcome:
    """Say what making the job's environment said, then run its suite; how the job ended."""
    job = outcome.job
    with banner(job):
        for said in outcome.said:
            say(said)
        started = time.monotonic()
        if suite is not None:
            try:
                suite()
            except StepFailed as error:
                outcome.failure = f"failed at {error}"
        outcome.seconds += time.monotonic() - started
    record(
        f"matrix {job.name} ({job.tier})" + (" failed" if outcome.failure else ""), outcome.seconds
    )
    say(f"matrix job {job.name}: {outcome.failure or 'passed'} ({outcome.seconds / 60:.1f} min)")
    return outcome


def run_job(job: Job, sid: Sid, work: Path) -> Outcome:
    """Run ``job``, its environment and log under ``work``; how it ended, never raising."""
    return run_suite(*make_environment(job, sid, work))


def run_jobs(jobs: Sequence[Job], sid: Sid, work: Path) -> list[Outcome]:
    """Run ``jobs`` one after another, each suite with the cores to itself; the next job's
    environment is made while a suite runs, for making one mostly waits on the disk."""
    with ThreadPoolExecutor(max_workers=1) as making:  # in the jobs' order, one at a time
        made = [making.submit(make_environment, job, sid, work) for job in jobs]
        return [run_suite(*environment.result()) for environment in made]


def queue(jobs: Sequence[Job]) -> list[Job]:
    """The jobs in the order they run: the full jobs first (the longest, so a failure there is
    seen soonest), then the smoke jobs, those in sid first (their chroot is built beside ``make
    test``); else in the matrix's order."""
    smoke = [job for job in jobs if job.tier != FULL]
    return [job for job in jobs if job.tier == FULL] + sorted(smoke, key=lambda job: not job.in_sid)


def summary(outcomes: Sequence[Outcome]) -> str:
    width = max([12, *(len(o.job.name) for o in outcomes)])
    rows = [
        f"  {o.job.name:<{width}} {o.job.tier:<6} Python {o.interpreter:<10} "
        f"{o.seconds / 60:5.1f} min  {o.failure or 'passed'}"
        for o in outcomes
    ]
    return "\n".join(["matrix summary:", *rows])


def prepare(jobs: Sequence[Job], sid: Sid, work: Path) -> int:
    """Build the sid chroot and install the jobs' Pythons in it, to be used by the next run:
    ``.ci/run`` does it beside ``make test``, because it mostly waits on downloads."""
    started = time.monotonic()
    log = work / "prepare.log"
    log.unlink(missing_ok=True)
    try:
        for job in jobs:
            if job.in_sid:
                sid_python(job, sid, log)
    except (CannotStart, StepFailed) as error:
        say(f"matrix prepare: {error}; the jobs will try again themselves")
        return 1
    record("matrix prepare (sid chroot)", time.monotonic() - started)
    say(f"matrix prepare: the sid chroot is built in {time.monotonic() - started:.0f} s")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    running = "{}.{}".format(*sys.version_info[:2])
    all_jobs = jobs_for(running)
    names = [job.name for job in all_jobs]
    parser.add_argument("--full", action="store_true", help="the full suite in every job")
    parser.add_argument("--job", action="append", choices=names, help="run only these jobs")
    parser.add_argument("--keep-chroot", action="store_true", help="leave the sid chroot built")
    parser.add_argument(
        "--prepare",
        action="store_true",
        help="only build the sid chroot with the jobs' Pythons, and leave it for the next run",
    )
    parser.add_argument("--work", type=Path, default=ROOT / ".matrix", help="environments, logs")
    parser.add_argument("--teardown", action="store_true", help="only take the sid chroot down")
    args = parser.parse_args(argv)
    jobs = selected(all_jobs, args.job or [], full=args.full)
    work: Path = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    say(f"matrix on {platform.node()}: {', '.join(job.name for job in jobs)}")
    if running == MAKE_TEST_PYTHON:
        say(f"Python {running} with the newest versions is `make test`'s job")
    sid = Sid(work / "sid")
    if args.teardown:
        sid.teardown()
        return 0
    if args.prepare:
        return prepare(jobs, sid, work)
    outcomes: list[Outcome] = []
    try:
        jobs = queue(jobs)
        say(f"the jobs, one after another: {', '.join(job.name for job in jobs)}")
        outcomes = run_jobs(jobs, sid, work)
    finally:
        if not args.keep_chroot:
            sid.teardown()
    say(summary(outcomes))
    return 1 if any(outcome.failure for outcome in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())

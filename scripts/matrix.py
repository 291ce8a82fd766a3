"""``make matrix``: the test suite on every Python paysdk supports, at the lowest and the newest
versions of what it depends on.

Each job makes a fresh environment with uv, installs ``.[tests]`` into it and runs pytest. The jobs
run one after another: two suites at once on two cores make the race tests flaky. Pythons up to
3.13 come from pyenv (or ``pythonX.Y`` on PATH); 3.14 and 3.15 from Debian sid, in a chroot built
under ``.matrix/`` and taken down at the end. A job that cannot start fails with the reason, and the
lowest job fails if a declared minimum is not what it installed: the floors in pyproject.toml are
exactly those it proves. ``make test`` is the 3.11 job with the newest versions.

Usage: ``python scripts/matrix.py [--job NAME ...] [--keep-chroot]``
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "python-paysdk"
EXTRA = "tests"
LOWEST = "lowest-direct"
NEWEST = "highest"
SID_MIRROR = "http://deb.debian.org/debian"
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


class CannotStart(Exception):
    """A job's interpreter or environment cannot be had: the job fails with this reason."""


class StepFailed(Exception):
    """A step of a job ran and failed; the message names the step."""


@dataclass(frozen=True)
class Job:
    """One interpreter with one resolution of the dependencies."""

    python: str
    resolution: str
    in_sid: bool = False

    @property
    def name(self) -> str:
        return f"{self.python}-{'lowest' if self.resolution == LOWEST else 'newest'}"


MAKE_TEST_PYTHON = "3.11"
"""``python3`` on this machine kind: ``make test`` is its job, with the newest versions."""

JOBS = (
    Job("3.10", LOWEST),
    Job("3.10", NEWEST),  # what a fresh install on Ubuntu 22.04 gets
    Job("3.12", NEWEST),
    Job("3.13", NEWEST),
    Job("3.14", NEWEST, in_sid=True),
    Job("3.15", NEWEST, in_sid=True),
)


def jobs_for(running: str) -> tuple[Job, ...]:
    """The matrix when ``make test`` ran on Python ``running``: 3.11 gets a job of its own when
    ``make test`` did not cover it."""
    if running == MAKE_TEST_PYTHON:
        return JOBS
    return (*JOBS[:2], Job(MAKE_TEST_PYTHON, NEWEST), *JOBS[2:])


@dataclass
class Outcome:
    """How a job ended, for the summary."""

    job: Job
    interpreter: str = "?"
    failure: str | None = None
    seconds: float = 0.0
    details: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Floors: what pyproject.toml declares, and what the lowest job must have installed.


def requirements(
    project: dict[str, Any], extras: Iterable[str], python_full_version: str
) -> list[Requirement]:
    """The requirements ``pip install .[extras]`` asks for on that Python, extras expanded.

    Args:
        project: pyproject.toml's ``[project]`` table.
        extras: the extras asked for.
        python_full_version: the interpreter's version, for markers such as
            ``python_version < '3.11'``.
    """
    python_version = ".".join(python_full_version.split(".")[:2])
    environment = {"python_version": python_version, "python_full_version": python_full_version}
    own = canonicalize_name(project["name"])
    optional: dict[str, list[str]] = project.get("optional-dependencies", {})
    found: list[Requirement] = []
    seen_extras: set[str] = set()

    def add(texts: Iterable[str], extra: str = "") -> None:
        for text in texts:
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate(
                {**environment, "extra": extra}
            ):
                continue
            if canonicalize_name(requirement.name) == own:
                expand(requirement.extras)
            else:
                found.append(requirement)

    def expand(names: Iterable[str]) -> None:
        for name in sorted(names):
            if name not in seen_extras:
                seen_extras.add(name)
                add(optional[name], name)

    add(project["dependencies"])
    expand(extras)
    return found


def floor(requirement: Requirement) -> Version | None:
    """The lowest version ``requirement`` admits, from its ``>=``, ``==`` or ``~=`` clause."""
    floors = [
        Version(spec.version)
        for spec in requirement.specifier
        if spec.operator in (">=", "==", "~=") and "*" not in spec.version
    ]
    return max(floors, default=None)


def unproven_floors(wanted: Sequence[Requirement], installed: dict[str, str]) -> list[str]:
    """Each declared minimum the lowest resolution did not install, as a sentence.

    Args:
        wanted: the declared requirements (``requirements()``).
        installed: distribution name (any spelling) to installed version.
    """
    have = {canonicalize_name(name): Version(version) for name, version in installed.items()}
    problems: list[str] = []
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        lowest = floor(requirement)
        if lowest is None:
            problems.append(f"{requirement}: declares no minimum, so none is tested")
        elif name not in have:
            problems.append(f"{requirement}: not installed")
        elif have[name] != lowest:
            problems.append(
                f"{requirement}: the lowest resolution installed {have[name]}, not {lowest};"
                f" {lowest} cannot be installed with the rest, so the floor is {have[name]}"
            )
    return problems


def load_project() -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    return project


# ---------------------------------------------------------------------------------------------
# Where a job runs: on this machine, or inside the sid chroot.


def say(text: str) -> None:
    print(text, flush=True)


def run(
    argv: Sequence[str], *, step: str, log: Path, cwd: Path | None = None, echo: bool = True
) -> str:
    """Run ``argv``, logging its output (and echoing it, unless ``echo`` is false).

    Raises:
        StepFailed: it exited non-zero; the message names ``step`` and quotes the last line.
    """
    say(f"$ {' '.join(argv)}")
    lines: list[str] = []
    with (
        log.open("a", encoding="utf-8") as sink,
        subprocess.Popen(
            argv,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        ) as process,
    ):
        assert process.stdout is not None
        for line in process.stdout:
            if echo:
                sys.stdout.write(line)
            sink.write(line)
            lines.append(line)
        code = process.wait()
    sys.stdout.flush()
    if code != 0:
        last = next((line.strip() for line in reversed(lines) if line.strip()), "")
        raise StepFailed(f"{step} exited with {code}" + (f": {last}" if last else ""))
    return "".join(lines)


def find_python(version: str) -> Path:
    """The newest pyenv build of ``version``, else ``pythonX.Y`` on PATH."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    builds = sorted(
        pyenv.glob(f"{version}.*/bin/python{version}"),
        key=lambda path: tuple(int(part) for part in path.parts[-3].split(".") if part.isdigit()),
    )
    if builds:
        return builds[-1]
    on_path = shutil.which(f"python{version}")
    if on_path:
        return Path(on_path)
    raise CannotStart(f"no Python {version}: none under {pyenv}, no python{version} on PATH")


def uv() -> Path:
    """The uv that ``make`` installed beside this script's Python."""
    found = Path(sys.executable).with_name("uv")
    if not found.exists():
        raise CannotStart(f"uv is not installed beside {sys.executable}: run `make matrix`")
    return found


class Sid:
    """A Debian sid chroot under ``.matrix/``: its Pythons are 3.14 and 3.15."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ready = False
        self.failure: str | None = None

    def mounts(self) -> list[str]:
        """What is mounted inside the chroot, deepest first."""
        inside = str(self.root) + "/"
        with open("/proc/mounts", encoding="utf-8") as table:
            points = [line.split()[1] for line in table]
        return sorted((point for point in points if point.startswith(inside)), reverse=True)

    def build(self, log: Path) -> None:
        """Bootstrap sid with what the tests run (PostgreSQL, PgBouncer, faketime, chattr, make
        and chromium), then copy the project in."""
        if self.failure:
            raise CannotStart(self.failure)
        if self.ready:
            return
        try:
            self._build(log)
        except (StepFailed, CannotStart, OSError) as error:
            self.failure = f"the sid chroot cannot be built: {error}"
            raise CannotStart(self.failure) from error
        self.ready = True

    def _build(self, log: Path) -> None:
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        if shutil.which("debootstrap") is None:
            say("installing debootstrap (apt-get) for the 3.14 and 3.15 jobs")
            run([*sudo, "apt-get", "update", "-qq"], step="apt-get update", log=log)
            run(
                [
                    *sudo,
                    "apt-get",
                    "install",
                    "-y",
                    "-qq",
                    "--no-install-recommends",
                    "debootstrap",
                ],
                step="apt-get install debootstrap",
                log=log,
            )
        self.teardown()
        self.root.mkdir(parents=True)
        started = time.monotonic()
        run(
            [
                *sudo,
                "debootstrap",
                "--variant=minbase",
                "--include=ca-certificates,postgresql,pgbouncer,faketime,e2fsprogs,make,chromium",
                "sid",
                str(self.root),
                SID_MIRROR,
            ],
            step="debootstrap sid",
            log=log,
        )
        say(f"sid bootstrapped in {time.monotonic() - started:.0f} s")
        for device, target, options in (
            ("proc", "proc", ["-t", "proc"]),
            ("/sys", "sys", ["--rbind"]),
            ("/dev", "dev", ["--rbind"]),
        ):
            run(
                [*sudo, "mount", *options, device, str(self.root / target)],
                step=f"mount {target}",
                log=log,
            )
        apt = self.root / "etc/apt/apt.conf.d/99matrix"
        apt.write_text('Acquire::Check-Valid-Until "false";\n', encoding="utf-8")
        if CA_BUNDLE.exists():  # the host's trust, which may include a proxy's CA
            shutil.copy(CA_BUNDLE, self.root / CA_BUNDLE.relative_to("/"))
        for name in ("resolv.conf", "hosts"):
            shutil.copy(Path("/etc") / name, self.root / "etc" / name)
        shutil.copy(uv(), self.root / "usr/local/bin/uv")
        source = self.root / "src"
        tracked = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        ).stdout.split(b"\0")
        for name in filter(None, (entry.decode() for entry in tracked)):
            if (ROOT / name).is_file():
                (source / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, source / name)
        self.chroot(["apt-get", "update", "-qq"], step="apt-get update (sid)", log=log)

    def chroot(
        self, argv: Sequence[str], *, step: str, log: Path, cwd: str = "/", echo: bool = True
    ) -> str:
        """Run ``argv`` inside the chroot, from ``cwd``, with a clean environment."""
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        return run(
            [
                *sudo,
                "chroot",
                str(self.root),
                "/usr/bin/env",
                "-i",
                f"--chdir={cwd}",
                "HOME=/root",
                "LANG=C.UTF-8",
                "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
                f"SSL_CERT_FILE={CA_BUNDLE}",
                "DEBIAN_FRONTEND=noninteractive",
                *argv,
            ],
            step=step,
            log=log,
            echo=echo,
        )

    def teardown(self) -> None:
        """Unmount everything inside the chroot, then remove it; never remove while mounted."""
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        for point in self.mounts():
            subprocess.run([*sudo, "umount", "--lazy", point], check=False)
        left = self.mounts()
        if left:
            raise RuntimeError(f"still mounted, so {self.root} is left in place: {left}")
        if self.root.exists():
            subprocess.run([*sudo, "rm", "-rf", "--one-file-system", str(self.root)], check=True)


# ---------------------------------------------------------------------------------------------
# A job: interpreter, environment, install, floors, suite.


def versions_of(freeze: str) -> dict[str, str]:
    """``uv pip freeze`` output as name -> version (editable and URL lines left out)."""
    found: dict[str, str] = {}
    for line in freeze.splitlines():
        name, sep, version = line.partition("==")
        if sep:
            found[name.strip()] = version.strip()
    return found


def direct_versions(wanted: Sequence[Requirement], installed: dict[str, str]) -> list[str]:
    """``name==version`` of each declared requirement, as installed."""
    have = {canonicalize_name(name): version for name, version in installed.items()}
    names = sorted({canonicalize_name(requirement.name) for requirement in wanted})
    return [f"{name}=={have.get(name, 'missing')}" for name in names]


def on_host(job: Job, venv: Path, log: Path, outcome: Outcome) -> None:
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
        [
            str(uv()),
            "pip",
            "install",
            *target,
            "--resolution",
            job.resolution,
            "-e",
            f"{ROOT}[{EXTRA}]",
        ],
        step=f"uv pip install ({job.resolution})",
        log=log,
    )
    freeze = run([str(uv()), "pip", "freeze", *target], step="uv pip freeze", log=log, echo=False)
    unproven = check_versions(job, outcome, freeze)
    suite = [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    with failing_too(unproven):
        run(suite, step="pytest", log=log, cwd=ROOT)


def in_sid(job: Job, sid: Sid, log: Path, outcome: Outcome) -> None:
    sid.build(log)
    package = f"python{job.python}-venv"  # with ensurepip, which the tests use: Debian splits it
    try:
        sid.chroot(
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", package],
            step=f"apt-get install {package} (sid)",
            log=log,
        )
    except StepFailed as error:
        raise CannotStart(f"Debian sid has no {package}: {error}") from error
    python = f"/usr/bin/python{job.python}"
    outcome.interpreter = sid.chroot(
        [python, "-c", "import platform; print(platform.python_version())"],
        step="the interpreter",
        log=log,
    ).strip()
    say(f"interpreter: {python} in Debian sid (Python {outcome.interpreter})")
    venv = f"/venvs/{job.name}"
    sid.chroot(
        ["uv", "venv", "--quiet", "--seed", "--python", python, venv], step="uv venv", log=log
    )
    target = ["--python", f"{venv}/bin/python"]
    sid.chroot(
        ["uv", "pip", "install", *target, "--resolution", job.resolution, "-e", f"/src[{EXTRA}]"],
        step=f"uv pip install ({job.resolution})",
        log=log,
    )
    freeze = sid.chroot(["uv", "pip", "freeze", *target], step="uv pip freeze", log=log, echo=False)
    unproven = check_versions(job, outcome, freeze)
    suite = [f"{venv}/bin/python", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    with failing_too(unproven):
        sid.chroot(suite, step="pytest", cwd="/src", log=log)


def check_versions(job: Job, outcome: Outcome, freeze: str) -> str | None:
    """Say what was installed; in the lowest job, say which floors it did not prove."""
    wanted = requirements(load_project(), [EXTRA], outcome.interpreter)
    installed = versions_of(freeze)
    outcome.details = direct_versions(wanted, installed)
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
    say(f"\n{line}\nmatrix job {job.name}: Python {job.python}, {job.resolution} versions\n{line}")
    yield


def run_job(job: Job, sid: Sid, work: Path) -> Outcome:
    """Run ``job``, its environment and log under ``work``; how it ended, never raising."""
    outcome = Outcome(job)
    log = work / f"{job.name}.log"
    log.unlink(missing_ok=True)
    started = time.monotonic()
    with banner(job):
        try:
            if job.in_sid:
                in_sid(job, sid, log, outcome)
            else:
                on_host(job, work / job.name, log, outcome)
        except CannotStart as error:
            outcome.failure = f"cannot start: {error}"
        except StepFailed as error:
            outcome.failure = f"failed at {error}"
    outcome.seconds = time.monotonic() - started
    say(f"matrix job {job.name}: {outcome.failure or 'passed'} ({outcome.seconds / 60:.1f} min)")
    return outcome


def summary(outcomes: Sequence[Outcome]) -> str:
    rows = [
        f"  {o.job.name:<12} Python {o.interpreter:<10} {o.seconds / 60:5.1f} min  "
        f"{o.failure or 'passed'}"
        for o in outcomes
    ]
    return "\n".join(["matrix summary:", *rows])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    running = "{}.{}".format(*sys.version_info[:2])
    all_jobs = jobs_for(running)
    names = [job.name for job in all_jobs]
    parser.add_argument("--job", action="append", choices=names, help="run only these jobs")
    parser.add_argument("--keep-chroot", action="store_true", help="leave the sid chroot built")
    parser.add_argument("--work", type=Path, default=ROOT / ".matrix", help="environments, logs")
    args = parser.parse_args(argv)
    jobs = [job for job in all_jobs if not args.job or job.name in args.job]
    work: Path = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    say(f"matrix on {platform.node()}: {', '.join(job.name for job in jobs)}, one at a time")
    if running == MAKE_TEST_PYTHON:
        say(f"Python {running} with the newest versions is `make test`'s job")
    sid = Sid(work / "sid")
    outcomes: list[Outcome] = []
    try:
        for job in jobs:
            outcomes.append(run_job(job, sid, work))
    finally:
        if not args.keep_chroot:
            sid.teardown()
    say(summary(outcomes))
    return 1 if any(outcome.failure for outcome in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())

"""The steps a matrix job is made of: run a command (logged, echoed, failing with its last line),
and find the interpreter and the uv it runs with."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path


class CannotStart(Exception):
    """A job's interpreter or environment cannot be had: the job fails with this reason."""


class StepFailed(Exception):
    """A step of a job ran and failed; the message names the step."""


_quiet = threading.local()
"""Where this thread's ``say`` goes while it makes a job's environment (``quietly``)."""


@contextmanager
def quietly(said: list[str]) -> Iterator[None]:
    """Within it, this thread's ``say`` appends to ``said`` and its commands' output goes to
    their log alone: it makes a job's environment while another job's suite prints."""
    _quiet.said = said
    try:
        yield
    finally:
        _quiet.said = None


def say(text: str) -> None:
    said = getattr(_quiet, "said", None)
    if said is not None:
        said.append(text)
    else:
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
            if echo and getattr(_quiet, "said", None) is None:
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

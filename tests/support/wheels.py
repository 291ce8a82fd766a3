"""The wheel built from this checkout, and fresh virtual environments that install it, for the
tests that use paysdk as a merchant does (``pip install python-paysdk``)."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["ROOT", "build_dist", "fresh_venv", "shared_dist", "uv"]

ROOT = Path(__file__).resolve().parents[2]


def uv() -> str:
    """The uv ``make`` installed beside this interpreter (the dev extra), else one on PATH."""
    beside = Path(sys.executable).with_name("uv")
    found = str(beside) if beside.exists() else shutil.which("uv")
    assert found, "uv is needed to install into fresh venvs: `make test` installs it"
    return found


def build_dist(out: Path) -> Path:
    """This checkout built into ``out`` as ``python -m build`` builds it for PyPI: the sdist,
    then the wheel from the sdist. Returns ``out``."""
    subprocess.run(
        [sys.executable, "-m", "build", "--installer", "uv", "--sdist", "--wheel", "--outdir",
         str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return out


def shared_dist(root: Path) -> Path:
    """The distributions built once under ``root`` for every process that asks (pytest-xdist's
    workers share their base temporary directory's parent): the first builds, the others wait
    on a lock and find them built. Returns their directory."""
    out = root / "paysdk-dist"
    with open(root / "paysdk-dist.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "built").exists():
            shutil.rmtree(out, ignore_errors=True)
            build_dist(out)
            (out / "built").touch()
    return out


def fresh_venv(where: Path, *requirements: str) -> Path:
    """A new virtual environment at ``where`` holding ``requirements`` alone, installed by uv
    through its cache (what pip would install, without fetching the index each time)."""
    subprocess.run([uv(), "venv", "--quiet", "--python", sys.executable, str(where)], check=True)
    if requirements:
        subprocess.run(
            [uv(), "pip", "install", "--quiet", "--python", str(where / "bin" / "python"),
             *requirements],
            check=True,
            capture_output=True,
        )  # fmt: skip
    return where

"""The wheel built from this checkout, and fresh virtual environments that install it, for the
tests that use paysdk as a merchant does (``pip install python-paysdk``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["ROOT", "build_wheel", "fresh_venv", "uv"]

ROOT = Path(__file__).resolve().parents[2]


def uv() -> str:
    """The uv ``make`` installed beside this interpreter (the dev extra), else one on PATH."""
    beside = Path(sys.executable).with_name("uv")
    found = str(beside) if beside.exists() else shutil.which("uv")
    assert found, "uv is needed to install into fresh venvs: `make test` installs it"
    return found


def build_wheel(out: Path) -> Path:
    """This checkout built into a wheel in ``out``, as ``python -m build --wheel`` builds it."""
    subprocess.run(
        [sys.executable, "-m", "build", "--installer", "uv", "--wheel", "--outdir", str(out),
         str(ROOT)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    (built,) = out.glob("python_paysdk-*.whl")
    return built


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

"""What a ``make`` target would run, read from a dry run in a copy of the Makefile."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["dry_run"]


def dry_run(target: str, workdir: Path) -> list[str]:
    """The commands ``make TARGET`` would run from a fresh checkout: nothing built yet."""
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, workdir / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}  # not a sub-make
    done = subprocess.run(
        ["make", "--dry-run", "--no-print-directory", target],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()

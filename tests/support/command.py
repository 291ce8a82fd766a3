"""Run the real ``paysdk`` command as a script runs it, its output captured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from paysdk.sandbox import Sandbox

__all__ = ["paysdk_cli"]

ROOT = Path(__file__).resolve().parents[2]


def paysdk_cli(*argv: str, service: Sandbox | None = None) -> tuple[int, str, str]:
    """Run ``python -m paysdk argv`` (against ``service``); its exit code, stdout and stderr."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("PAYSDK_SECRET_KEY", None)
    env.pop("PAYSDK_LEDGER", None)
    if service is not None:
        env.update(PAYSDK_BASE_URL=service.base_url, PAYSDK_SECRET_KEY=service.secret_key)
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr

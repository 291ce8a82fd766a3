"""Measuring memory in a fresh interpreter, where the peak is the measured code's own."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

PEAK_KIB = """
def peak_kib():  # VmHWM: this process image's own peak (ru_maxrss keeps the forking parent's)
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
"""


def run_child(code: str, *args: str, timeout: float) -> dict[str, Any]:
    """Run ``code`` with ``args`` in ``sys.argv`` and ``peak_kib()`` defined; the JSON object it
    prints."""
    result = subprocess.run(
        [sys.executable, "-c", PEAK_KIB + code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    figures: dict[str, Any] = json.loads(result.stdout)
    return figures

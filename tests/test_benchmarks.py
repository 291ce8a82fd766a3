"""The benchmark script keeps running (its numbers are read by people, never asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_client.py"


def test_the_benchmark_runs_and_prints_ratios_against_raw_httpx() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    for section in ("parse:", "overhead:", "loopback:"):
        assert section in result.stdout
    ratios = re.findall(r"us/call\s+(\d+\.\d\d)x", result.stdout)
    assert len(ratios) == 8
    assert ratios.count("1.00") >= 3  # each section's baseline

"""Every benchmark row still runs alone and reports each of its measures.

The numbers are read by people (docs/performance.md) and never asserted: a loaded CI machine
would make any timed assertion flaky. What is checked is that ``python -m benchmarks --quick
--only ROW`` exits 0 and its summary has a figure, not FAILED, for every measure of the row.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks._rows import ROWS, SERVER_MEASURE, split_cores

ROOT = Path(__file__).resolve().parents[2]

MEASURES = {
    "stream-list": [
        "iter_payments() time",
        "iter_payments() CPU time",
        "iter_payments() peak RSS",
        "list_payments() time",
        "list_payments() CPU time",
        "list_payments() peak RSS",
    ],
    "parse": ["_core.parse_list vs json.loads", "_core.parse_list vs json.loads, CPU time"],
    "async-verify": [
        "paysdk aiohttp vs default httpx",
        "paysdk aiohttp vs default httpx, CPU a request",
        "paysdk aiohttp vs raw aiohttp",
        "paysdk aiohttp vs raw aiohttp, CPU a request",
        "paysdk (httpx) vs default httpx",
        "paysdk (httpx) vs default httpx, CPU a request",
        "verify_many vs default httpx",
        "raw aiohttp vs default httpx",
        *([SERVER_MEASURE] if split_cores() else []),  # pinning needs a core for each side
    ],
    "import": [
        "import paysdk vs httpx + pydantic",
        "import paysdk vs httpx + pydantic, CPU time",
        "one pydantic model vs httpx + pydantic",
        "import paysdk vs one pydantic model",
    ],
    "first-verify": [
        "paysdk verify vs httpx get + json.loads",
        "paysdk verify vs httpx get + json.loads, CPU time",
    ],
    "sync-verify": [
        "Client.verify vs httpx get + json.loads",
        "Client.verify vs httpx get + json.loads, CPU time",
    ],
    "overhead": ["Client.verify vs httpx + json.loads, CPU time"],
    "reconcile": [
        "reconcile vs list + plain SELECT",
        "reconcile vs list + plain SELECT, CPU time",
        "reconcile vs list alone",
        "reconcile peak RSS",
    ],
    "wan": [
        *(
            f"{client}: {what}"
            for client in (
                "AsyncClient (httpx)",
                "AsyncClient (aiohttp)",
                "raw httpx.AsyncClient",
                "raw aiohttp",
                "Client, threads",
                "raw httpx.Client, threads",
            )
            for what in ("share of the limit", "connections")
        ),
        "AsyncClient (httpx) vs raw httpx.AsyncClient",
        "AsyncClient (httpx) vs raw aiohttp",
        "AsyncClient (aiohttp) vs raw aiohttp",
        "Client, threads vs raw httpx.Client, threads",
        "iter_payments vs httpx + json.loads",
        "iter_payments vs httpx + json.loads, CPU time",
        "first payment",
    ],
    "cold-start": [
        "import, client, one verify vs httpx + json.loads",
        "import, client, one verify vs httpx + json.loads, CPU time",
        "import, client, one verify vs httpx + pydantic",
    ],
}


def test_every_row_is_covered_here() -> None:
    assert set(MEASURES) == set(ROWS)


@pytest.mark.parametrize("row", list(MEASURES))
def test_each_row_runs_alone_and_reports_every_measure(row: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--only", row],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary = result.stdout.rpartition("| row | measure |")[2]
    for measure in MEASURES[row]:
        lines = [line for line in summary.splitlines() if f"| {measure} |" in line]
        assert len(lines) == 1, f"{measure!r} is not in the summary:\n{result.stdout}"
        assert "FAILED" not in lines[0], lines[0]
        assert re.search(r"\| [\d,]+(\.\d\dx| MB| conns|\.\d\d RTT) \|", lines[0]), lines[0]
    assert result.returncode == 0, result.stderr

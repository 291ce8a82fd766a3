"""``make demo`` keeps working: examples/quickstart.py runs against its own sandbox and exits 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

QUICKSTART = Path(__file__).resolve().parent.parent / "examples" / "quickstart.py"


def test_quickstart_runs_against_an_in_process_sandbox() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    done = subprocess.run(
        [sys.executable, str(QUICKSTART)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert "order-1042: 2500000 NGN succeeded" in done.stdout
    assert "order-1043: 4999 USD did NOT succeed" in done.stdout
    assert "PaymentNotFoundError: reference='order-0000', HTTP 404" in done.stdout
    assert "-> 200 order order-1042 paid, shipping it" in done.stdout
    assert "-> 400 not fulfilled: PaymentFailedError" in done.stdout
    assert len(done.stdout.splitlines()) <= 30  # one screen

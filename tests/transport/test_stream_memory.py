"""iter_payments holds one payment at a time: peak memory stays flat for a 50,000-payment list.

The client runs in a child process so its peak RSS is its own; the sandbox serving the list
runs here. The bound is generous (no timing, no tight figure): the stream grows by about 2 MiB,
and list_payments of the same body by about 140 MiB, so a stream that held the list would fail
it by far.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from paysdk.sandbox import PaymentRecord, Sandbox
from tests.support.memory_child import run_child

COUNT = 50_000

CHILD = """
import json, sys, paysdk

base_url, key, mode = sys.argv[1:]
client = paysdk.Client(secret_key=key, base_url=base_url, max_retries=0, timeout=120)
client.verify("stream-0")  # connections, models and imports settle before the baseline
before = peak_kib()
if mode == "iter":
    count = sum(1 for _ in client.iter_payments())
else:
    count = len(client.list_payments(max_response_bytes=2**31))
peak = peak_kib()
print(json.dumps({"count": count, "before_kib": before, "peak_kib": peak}))
"""


@pytest.fixture(scope="module")
def big_sandbox() -> Iterator[Sandbox]:
    start = time.perf_counter()
    records = (PaymentRecord(f"stream-{n}", amount=n + 1) for n in range(COUNT))
    with Sandbox(payments=records, idle_timeout=300) as sandbox:  # a child may read slowly
        yield sandbox
    assert time.perf_counter() - start < 600  # a hang guard, not a timing claim


def run_mode(sandbox: Sandbox, mode: str) -> dict[str, Any]:
    return run_child(CHILD, sandbox.base_url, sandbox.secret_key, mode, timeout=300)


def test_iter_payments_memory_stays_flat(big_sandbox: Sandbox) -> None:
    figures = run_mode(big_sandbox, "iter")
    assert figures["count"] == COUNT
    grown_mib = (figures["peak_kib"] - figures["before_kib"]) / 1024
    assert grown_mib < 40, f"iter_payments grew by {grown_mib:.0f} MiB for {COUNT} payments"


def test_list_payments_of_the_same_body_does_not(big_sandbox: Sandbox) -> None:
    """The control: the same list read whole grows by far more than the stream's bound."""
    figures = run_mode(big_sandbox, "list")
    assert figures["count"] == COUNT
    assert (figures["peak_kib"] - figures["before_kib"]) / 1024 > 100

"""How much paysdk costs over raw httpx, measured side by side in one run.

    python benchmarks/bench_client.py [--quick]

Three views, each printed as a ratio to its baseline (lower is better, 1.00x is no cost):
  parse     a 200-payment list body: json.loads + model_validate vs pydantic's JSON validation
  overhead  one verify over an in-memory transport: raw httpx + json.loads vs paysdk.Client
  loopback  one verify over real HTTP to the bundled sandbox, connections reused by both;
            plus the naive "new connection per call" (httpx.get) that paysdk avoids
Timings are the best of several rounds, so other load on the machine inflates them least.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable

import httpx

import paysdk
from paysdk._models import ListEnvelope
from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox, default_payments

KEY = "sk_bench_0123456789"


def best_per_call(fn: Callable[[], object], calls: int, rounds: int) -> float:
    """Seconds per call: the fastest of ``rounds`` rounds of ``calls`` calls."""
    fn()  # warm up: imports, connection, pydantic's first validation
    timings = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        timings.append((time.perf_counter() - start) / calls)
    return min(timings)


def report(title: str, rows: list[tuple[str, float]]) -> None:
    baseline = rows[0][1]
    print(f"\n{title}")
    for name, seconds in rows:
        print(f"  {name:<44} {seconds * 1e6:10.1f} us/call   {seconds / baseline:5.2f}x")


def list_body(count: int) -> bytes:
    """``count`` payments in list's shape, cycling through the sandbox's seed."""
    seed = [record.list_shape() for record in default_payments()]
    items = [{**seed[n % len(seed)], "reference": f"order-{n}"} for n in range(count)]
    return json.dumps({"data": items}).encode()


def verify_body() -> bytes:
    """The sandbox's card payment in verify's 200 shape."""
    (record,) = [r for r in default_payments() if r.reference == COMPLETED_REFERENCE]
    body = {"status": True, "message": "Verification successful", "data": record.verify_shape()}
    return json.dumps(body).encode()


def bench_parse(calls: int, rounds: int) -> None:
    body = list_body(200)
    report(
        "parse: 200-payment list body into models",
        [
            ("json.loads + ListEnvelope.model_validate", best_per_call(
                lambda: ListEnvelope.model_validate(json.loads(body)), calls, rounds)),
            ("ListEnvelope.model_validate_json (paysdk)", best_per_call(
                lambda: ListEnvelope.model_validate_json(body), calls, rounds)),
            ("json.loads alone (no models, for scale)", best_per_call(
                lambda: json.loads(body), calls, rounds)),
        ],
    )  # fmt: skip


def bench_overhead(calls: int, rounds: int) -> None:
    body = verify_body()
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=body))
    base_url = "https://api.pay.test"
    raw = httpx.Client(transport=transport)
    headers = {"Authorization": f"Bearer {KEY}"}
    url = f"{base_url}/payment/{COMPLETED_REFERENCE}"
    sdk = paysdk.Client(
        secret_key=KEY, base_url=base_url, http_client=httpx.Client(transport=transport)
    )
    report(
        "overhead: one verify, in-memory transport (no network)",
        [
            ("raw httpx.get + json.loads", best_per_call(
                lambda: json.loads(raw.get(url, headers=headers).content), calls, rounds)),
            ("paysdk Client.verify -> VerifiedPayment", best_per_call(
                lambda: sdk.verify(COMPLETED_REFERENCE), calls, rounds)),
        ],
    )  # fmt: skip


def bench_loopback(calls: int, rounds: int) -> None:
    with Sandbox(secret_key=KEY) as sandbox:
        url = f"{sandbox.base_url}/payment/{COMPLETED_REFERENCE}"
        headers = {"Authorization": f"Bearer {KEY}"}
        with (
            httpx.Client() as raw,
            paysdk.Client(secret_key=KEY, base_url=sandbox.base_url) as sdk,
        ):
            rows = [
                ("raw httpx.Client.get + json.loads", best_per_call(
                    lambda: json.loads(raw.get(url, headers=headers).content), calls, rounds)),
                ("paysdk Client.verify", best_per_call(
                    lambda: sdk.verify(COMPLETED_REFERENCE), calls, rounds)),
                ("httpx.get per call (new connection each)", best_per_call(
                    lambda: json.loads(httpx.get(url, headers=headers).content),
                    max(calls // 10, 2), min(rounds, 3))),
            ]  # fmt: skip
        sandbox.clear_requests()
    report("loopback: one verify over real HTTP to the sandbox", rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few calls: a smoke run")
    args = parser.parse_args()
    calls, rounds = (5, 2) if args.quick else (300, 7)
    print(
        f"paysdk {paysdk.__version__}, httpx {httpx.__version__}, Python {sys.version.split()[0]}"
    )
    bench_parse(calls, rounds)
    bench_overhead(calls, rounds)
    bench_loopback(max(calls // 3, 3), rounds)
    print(f"\n(best of {rounds} rounds of {calls} calls each)")


if __name__ == "__main__":
    main()

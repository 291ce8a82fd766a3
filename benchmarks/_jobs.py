"""The measured work, each job run alone in a fresh interpreter by :func:`_measure.run_job`.

    python -m benchmarks._jobs NAME '{"param": ...}'

A job imports what it needs, sets up, calls :func:`ready` and times only its work; the last line
it prints is JSON with the seconds and the process's peak RSS before and after. A fresh process
per job keeps one job's heap, garbage and connections out of the next one's numbers, and makes
``ru_maxrss`` that job's own peak.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Final, Literal

from ._measure import Paired, paired, peak_rss, timed

if TYPE_CHECKING:
    import paysdk

REFERENCE: Final = "order-1042"
LONG: Final = 300.0
"""Seconds of timeout for the list jobs: a million payments take tens of seconds on a busy box."""

_ready_rss = 0
_ready_cpu = 0.0


def ready() -> float:
    """Mark the end of set-up: the RSS so far is the job's floor. Returns the start time."""
    global _ready_rss, _ready_cpu
    _ready_rss = peak_rss(resource.getrusage(resource.RUSAGE_SELF))
    _ready_cpu = time.process_time()
    return time.perf_counter()


def done(start: float, **details: object) -> dict[str, Any]:
    """A job's report: wall and CPU seconds since :func:`ready`, and what it wants to add."""
    cpu = time.process_time() - _ready_cpu
    return {"seconds": time.perf_counter() - start, "cpu_seconds": cpu, **details}


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _references(count: int) -> Iterator[str]:
    return (f"order-{n:09d}" for n in range(count))


# --- row 1: a long list -----------------------------------------------------------------------


def list_json(base_url: str, key: str) -> dict[str, Any]:
    """The baseline: httpx reads the whole body, ``json.loads`` parses it."""
    import httpx

    with httpx.Client(timeout=LONG) as client:
        start = ready()
        response = client.get(f"{base_url}/payments", headers=_auth(key))
        response.raise_for_status()
        count = len(json.loads(response.content)["data"])
        return done(start, count=count)


def list_iter(base_url: str, key: str) -> dict[str, Any]:
    """paysdk's streaming list: one ``ListedPayment`` at a time while the body arrives."""
    import paysdk

    with paysdk.Client(secret_key=key, base_url=base_url, timeout=LONG) as client:
        start = ready()
        count = 0
        for _ in client.iter_payments():
            count += 1
        return done(start, count=count)


def list_payments(base_url: str, key: str) -> dict[str, Any]:
    """paysdk's ``list_payments()``: the whole list as models, for context."""
    import paysdk

    with paysdk.Client(secret_key=key, base_url=base_url, timeout=LONG) as client:
        start = ready()
        count = len(client.list_payments(max_response_bytes=2**40))  # the whole list, by design
        return done(start, count=count)


# --- row 2: typed parse -----------------------------------------------------------------------


def parse(count: int, rounds: int) -> dict[str, Any]:
    """``json.loads`` against ``_core.parse_list`` (what list_payments uses) on the same bytes."""
    from paysdk import _core

    from ._server import ListBody

    body = ListBody(count).render()
    assert len(_core.parse_list(body)) == count  # warm up pydantic, and check the body
    cpu: tuple[list[float], list[float]] = ([], [])
    start = ready()
    result = paired(
        timed(lambda: json.loads(body), 1, cpu=cpu[0], collect=True),
        timed(lambda: _core.parse_list(body), 1, cpu=cpu[1], collect=True),
        rounds,
    )
    return {
        "seconds": time.perf_counter() - start,
        **_rounds(result, cpu),
        "body_bytes": len(body),
    }


def _rounds(wall: Paired, cpu: tuple[list[float], list[float]]) -> dict[str, list[float]]:
    """A paired measurement's rounds, wall and CPU seconds, for the parent to read back."""
    return {
        "baseline": list(wall.baseline),
        "candidate": list(wall.candidate),
        "baseline_cpu": cpu[0],
        "candidate_cpu": cpu[1],
    }


# --- rows 3 and 5: many verifies, one verify --------------------------------------------------

Fetch = Callable[[str], Awaitable[object]]
Run = Callable[[int], Awaitable[None]]
"""Verifies the first ``n`` references (``order-000000000`` on) at the row's concurrency."""


def _pool(fetch: Fetch, concurrency: int) -> Run:
    """``concurrency`` workers taking references from one shared queue.

    Every client gets this same shape, so none pays for thousands of waiting tasks where
    another does not.
    """

    async def run(count: int) -> None:
        references = _references(count)

        async def worker() -> None:
            for reference in references:
                await fetch(reference)

        await asyncio.gather(*(worker() for _ in range(concurrency)))

    return run


@contextlib.asynccontextmanager
async def _raw_httpx(base_url: str, key: str, concurrency: int) -> AsyncIterator[Run]:
    import httpx

    headers = _auth(key)
    async with httpx.AsyncClient() as client:  # default limits, as a user would have them

        async def fetch(reference: str) -> object:
            response = await client.get(f"{base_url}/payment/{reference}", headers=headers)
            response.raise_for_status()
            return json.loads(response.content)

        yield _pool(fetch, concurrency)


@contextlib.asynccontextmanager
async def _raw_aiohttp(base_url: str, key: str, concurrency: int) -> AsyncIterator[Run]:
    import aiohttp

    headers = _auth(key)
    async with aiohttp.ClientSession() as session:

        async def fetch(reference: str) -> object:
            async with session.get(f"{base_url}/payment/{reference}", headers=headers) as response:
                response.raise_for_status()
                return json.loads(await response.read())

        yield _pool(fetch, concurrency)


def _paysdk_client(
    base_url: str, key: str, backend: Literal["httpx", "aiohttp"]
) -> paysdk.AsyncClient:
    import paysdk

    return paysdk.AsyncClient(secret_key=key, base_url=base_url, http_backend=backend)


@contextlib.asynccontextmanager
async def _paysdk(base_url: str, key: str, concurrency: int) -> AsyncIterator[Run]:
    async with _paysdk_client(base_url, key, "httpx") as sdk:
        yield _pool(sdk.verify, concurrency)


@contextlib.asynccontextmanager
async def _paysdk_aiohttp(base_url: str, key: str, concurrency: int) -> AsyncIterator[Run]:
    async with _paysdk_client(base_url, key, "aiohttp") as sdk:
        yield _pool(sdk.verify, concurrency)


@contextlib.asynccontextmanager
async def _paysdk_verify_many(base_url: str, key: str, concurrency: int) -> AsyncIterator[Run]:
    async with _paysdk_client(base_url, key, "aiohttp") as sdk:

        async def run(count: int) -> None:
            results = sdk.verify_many(_references(count), concurrency=concurrency)
            async for result in results:
                result.unwrap()  # a failed verify fails the row

        yield run


ASYNC_CLIENTS: Final[dict[str, Callable[[str, str, int], AbstractAsyncContextManager[Run]]]] = {
    "httpx": _raw_httpx,
    "aiohttp": _raw_aiohttp,
    "paysdk": _paysdk,
    "paysdk-aiohttp": _paysdk_aiohttp,
    "paysdk-aiohttp-verify-many": _paysdk_verify_many,
}


async def _async_seconds(
    client: str, base_url: str, key: str, requests: int, concurrency: int, warmup: int
) -> tuple[float, float]:
    """Wall and CPU seconds of ``requests`` verifies, after ``warmup`` ones."""
    async with ASYNC_CLIENTS[client](base_url, key, concurrency) as run:
        await run(warmup)  # open the connections, warm the code
        start = ready()
        cpu_start = time.process_time()
        await run(requests)
        return time.perf_counter() - start, time.process_time() - cpu_start


def async_verify(
    client: str,
    base_url: str,
    key: str,
    requests: int,
    concurrency: int,
    warmup: int,
    cores: list[int] | None = None,
) -> dict[str, Any]:
    """``requests`` verifies at ``concurrency``: raw httpx or aiohttp, or one of paysdk's; on
    ``cores`` only, if given (those the server is not on)."""
    if cores is not None:
        os.sched_setaffinity(0, cores)
    seconds, cpu = asyncio.run(_async_seconds(client, base_url, key, requests, concurrency, warmup))
    return {"seconds": seconds, "cpu_seconds": cpu, "requests_per_second": requests / seconds}


def sync_verify(base_url: str, key: str, calls: int, rounds: int) -> dict[str, Any]:
    """One verify at a time over a kept-alive connection: raw httpx + json.loads against paysdk."""
    import httpx

    import paysdk

    url, headers = f"{base_url}/payment/{REFERENCE}", _auth(key)
    with (
        httpx.Client() as raw,
        paysdk.Client(secret_key=key, base_url=base_url) as sdk,
    ):

        def get_raw() -> object:
            response = raw.get(url, headers=headers)
            response.raise_for_status()
            return json.loads(response.content)

        return _raw_against_paysdk(get_raw, sdk, calls, rounds)


def overhead(calls: int, rounds: int) -> dict[str, Any]:
    """One verify over httpx's in-memory transport: paysdk's own CPU cost, no network at all."""
    import httpx

    import paysdk

    from ._server import verify_body

    body = verify_body(REFERENCE)
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=body))
    base_url, key = "https://api.pay.test", "sk_bench_overhead"
    url, headers = f"{base_url}/payment/{REFERENCE}", _auth(key)
    with (
        httpx.Client(transport=transport) as raw,
        httpx.Client(transport=transport) as sdk_http,
        paysdk.Client(secret_key=key, base_url=base_url, http_client=sdk_http) as sdk,
    ):

        def get_raw() -> object:
            return json.loads(raw.get(url, headers=headers).content)

        return _raw_against_paysdk(get_raw, sdk, calls, rounds)


def _raw_against_paysdk(
    get_raw: Callable[[], object], sdk: paysdk.Client, calls: int, rounds: int
) -> dict[str, Any]:
    """Warm both up (connecting them), then ``rounds`` paired timings of ``calls`` verifies
    each, raw first in even rounds; the job's report of wall and CPU seconds per round."""
    get_raw()
    sdk.verify(REFERENCE)
    cpu: tuple[list[float], list[float]] = ([], [])
    start = ready()
    result = paired(
        timed(get_raw, calls, cpu=cpu[0]),
        timed(lambda: sdk.verify(REFERENCE), calls, cpu=cpu[1]),
        rounds,
    )
    return {"seconds": time.perf_counter() - start, **_rounds(result, cpu)}


# --- row 6: reconcile --------------------------------------------------------------------------


def reconcile(base_url: str, key: str, ledger: str) -> dict[str, Any]:
    """``Ledger.reconcile``: the streamed list against a ledger of as many rows."""
    import paysdk

    with (
        paysdk.Client(secret_key=key, base_url=base_url, timeout=LONG) as client,
        paysdk.Ledger(ledger, create_table=False) as books,
    ):
        start = ready()
        report = books.reconcile(client)
        problems = sum(report.counts.values())
        return done(start, count=report.listed, problems=problems)


def ledger_select(ledger: str) -> dict[str, Any]:
    """The baseline: every row of the ledger, read by one plain ``SELECT`` through sqlite3."""
    import sqlite3

    from paysdk.ledger import DEFAULT_TABLE

    connection = sqlite3.connect(ledger)
    try:
        start = ready()
        count = 0
        for _ in connection.execute(f"SELECT * FROM {DEFAULT_TABLE}"):  # noqa: S608 - ours
            count += 1
        return done(start, count=count)
    finally:
        connection.close()


JOBS: Final[dict[str, Callable[..., dict[str, Any]]]] = {
    "list-json": list_json,
    "list-iter": list_iter,
    "list-payments": list_payments,
    "parse": parse,
    "async-verify": async_verify,
    "sync-verify": sync_verify,
    "overhead": overhead,
    "reconcile": reconcile,
    "ledger-select": ledger_select,
}


def main(jobs: Mapping[str, Callable[..., dict[str, Any]]] = JOBS) -> None:
    """Run the job the command line names, with its JSON parameters; print its report."""
    name, params = sys.argv[1], json.loads(sys.argv[2])
    report = jobs[name](**params)
    report["ready_rss_bytes"] = _ready_rss
    report["peak_rss_bytes"] = peak_rss(resource.getrusage(resource.RUSAGE_SELF))
    print(json.dumps(report))


if __name__ == "__main__":
    main()

"""The WAN row's jobs: verifies and a long list over TLS through the delay proxy, each job in a
fresh interpreter, as :mod:`benchmarks._jobs`'s are.

    python -m benchmarks._wan_jobs NAME '{"param": ...}'

Every client trusts the bench's CA through ``SSL_CERT_FILE``, set before any client library is
imported: paysdk (``verify=True``), httpx and aiohttp all read it, as a merchant's would. Each job
times from a client made to its last answer, so the connections it opens (a TCP and a TLS round
trip each through the proxy) are in its time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

from ._jobs import ASYNC_CLIENTS, LONG, _auth, _references, done, main, ready

__all__ = ["WAN_JOBS"]


def _trust(ca: str) -> None:
    """Trust the bench's CA, the way the environment tells every client library to."""
    os.environ["SSL_CERT_FILE"] = ca


async def _async_run(
    client: str, base_url: str, key: str, requests: int, concurrency: int
) -> dict[str, Any]:
    async with ASYNC_CLIENTS[client](base_url, key, concurrency) as run:
        start = ready()
        await run(requests)
        return done(start)


def wan_async(
    client: str, base_url: str, key: str, ca: str, requests: int, concurrency: int
) -> dict[str, Any]:
    """``requests`` verifies by ``concurrency`` workers (``_jobs``' shared queue), connections
    opened included: raw httpx or aiohttp, or one of paysdk's."""
    _trust(ca)
    return asyncio.run(_async_run(client, base_url, key, requests, concurrency))


@contextlib.contextmanager
def _sync_fetch(
    client: str, base_url: str, key: str
) -> Generator[Callable[[str], object], None, None]:
    """One verify of a reference: paysdk's ``Client.verify``, or raw httpx + ``json.loads``."""
    if client == "paysdk":
        import paysdk

        with paysdk.Client(secret_key=key, base_url=base_url) as sdk:
            yield sdk.verify
        return
    import httpx

    headers = _auth(key)
    with httpx.Client() as raw:  # default limits, as a user would have them

        def fetch(reference: str) -> object:
            response = raw.get(f"{base_url}/payment/{reference}", headers=headers)
            response.raise_for_status()
            return json.loads(response.content)

        yield fetch


def wan_sync(
    client: str, base_url: str, key: str, ca: str, requests: int, threads: int
) -> dict[str, Any]:
    """``requests`` verifies by ``threads`` threads sharing one client and one queue."""
    _trust(ca)
    references, lock = _references(requests), threading.Lock()

    def take() -> str | None:
        with lock:
            return next(references, None)

    with _sync_fetch(client, base_url, key) as fetch:

        def worker() -> None:
            while (reference := take()) is not None:
                fetch(reference)

        start = ready()
        with ThreadPoolExecutor(threads) as pool:
            for future in [pool.submit(worker) for _ in range(threads)]:
                future.result()  # a failed verify fails the job
        return done(start)


def wan_stream(client: str, base_url: str, key: str, ca: str) -> dict[str, Any]:
    """The whole list: paysdk's ``iter_payments()`` one payment at a time, or raw httpx's body
    parsed by ``json.loads``; the seconds to the first payment in hand, and to the last."""
    _trust(ca)
    if client == "paysdk":
        import paysdk

        with paysdk.Client(secret_key=key, base_url=base_url, timeout=LONG) as sdk:
            start = ready()
            first, count = None, 0
            for _ in sdk.iter_payments():
                if first is None:
                    first = time.perf_counter() - start
                count += 1
            return done(start, count=count, first_seconds=first)
    import httpx

    with httpx.Client(timeout=LONG) as raw:
        start = ready()
        response = raw.get(f"{base_url}/payments", headers=_auth(key))
        response.raise_for_status()
        payments = json.loads(response.content)["data"]
        return done(start, count=len(payments), first_seconds=time.perf_counter() - start)


WAN_JOBS: Final[dict[str, Callable[..., dict[str, Any]]]] = {
    "wan-async": wan_async,
    "wan-sync": wan_sync,
    "wan-stream": wan_stream,
}


if __name__ == "__main__":
    main(WAN_JOBS)

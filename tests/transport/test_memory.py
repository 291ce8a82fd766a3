"""No answer can fill the client's memory: peak RSS of a child process against hostile bodies.

The hostile server runs here; the client runs in a child so its peak (VmHWM) is its own. Each
body is far past the verify cap (1 MiB): without the cap, the first would cost 200 MB and more.
"""

from __future__ import annotations

import pytest

from tests.conftest import SECRET
from tests.support.hostile import Behaviour, HostileServer, endless_chunked, gzip_bomb, large_body
from tests.support.memory_child import run_child

CHILD = """
import asyncio, json, sys, paysdk

async def main(backend, base_url, key):
    options = {"secret_key": key, "base_url": base_url, "max_retries": 0, "timeout": 60}
    if backend == "sync":
        client = paysdk.Client(**options)
        async def verify(reference):
            return client.verify(reference)
    else:
        client = paysdk.AsyncClient(**options, http_backend=backend)
        verify = client.verify
    try:
        await verify("warm-up")
    except paysdk.PaySDKError:
        pass
    before = peak_kib()
    try:
        await verify("order-1042")
        outcome = "returned"
    except paysdk.PaySDKError as exc:
        outcome = type(exc).__name__
    print(json.dumps({"outcome": outcome, "grown_kib": peak_kib() - before}))

asyncio.run(main(*sys.argv[1:]))
"""


@pytest.mark.parametrize(
    ("behaviour", "what"),
    [
        (large_body(200_000_000), "a 200 MB body"),
        (endless_chunked(), "an endless chunked body"),
        (gzip_bomb(512 << 20), "a gzip bomb of 512 MiB"),
    ],
    ids=["200MB", "endless", "gzip-bomb"],
)
@pytest.mark.parametrize("backend", ["sync", "httpx", "aiohttp"])
def test_a_huge_answer_costs_the_client_about_its_cap(
    hostile: HostileServer, behaviour: Behaviour, what: str, backend: str
) -> None:
    hostile.script(endless_chunked(), behaviour)  # the warm-up meets a body too, then the case
    figures = run_child(CHILD, backend, hostile.base_url, SECRET, timeout=300)
    what = f"{what} ({backend})"
    assert figures["outcome"] == "ResponseTooLargeError", what
    assert figures["grown_kib"] < 40 * 1024, f"{what} grew the client by {figures['grown_kib']} KiB"

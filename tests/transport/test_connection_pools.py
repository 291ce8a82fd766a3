"""The pools of the httpx clients paysdk makes, against the sandbox over 127.0.0.1: no more
connections than calls at once, none closed only to be opened again, and a call that imports
nothing and looks at no more connections however many the pool holds."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType

import httpcore
import pytest

import paysdk
from paysdk._transport._async import connections as async_connections
from paysdk._transport._sync.connections import Connections
from paysdk._transport.async_slots import async_shielded
from paysdk.sandbox import COMPLETED_REFERENCE, Fault, Sandbox
from paysdk.sandbox._http import Handler

pytestmark = pytest.mark.anyio

AT_ONCE = 50
"""Verifies at once: what the benchmark of the async client runs."""
MAX_CONNECTIONS = 100
"""The most connections a pool opens, as a default ``httpx.Client``."""


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """The client address of each connection the sandbox accepts, in order."""
    seen: list[tuple[str, int]] = []
    setup = Handler.setup

    def counting_setup(handler: Handler) -> None:
        seen.append(handler.client_address[:2])
        setup(handler)

    monkeypatch.setattr(Handler, "setup", counting_setup)
    return seen


class LookupRecorder(importlib.abc.MetaPathFinder):
    """First on ``sys.meta_path``: records every module a lookup is started for, finds none."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.thread = threading.get_ident()

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if threading.get_ident() == self.thread or fullname.startswith(("httpcore", "sniffio")):
            self.names.append(fullname)
        return None


@contextlib.contextmanager
def recording_lookups() -> Iterator[LookupRecorder]:
    """Every module lookup started inside the block, by this thread or for httpcore's sake."""
    recorder = LookupRecorder()
    sys.meta_path.insert(0, recorder)
    try:
        yield recorder
    finally:
        sys.meta_path.remove(recorder)


async def verify_together(client: paysdk.AsyncClient, count: int) -> None:
    payments = await asyncio.gather(*(client.verify(COMPLETED_REFERENCE) for _ in range(count)))
    assert all(payment.succeeded for payment in payments)


async def verify_by_workers(client: paysdk.AsyncClient, workers: int, count: int) -> None:
    """``count`` verifies by ``workers`` tasks sharing one queue: ``workers`` at once."""
    queue = list(range(count))

    async def work() -> None:
        while queue:
            queue.pop()
            assert (await client.verify(COMPLETED_REFERENCE)).succeeded

    await asyncio.gather(*(work() for _ in range(workers)))


async def test_async_verifies_open_no_more_connections_than_run_at_once(
    sandbox: Sandbox, opened: list[tuple[str, int]]
) -> None:
    """Answers that take a while (50 ms) keep every connection busy: a connection given back
    is handed to one waiting verify only, and never closed only to open another."""
    sandbox.inject(Fault(delay=0.05), times=None)
    async with paysdk.AsyncClient(base_url=sandbox.base_url, secret_key=sandbox.secret_key) as c:
        await verify_by_workers(c, AT_ONCE, 8 * AT_ONCE)
        for _ in range(2):  # bursts that end together: every connection idle at once
            await verify_together(c, AT_ONCE)
    assert len(opened) <= AT_ONCE, f"{len(opened)} connections for {AT_ONCE} verifies at once"


async def test_no_more_connections_than_max_connections(
    sandbox: Sandbox, opened: list[tuple[str, int]]
) -> None:
    """More verifies at once than a pool's 100 connections: the rest wait for one."""
    sandbox.inject(Fault(delay=0.05), times=None)
    async with paysdk.AsyncClient(base_url=sandbox.base_url, secret_key=sandbox.secret_key) as c:
        await verify_together(c, 130)
    assert len(opened) == MAX_CONNECTIONS


def test_sync_verifies_open_no_more_connections_than_run_at_once(
    sandbox: Sandbox, opened: list[tuple[str, int]]
) -> None:
    sandbox.inject(Fault(delay=0.05), times=None)

    def verify(client: paysdk.Client) -> bool:
        return client.verify(COMPLETED_REFERENCE).succeeded

    with (
        paysdk.Client(base_url=sandbox.base_url, secret_key=sandbox.secret_key) as client,
        ThreadPoolExecutor(AT_ONCE) as threads,
    ):
        assert all(threads.map(verify, [client] * 6 * AT_ONCE))
    assert len(opened) <= AT_ONCE, f"{len(opened)} connections for {AT_ONCE} verifies at once"


async def test_a_verify_on_open_connections_looks_up_no_module(sandbox: Sandbox) -> None:
    async with paysdk.AsyncClient(base_url=sandbox.base_url, secret_key=sandbox.secret_key) as c:
        await verify_together(c, 10)  # connections opened, code loaded
        with recording_lookups() as lookups:
            for _ in range(3):
                await verify_together(c, 10)
                await c.verify(COMPLETED_REFERENCE)
    assert lookups.names == []


@pytest.fixture
def shielded_scopes(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Each shielded scope the async pool sets up, in order."""
    scopes: list[object] = []

    def counting() -> contextlib.AbstractContextManager[object]:
        scope = async_shielded()
        scopes.append(scope)
        return scope

    monkeypatch.setattr(async_connections, "async_shielded", counting)
    return scopes


async def test_a_verify_on_open_connections_shields_only_the_closing_of_its_answer(
    sandbox: Sandbox, shielded_scopes: list[object]
) -> None:
    async with paysdk.AsyncClient(base_url=sandbox.base_url, secret_key=sandbox.secret_key) as c:
        await c.verify(COMPLETED_REFERENCE)  # the connection opened
        shielded_scopes.clear()
        for _ in range(10):
            await c.verify(COMPLETED_REFERENCE)
        scopes = len(shielded_scopes)  # closing the client shields its closing too
    assert scopes == 10, "a scope for nothing to close is set up per verify"


@pytest.fixture
def expiry_checks(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Each connection whose expiry is checked (a poll of its socket each), in order."""
    checked: list[object] = []
    has_expired = httpcore.AsyncHTTPConnection.has_expired

    def counting(connection: httpcore.AsyncHTTPConnection) -> bool:
        checked.append(connection)
        return has_expired(connection)

    monkeypatch.setattr(httpcore.AsyncHTTPConnection, "has_expired", counting)
    return checked


async def test_a_verify_checks_a_few_connections_however_many_the_pool_holds(
    sandbox: Sandbox, opened: list[tuple[str, int]], expiry_checks: list[object]
) -> None:
    async with paysdk.AsyncClient(base_url=sandbox.base_url, secret_key=sandbox.secret_key) as c:
        await verify_together(c, 60)  # the pool now holds up to 60 idle connections
        held = len(opened)
        expiry_checks.clear()
        for _ in range(10):
            await c.verify(COMPLETED_REFERENCE)
    assert held > 20
    assert len(expiry_checks) <= 2 * 10, f"{len(expiry_checks)} checks for 10 verifies"
    assert len(opened) == held


async def test_a_connection_the_server_closed_is_not_reused(
    opened: list[tuple[str, int]],
) -> None:
    with Sandbox(idle_timeout=0.2) as sandbox:
        async with paysdk.AsyncClient(
            base_url=sandbox.base_url, secret_key=sandbox.secret_key, max_retries=0
        ) as client:
            await client.verify(COMPLETED_REFERENCE)
            await asyncio.sleep(0.5)  # the sandbox closes the idle connection meanwhile
            assert (await client.verify(COMPLETED_REFERENCE)).succeeded
    assert len(opened) == 2


def test_sync_pool_timeout_is_a_timeout_error(sandbox: Sandbox) -> None:
    """One connection at most: a second request waits for it, and gives up at the pool
    timeout as httpx's own pool does."""
    factory = httpcore.ConnectionPool()
    pool = Connections(factory, max_connections=1, max_idle=1)
    url = f"{sandbox.base_url}/payment/{COMPLETED_REFERENCE}"
    host = sandbox.base_url.split("/")[2].encode()
    headers = [(b"Host", host), (b"Authorization", f"Bearer {sandbox.secret_key}".encode())]
    held = pool.handle_request(httpcore.Request("GET", url, headers=headers))
    waiting = httpcore.Request("GET", url, headers=headers, extensions={"timeout": {"pool": 0.1}})
    with pytest.raises(httpcore.PoolTimeout):
        pool.handle_request(waiting)
    held.read()
    held.close()
    again = pool.handle_request(waiting)  # given back: the next request takes it
    assert again.status == 200
    again.read()
    again.close()
    assert pool.opened == 1
    pool.close()

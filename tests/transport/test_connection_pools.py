"""The pools of the httpx clients paysdk makes, against the sandbox over 127.0.0.1: no more
connections than calls at once, none closed only to be opened again, and a call that imports
nothing and looks at no more connections however many the pool holds."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib.abc
import importlib.machinery
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import FrameType, ModuleType
from typing import Any

import httpcore
import pytest

import paysdk
from paysdk._transport._async import connections as async_connections
from paysdk._transport._sync import pool as sync_pool
from paysdk._transport._sync.connections import Connections
from paysdk._transport.async_direct import AsyncDirectConnection
from paysdk._transport.async_slots import async_shielded
from paysdk._transport.slots import Slots
from paysdk.sandbox import COMPLETED_REFERENCE, Fault, Sandbox
from tests.conftest import SECRET
from tests.support.hostile import HostileServer, stall

pytestmark = pytest.mark.anyio

AT_ONCE = 50
"""Verifies at once: what the benchmark of the async client runs."""
MAX_CONNECTIONS = 100
"""The most connections a pool opens, as a default ``httpx.Client``."""


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


async def test_async_verifies_open_no_more_connections_than_run_at_once(sandbox: Sandbox) -> None:
    """Answers that take a while (50 ms) keep every connection busy: a connection given back
    is handed to one waiting verify only, and never closed only to open another."""
    sandbox.inject(Fault(delay=0.05), times=None)
    async with paysdk.AsyncClient(base_url=sandbox.base_url, secret_key=sandbox.secret_key) as c:
        await verify_by_workers(c, AT_ONCE, 8 * AT_ONCE)
        for _ in range(2):  # bursts that end together: every connection idle at once
            await verify_together(c, AT_ONCE)
    opened = len(sandbox.connections)
    assert opened <= AT_ONCE, f"{opened} connections for {AT_ONCE} verifies at once"


async def test_no_more_connections_than_max_connections(sandbox: Sandbox) -> None:
    """More verifies at once than a pool's 100 connections: the rest wait for one."""
    sandbox.inject(Fault(delay=0.05), times=None)
    async with paysdk.AsyncClient(base_url=sandbox.base_url, secret_key=sandbox.secret_key) as c:
        await verify_together(c, 130)
    assert len(sandbox.connections) == MAX_CONNECTIONS


def test_sync_verifies_open_no_more_connections_than_run_at_once(sandbox: Sandbox) -> None:
    sandbox.inject(Fault(delay=0.05), times=None)

    def verify(client: paysdk.Client) -> bool:
        return client.verify(COMPLETED_REFERENCE).succeeded

    with (
        paysdk.Client(base_url=sandbox.base_url, secret_key=sandbox.secret_key) as client,
        ThreadPoolExecutor(AT_ONCE) as threads,
    ):
        assert all(threads.map(verify, [client] * 6 * AT_ONCE))
    opened = len(sandbox.connections)
    assert opened <= AT_ONCE, f"{opened} connections for {AT_ONCE} verifies at once"


def test_a_new_sync_clients_first_verifies_at_once_share_its_pools(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``verify_many``'s threads start on a new client together: they share the pools the first
    of them makes. Pools made by each would be lost with the connections they opened, which
    ``close`` then misses and the collector closes, warning (``ResourceWarning``)."""
    made: list[sync_pool.Pools] = []

    class SlowPools(sync_pool.Pools):
        """Takes a while to make: every thread's first call arrives meanwhile."""

        def __init__(self) -> None:
            made.append(self)
            time.sleep(0.05)
            super().__init__()

    monkeypatch.setattr(sync_pool, "Pools", SlowPools)
    references = [COMPLETED_REFERENCE] * 16
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with paysdk.Client(base_url=sandbox.base_url, secret_key=sandbox.secret_key) as client:
            assert all(result.ok for result in client.verify_many(references, concurrency=8))
        gc.collect()
    assert len(made) == 1
    assert [str(warning.message) for warning in caught] == []


def test_a_client_closed_while_its_first_call_makes_its_pools_closes_them(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An app shutting down closes a client whose first call, in a worker thread, is making its
    pools: ``close`` waits for them and closes them, so no connection of theirs outlives it."""
    making = threading.Event()

    class SlowPools(sync_pool.Pools):
        """Takes a while to make: ``close`` comes meanwhile."""

        def __init__(self) -> None:
            making.set()
            time.sleep(0.2)
            super().__init__()

    monkeypatch.setattr(sync_pool, "Pools", SlowPools)
    client = paysdk.Client(base_url=sandbox.base_url, secret_key=sandbox.secret_key)
    outcomes: list[object] = []

    def first_call() -> None:
        try:
            outcomes.append(client.verify(COMPLETED_REFERENCE).reference)
        except paysdk.PaySDKError as exc:
            outcomes.append(type(exc))

    worker = threading.Thread(target=first_call)
    worker.start()
    assert making.wait(5)
    client.close()
    worker.join(5)
    assert len(outcomes) == 1, outcomes
    deadline = time.monotonic() + 5
    while sandbox.open_connections and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sandbox.open_connections == 0, outcomes


async def test_a_verify_on_open_connections_looks_up_no_module(sandbox: Sandbox) -> None:
    async with paysdk.AsyncClient(base_url=sandbox.base_url, secret_key=sandbox.secret_key) as c:
        await verify_together(c, 10)  # connections opened, code loaded
        with recording_lookups() as lookups:
            for _ in range(3):
                await verify_together(c, 10)
                await c.verify(COMPLETED_REFERENCE)
    assert lookups.names == []


async def test_a_verify_that_opens_a_connection_looks_up_no_module_either(
    sandbox: Sandbox,
) -> None:
    """A route without a proxy opens paysdk's own connections, which set up no lock of
    httpcore's: no ``import sniffio``, which anyio no longer installs, searched for on the path."""
    key, url = sandbox.secret_key, sandbox.base_url
    async with paysdk.AsyncClient(base_url=url, secret_key=key) as warm:
        await verify_together(warm, 2)  # the code loaded, by another client's pool
    async with paysdk.AsyncClient(base_url=url, secret_key=key) as c:
        opened = len(sandbox.connections)
        with recording_lookups() as lookups:
            await verify_together(c, 3)
        assert len(sandbox.connections) == opened + 3
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
        opened = len(sandbox.connections)
        shielded_scopes.clear()
        for _ in range(10):
            await c.verify(COMPLETED_REFERENCE)
        scopes = len(shielded_scopes)  # closing the client shields its closing too
        reopened = len(sandbox.connections) - opened
    # One scope closes each answer. A loaded machine may see the kept-alive connection expire
    # and be replaced: closing the old one is one more scope for each connection opened again.
    assert scopes <= 10 + reopened, f"{scopes} scopes for 10 verifies, {reopened} reconnects"
    assert reopened <= 2


@pytest.fixture
def expiry_checks(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Each connection whose expiry is checked (a poll of its socket each), in order."""
    checked: list[object] = []
    has_expired = AsyncDirectConnection.has_expired

    def counting(connection: AsyncDirectConnection) -> bool:
        checked.append(connection)
        return has_expired(connection)

    monkeypatch.setattr(AsyncDirectConnection, "has_expired", counting)
    return checked


async def test_a_verify_checks_a_few_connections_however_many_the_pool_holds(
    sandbox: Sandbox, expiry_checks: list[object]
) -> None:
    async with paysdk.AsyncClient(base_url=sandbox.base_url, secret_key=sandbox.secret_key) as c:
        await verify_together(c, 60)  # the pool now holds up to 60 idle connections
        held = len(sandbox.connections)
        expiry_checks.clear()
        for _ in range(10):
            await c.verify(COMPLETED_REFERENCE)
    assert held > 20
    assert expiry_checks, "the pool's connections are paysdk's own"
    assert len(expiry_checks) <= 2 * 10, f"{len(expiry_checks)} checks for 10 verifies"
    assert len(sandbox.connections) == held


async def test_a_connection_the_server_closed_is_not_reused() -> None:
    with Sandbox(idle_timeout=0.2) as sandbox:
        async with paysdk.AsyncClient(
            base_url=sandbox.base_url, secret_key=sandbox.secret_key, max_retries=0
        ) as client:
            await client.verify(COMPLETED_REFERENCE)
            await asyncio.sleep(0.5)  # the sandbox closes the idle connection meanwhile
            assert (await client.verify(COMPLETED_REFERENCE)).succeeded
    assert len(sandbox.connections) == 2


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


def test_a_sync_call_waits_for_a_connection_no_longer_than_its_deadline(
    hostile: HostileServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every connection busy: a call with a ``deadline`` stops waiting for one when its deadline
    passes (an ``APITimeoutError``), however far off the pool timeout is (here there is none).
    Had it waited on, it would still be waiting when the safety net closes the client, and end
    with ``ClientClosedError``."""
    monkeypatch.setattr(sync_pool, "MAX_CONNECTIONS", 1)
    hostile.script(stall())  # the one connection's request is never answered
    client = paysdk.Client(
        secret_key=SECRET, base_url=hostile.base_url, timeout=None, max_retries=0
    )
    holding: list[BaseException] = []

    def hold() -> None:
        try:
            client.verify("order-1")
        except paysdk.PaySDKError as exc:
            holding.append(exc)

    holder = threading.Thread(target=hold)
    holder.start()
    safety_net = threading.Timer(10, client.close)
    try:
        assert hostile.attempts_seen(1) == 1  # the holder has the connection
        safety_net.start()
        with pytest.raises(paysdk.APITimeoutError):
            client.verify("order-2", deadline=0.2)
    finally:
        safety_net.cancel()
        client.close()
        holder.join(10)
    assert hostile.attempts == 1  # the second call sent nothing
    assert [type(exc) for exc in holding] == [paysdk.ClientClosedError]


LOCK = type(threading.Lock())


@contextlib.contextmanager
def telling_when_blocked(blocked: threading.Event) -> Iterator[None]:
    """Sets ``blocked`` as this thread calls ``acquire`` on a lock another holds: the call that
    makes it wait. (A profile function: it sees each call into C before it is made.)"""

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        lock = getattr(arg, "__self__", None) if event == "c_call" else None
        if isinstance(lock, LOCK) and arg.__name__ == "acquire" and lock.locked():
            blocked.set()

    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(None)


def start_waiting(name: str, wait: Callable[[], object], granted: list[str]) -> threading.Thread:
    """A thread that calls ``wait`` (the pool's wait for a connection), notes ``name`` in
    ``granted`` when it returns, and gives back what it got; started once it is waiting."""
    blocked = threading.Event()

    def run() -> None:
        with telling_when_blocked(blocked):
            got = wait()
        granted.append(name)
        if isinstance(got, httpcore.Response):
            got.read()
            got.close()

    thread = threading.Thread(target=run, name=name)
    thread.start()
    assert blocked.wait(10), f"{name} never waited"
    return thread


def test_sync_pool_waiters_are_served_in_the_order_they_came(sandbox: Sandbox) -> None:
    """One connection, three threads waiting for it, one after the other: each gets it in the
    order it came, and a call made as the connection is given back (by the thread giving it
    back, which holds the interpreter) waits behind them rather than taking it first."""
    pool = Connections(httpcore.ConnectionPool(), max_connections=1, max_idle=1)
    url = f"{sandbox.base_url}/payment/{COMPLETED_REFERENCE}"
    host = sandbox.base_url.split("/")[2].encode()
    headers = [(b"Host", host), (b"Authorization", f"Bearer {sandbox.secret_key}".encode())]

    def request() -> httpcore.Response:
        return pool.handle_request(httpcore.Request("GET", url, headers=headers))

    granted: list[str] = []
    held = request()
    waiters = [start_waiting(name, request, granted) for name in ("first", "second", "third")]
    held.read()
    held.close()  # given back to "first", whoever runs next
    late = request()
    granted.append("late")
    late.read()
    late.close()
    for waiter in waiters:
        waiter.join(10)
    assert granted == ["first", "second", "third", "late"]
    assert pool.opened == 1
    pool.close()


def test_a_waiter_that_gives_up_leaves_its_place_to_the_next() -> None:
    """A thread whose pool timeout runs out stops waiting: the slot given back afterwards goes
    to the thread behind it, and the slots count true again."""
    slots = Slots(1)
    slots.acquire(None)
    granted: list[str] = []

    def give_up() -> None:
        with pytest.raises(httpcore.PoolTimeout, match=r"pool timeout \(0.2 s\)"):
            slots.acquire(0.2)

    quitter = start_waiting("quitter", give_up, granted)
    waiter = start_waiting("waiter", lambda: slots.acquire(None), granted)
    quitter.join(10)
    assert granted == ["quitter"]
    slots.release()
    waiter.join(10)
    assert granted == ["quitter", "waiter"]
    slots.release()  # the waiter's: one slot free again, and only one
    slots.acquire(0)
    with pytest.raises(httpcore.PoolTimeout):
        slots.acquire(0)

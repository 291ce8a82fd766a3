"""An ``AsyncClient`` dropped without being closed (one made per request, the anti-pattern a
merchant still writes) leaves no connection open once it is collected, as httpx's own and
aiohttp's do: its event loop, reading each idle socket, would otherwise hold every one open
until the service hung up, a descriptor each for as long as the service keeps connections."""

from __future__ import annotations

import asyncio
import gc

import pytest

import paysdk
from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox

pytestmark = pytest.mark.anyio

CLIENTS = 20


async def verified_clients(sandbox: Sandbox, count: int) -> list[paysdk.AsyncClient]:
    """``count`` clients, each with one kept-alive connection after one verify."""
    clients = []
    for _ in range(count):
        client = paysdk.AsyncClient(secret_key=sandbox.secret_key, base_url=sandbox.base_url)
        assert (await client.verify(COMPLETED_REFERENCE)).succeeded
        clients.append(client)
    return clients


async def open_connections_settled(sandbox: Sandbox) -> int:
    """The sandbox's open connections once its threads have seen the closes (polled, at most
    two seconds: the sandbox's own idle limit is 30 s, so nothing is closed by it meanwhile)."""
    for _ in range(200):
        if sandbox.open_connections == 0:
            break
        await asyncio.sleep(0.01)
    return sandbox.open_connections


async def test_clients_dropped_unclosed_close_their_connections() -> None:
    """Twenty clients, each with a connection kept alive, dropped unclosed: once collected, the
    sandbox serves none of their connections."""
    with Sandbox() as sandbox:
        clients = await verified_clients(sandbox, CLIENTS)
        assert sandbox.open_connections == CLIENTS
        del clients
        gc.collect()
        assert await open_connections_settled(sandbox) == 0


async def test_clients_collected_in_another_thread_close_their_connections() -> None:
    """A collection may run in any thread: dropped there, the clients' connections are closed
    through their loop (in debug mode, asyncio refuses a transport touched from another
    thread), and none is left open."""
    asyncio.get_running_loop().set_debug(True)
    with Sandbox() as sandbox:
        clients = await verified_clients(sandbox, CLIENTS)
        await asyncio.to_thread(clients.clear)  # the last references go in the worker thread
        await asyncio.to_thread(gc.collect)
        assert await open_connections_settled(sandbox) == 0

"""An AsyncClient closes from any event loop, its connections closed by the loop they belong to.

Every test runs for both async backends (httpx, aiohttp) against a real sandbox, and counts the
connections the sandbox still serves, so "closed" means the server saw them go. The loop a
client was first used in may still be running in another thread, stopped but not closed, or
closed; whichever loop awaits ``close()``, it raises nothing and leaves the client closed.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, Literal, TypeVar

import pytest

import paysdk
from paysdk._transport import async_streams
from paysdk.sandbox import COMPLETED_REFERENCE, FAILED_REFERENCE, NON_CARD_REFERENCE, Sandbox

T = TypeVar("T")
Backend = Literal["httpx", "aiohttp"]
WAIT = 30.0
"""A generous bound on any wait, so a regression fails instead of hanging the suite."""


@pytest.fixture(params=["httpx", "aiohttp"])
def backend(request: pytest.FixtureRequest) -> Backend:
    value: Backend = request.param
    return value


def connect(sandbox: Sandbox, backend: Backend) -> paysdk.AsyncClient:
    return paysdk.AsyncClient(
        secret_key=sandbox.secret_key, base_url=sandbox.base_url, http_backend=backend
    )


async def use(client: paysdk.AsyncClient) -> None:
    """Three calls at once: three connections, kept alive after."""
    references = (COMPLETED_REFERENCE, FAILED_REFERENCE, NON_CARD_REFERENCE)
    payments = await asyncio.gather(*(client.verify(reference) for reference in references))
    assert [payment.reference for payment in payments] == list(references)


def eventually(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "the condition did not come true in time"
        time.sleep(0.01)


class OwnerLoop:
    """An event loop running in a thread, as an app's loop is while another thread closes."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(WAIT)


@contextmanager
def warnings_seen() -> Iterator[list[tuple[type[Warning], str]]]:
    """Every warning raised inside, as its category and message. Not the warning itself, which
    names its source: aiohttp's would keep the unclosed session, and its connections, alive."""
    seen: list[tuple[type[Warning], str]] = []

    def show(message: Warning | str, category: type[Warning], *where: Any, **_: Any) -> None:
        seen.append((category, str(message)))

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        yield seen


@contextmanager
def owner_loop() -> Iterator[OwnerLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield OwnerLoop(loop)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(WAIT)
        loop.close()


def test_closing_after_the_owner_loop_ended_raises_nothing_and_leaves_the_client_closed(
    sandbox: Sandbox, backend: Backend
) -> None:
    """Used in one ``asyncio.run``, closed in a second: a call from the second loop is refused,
    the close is not. The first loop ended with the connections still open, and no loop is left
    to close them: their sockets go when collected, each with a ResourceWarning. Those are
    expected here, so they are caught, and the sandbox must see every connection go."""
    client = connect(sandbox, backend)
    asyncio.run(use(client))
    assert sandbox.open_connections > 0
    with pytest.raises(paysdk.EventLoopError):
        asyncio.run(client.verify(COMPLETED_REFERENCE))
    with warnings_seen() as seen:
        asyncio.run(client.close())
        with pytest.raises(paysdk.ClientClosedError):
            asyncio.run(client.verify(COMPLETED_REFERENCE))
        del client
        gc.collect()
    assert [message for category, message in seen if category is not ResourceWarning] == []
    eventually(lambda: sandbox.open_connections == 0)


def test_closing_from_another_loop_closes_in_the_owner_loop_running_in_a_thread(
    sandbox: Sandbox, backend: Backend
) -> None:
    """The owner loop, still running, closes the connections itself: the sandbox sees them go
    as soon as ``close()`` returns in the other loop, and nothing is left to warn about."""
    with warnings_seen() as seen:
        with owner_loop() as owner:
            client = connect(sandbox, backend)
            owner.run(use(client))
            assert sandbox.open_connections > 0
            asyncio.run(client.close())
            eventually(lambda: sandbox.open_connections == 0)
            with pytest.raises(paysdk.ClientClosedError):
                owner.run(client.verify(COMPLETED_REFERENCE))
        del client
        gc.collect()
    assert seen == []


def test_closing_from_another_loop_runs_a_stopped_owner_loop_until_closed(
    sandbox: Sandbox, backend: Backend
) -> None:
    """An owner loop stopped but not closed (``run_until_complete`` returned) is run again, in
    a worker thread, just long enough to close its connections: cleanly, without a warning,
    and the loop is left stopped for its owner to close."""
    loop = asyncio.new_event_loop()
    try:
        with warnings_seen() as seen:
            client = connect(sandbox, backend)
            loop.run_until_complete(use(client))
            assert sandbox.open_connections > 0
            asyncio.run(client.close())
            eventually(lambda: sandbox.open_connections == 0)
            assert not loop.is_running()
            with pytest.raises(paysdk.ClientClosedError):
                loop.run_until_complete(client.verify(COMPLETED_REFERENCE))
            del client
            gc.collect()
        assert seen == []
    finally:
        loop.close()


def test_aclose_and_a_second_close_from_any_loop_are_harmless(
    sandbox: Sandbox, backend: Backend
) -> None:
    """``aclose`` is ``close``; once closed, closing again, from the owner loop or another,
    raises nothing."""
    with owner_loop() as owner:
        client = connect(sandbox, backend)
        owner.run(use(client))
        asyncio.run(client.aclose())
        eventually(lambda: sandbox.open_connections == 0)
        asyncio.run(client.close())
        owner.run(client.aclose())
        owner.run(client.close())
        with pytest.raises(paysdk.ClientClosedError):
            owner.run(client.verify(COMPLETED_REFERENCE))


def test_closing_the_client_from_another_loop_closes_the_connections_of_its_copies(
    sandbox: Sandbox, backend: Backend
) -> None:
    """A ``with_options`` copy used in the owner loop shares the client's connections: closing
    the copy leaves them open (they are the client's), closing the client from another loop
    closes them in the owner loop, and the copy is closed with it."""
    with owner_loop() as owner:
        client = connect(sandbox, backend)
        copy = client.with_options(max_retries=0)
        owner.run(use(copy))
        opened = sandbox.open_connections
        assert opened > 0
        asyncio.run(copy.close())
        assert sandbox.open_connections == opened
        owner.run(use(copy))  # still open, and over the same connections
        assert sandbox.open_connections == opened
        asyncio.run(client.close())
        eventually(lambda: sandbox.open_connections == 0)
        for closed in (client, copy):
            with pytest.raises(paysdk.ClientClosedError):
                owner.run(closed.verify(COMPLETED_REFERENCE))


class SlowToRead:
    """A loop binding whose unset loop takes a while to read: each thread's first call reads
    it unset before the other sets it, unless reading and setting it is one step."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self.lock = threading.Lock()

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        loop = self._loop
        if loop is None:
            time.sleep(0.05)
        return loop

    @loop.setter
    def loop(self, loop: asyncio.AbstractEventLoop | None) -> None:
        self._loop = loop


def test_the_first_calls_of_two_loops_at_once_bind_the_client_to_one_of_them(
    sandbox: Sandbox, backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module-level client's first calls come from two threads' loops together: one loop
    gets the client, the other an ``EventLoopError``, never both the same connections."""

    async def first_call_elsewhere() -> None:  # imports what a first call does
        async with connect(sandbox, backend) as other:
            await other.verify(COMPLETED_REFERENCE)

    asyncio.run(first_call_elsewhere())
    monkeypatch.setattr(async_streams, "_Bound", SlowToRead)
    client = connect(sandbox, backend)
    together, both_done = threading.Barrier(2), threading.Barrier(2)
    outcomes: list[str] = []

    async def verify() -> None:
        together.wait(WAIT)
        try:
            outcome = (await client.verify(COMPLETED_REFERENCE)).reference
        except paysdk.EventLoopError as exc:
            outcome = type(exc).__name__
        outcomes.append(outcome)
        both_done.wait(WAIT)
        if outcome == COMPLETED_REFERENCE:  # closed in the loop its connections belong to
            await client.close()

    threads = [threading.Thread(target=asyncio.run, args=(verify(),)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert sorted(outcomes) == sorted([COMPLETED_REFERENCE, "EventLoopError"])
    eventually(lambda: sandbox.open_connections == 0)


def test_closing_while_the_owner_loop_ends_raises_nothing() -> None:
    """The loop the connections belong to ends (its ``asyncio.run`` returns, as a worker's does
    once its last call ended) while it carries out another loop's ``close()``: ending, it cancels
    that, and ``close()`` returns, the connections gone with their loop, rather than raise that
    loop's ``CancelledError`` in the loop closing (aiohttp's closing takes a few turns)."""
    binding = async_streams.LoopBinding()
    bound, closing, ending = threading.Event(), threading.Event(), threading.Event()

    async def worker() -> None:
        binding.check()  # its first call: the connections are this loop's
        bound.set()
        await asyncio.get_running_loop().run_in_executor(None, ending.wait, WAIT)

    async def close_in_turns() -> None:
        closing.set()
        await asyncio.sleep(WAIT)  # under way when its loop ends

    def end_the_worker_once_closing() -> None:
        if closing.wait(WAIT):
            ending.set()

    owner = threading.Thread(target=asyncio.run, args=(worker(),))
    owner.start()
    assert bound.wait(WAIT)
    ender = threading.Thread(target=end_the_worker_once_closing)
    ender.start()
    try:
        asyncio.run(binding.close(close_in_turns))
    finally:
        ending.set()
        ender.join(WAIT)
        owner.join(WAIT)
    assert closing.is_set()

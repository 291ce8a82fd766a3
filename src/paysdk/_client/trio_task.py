"""``TrioTask``: a call of ``verify_many`` under trio, loaded only when trio runs the caller."""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

import trio

from .._errors import ClientClosedError

__all__ = ["TrioTask"]

T = TypeVar("T")


class TrioTask(Generic[T]):
    """``work()`` run as ``asyncio.ensure_future`` runs it under asyncio: a task of its own that
    outlives the ``__anext__`` that started it (a nursery cannot: its scope would span the
    caller's ``async for``). A trio system task in the caller's context, in a cancel scope of its
    own that ``cancel`` cancels; it never raises (what ``work`` raised is kept and raised to
    whoever awaits ``result``), so trio's run is never crashed by it."""

    __slots__ = ("_done", "_error", "_finished", "_result", "_scope")

    def __init__(self, work: Callable[[], Awaitable[T]]) -> None:
        self._done = trio.Event()
        self._scope = trio.CancelScope()
        self._finished = False
        self._result: T | None = None
        self._error: BaseException | None = None
        trio.lowlevel.spawn_system_task(self._run, work, context=contextvars.copy_context())

    async def _run(self, work: Callable[[], Awaitable[T]]) -> None:
        try:
            with self._scope:
                self._result = await work()
                self._finished = True
        except BaseException as exc:  # handed to whoever awaits the result
            self._error = exc
        finally:
            self._done.set()

    def cancel(self) -> None:
        self._scope.cancel()

    async def wait(self) -> None:
        """Until ``work`` has ended, however it ended."""
        await self._done.wait()

    async def result(self) -> T:
        """What ``work`` returned, once it has; what it raised is raised."""
        await self._done.wait()
        if self._error is not None:
            raise self._error
        if not self._finished:  # cancelled by ``cancel``: its scope took the cancellation
            raise ClientClosedError("verify_many was closed while this call was under way")
        return self._result  # type: ignore[return-value]  # set with _finished

"""Carrying plans out: the loops that run a plan's steps with a sender, sync and async.

These are the only places a step is acted on. A call's plan is run to its result; an item plan
(``iter_payments``) is run lazily as the caller iterates, holding at most one open stream, which
is closed however the iteration ends.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from types import TracebackType
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from typing_extensions import Self

from .._core.steps import Answer, Emit, Failure, Opened, Read, Send, Sleep

if TYPE_CHECKING:
    from .._core.plans import ItemPlan, Plan
    from .._core.steps import StepResult
    from .async_streams import AsyncOpenStream

T = TypeVar("T")


class SyncOpenStream(Protocol):
    opened: Opened

    def read(self, step: Read) -> bytes | Failure: ...
    def close(self) -> None: ...


SyncSend = Callable[[Send], "Answer | Failure | SyncOpenStream"]
AsyncSend = Callable[[Send], Awaitable["Answer | Failure | AsyncOpenStream"]]


def run(plan: Plan[T], send: SyncSend, sleep: Callable[[float], None]) -> T:
    try:
        step = next(plan)
        while True:
            if isinstance(step, Sleep):
                sleep(step.seconds)
                step = plan.send(None)
            elif isinstance(step, Send):
                step = plan.send(send(step))  # type: ignore[arg-type]
            else:
                raise TypeError(f"a call's plan asked for {step!r}")
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def arun(plan: Plan[T], send: AsyncSend, sleep: Callable[[float], Awaitable[None]]) -> T:
    try:
        step = next(plan)
        while True:
            if isinstance(step, Sleep):
                await sleep(step.seconds)
                step = plan.send(None)
            elif isinstance(step, Send):
                step = plan.send(await send(step))  # type: ignore[arg-type]
            else:
                raise TypeError(f"a call's plan asked for {step!r}")
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def _items(
    plan: ItemPlan[T], send: SyncSend, sleep: Callable[[float], None]
) -> Generator[T, None, None]:
    stream: SyncOpenStream | None = None
    try:
        step = next(plan)
        while True:
            outcome: StepResult
            if isinstance(step, Emit):
                yield from step.items
                outcome = None
            elif isinstance(step, Read):
                assert stream is not None
                outcome = stream.read(step)
            elif isinstance(step, Sleep):
                sleep(step.seconds)
                outcome = None
            else:
                if stream is not None:
                    stream.close()
                    stream = None
                sent = send(step)
                if isinstance(sent, (Answer, Failure)):
                    outcome = sent
                else:
                    stream, outcome = sent, sent.opened
            step = plan.send(outcome)
    except StopIteration:
        return
    finally:
        plan.close()
        if stream is not None:
            stream.close()


async def _aitems(
    plan: ItemPlan[T], send: AsyncSend, sleep: Callable[[float], Awaitable[None]]
) -> AsyncGenerator[T, None]:
    stream: AsyncOpenStream | None = None
    try:
        step = next(plan)
        while True:
            outcome: StepResult
            if isinstance(step, Emit):
                for item in step.items:
                    yield item
                outcome = None
            elif isinstance(step, Read):
                assert stream is not None
                outcome = await stream.read(step)
            elif isinstance(step, Sleep):
                await sleep(step.seconds)
                outcome = None
            else:
                if stream is not None:
                    await stream.close()
                    stream = None
                sent = await send(step)
                if isinstance(sent, (Answer, Failure)):
                    outcome = sent
                else:
                    stream, outcome = sent, sent.opened
            step = plan.send(outcome)
    except StopIteration:
        return
    finally:
        plan.close()
        if stream is not None:
            await stream.close()


class ItemIterator(Generic[T]):
    """Items as they arrive; close it (or use ``with``) to stop early and free the connection."""

    def __init__(self, plan: ItemPlan[T], send: SyncSend, sleep: Callable[[float], None]) -> None:
        self._items = _items(plan, send, sleep)

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> T:
        return next(self._items)

    def close(self) -> None:
        self._items.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncItemIterator(Generic[T]):
    """The async twin of :class:`ItemIterator`: ``async for``, ``async with``, ``aclose()``."""

    def __init__(
        self, plan: ItemPlan[T], send: AsyncSend, sleep: Callable[[float], Awaitable[None]]
    ) -> None:
        self._items = _aitems(plan, send, sleep)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> T:
        return await self._items.__anext__()

    async def aclose(self) -> None:
        await self._items.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

"""Carrying plans out: ``drive`` runs a plan to its result with the driver of its kind (the
ledger's, reconcile's), ``run`` a call's, and ``AsyncItemIterator`` an item plan
(``iter_payments``) as the caller iterates, holding at most one open stream, closed however the
iteration ends. Each loop refuses a step outside its plan's vocabulary."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from typing_extensions import Self

from ..._core.closing import AsyncCloses
from ..._core.steps import Answer, Chunk, Emit, Failure, Read, Send, Sleep

if TYPE_CHECKING:
    from ..._core.plans import ItemPlan, Plan
    from ..._core.steps import StepResult
    from .. import _twins
    from .._twins import AsyncOpenStream, AsyncSendFunction, AsyncSleepFunction, WhenEnded

__all__ = ["AsyncItemIterator", "drive", "run"]

S = TypeVar("S")
T = TypeVar("T")


async def drive(
    plan: _twins.SteppedPlan[S, T],
    carry_out: _twins.AsyncStepFunction[S],
    vocabulary: tuple[type, ...],
    failures: type[BaseException] | tuple[type[BaseException], ...] = (),
) -> T:
    """Run ``plan`` to its result, sending back what ``carry_out`` made of each step, or throwing
    in what it raised of ``failures``. A step outside ``vocabulary`` is the plan's bug: refused
    here, never thrown in, so no plan can take it for a failure it handles."""
    try:
        step = next(plan)
        while True:
            if not isinstance(step, vocabulary):
                names = ", ".join(kind.__name__ for kind in vocabulary)
                raise TypeError(f"a plan asked for {step!r}, not one of its steps ({names})")
            try:
                reply = await carry_out(step)
            except failures as failed:
                step = plan.throw(failed)
            else:
                step = plan.send(reply)
    except StopIteration as done:
        return cast(T, done.value)


async def run(plan: Plan[T], send: AsyncSendFunction, sleep: AsyncSleepFunction) -> T:
    """Run a call's plan (it sends requests and sleeps before retries): ``drive``'s loop written
    out for a call's two kinds of step, since every call runs it and a function between it and
    the sender would cost each step one more frame."""
    try:
        step = next(plan)
        while True:
            if isinstance(step, Send):
                reply: Any = await send(step)  # a call's Send never opens a stream
            elif isinstance(step, Sleep):
                await sleep(step.seconds)
                reply = None
            else:
                raise TypeError(f"a call's plan asked for {step!r}")
            step = plan.send(reply)
    except StopIteration as done:
        return cast(T, done.value)


async def _items(
    plan: ItemPlan[T], send: AsyncSendFunction, sleep: AsyncSleepFunction, done: WhenEnded | None
) -> AsyncGenerator[T, None]:
    stream: AsyncOpenStream | None = None
    ended: BaseException | None = None
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
                if isinstance(outcome, bytes):  # its repr, in a debug page's locals, its size
                    outcome = Chunk(outcome)
            elif isinstance(step, Sleep):
                await sleep(step.seconds)
                outcome = None
            elif isinstance(step, Send):
                if stream is not None:
                    await stream.close()
                    stream = None
                sent = await send(step)
                if isinstance(sent, (Answer, Failure)):
                    outcome = sent
                else:
                    stream, outcome = sent, sent.opened
            else:
                raise TypeError(f"an item plan asked for {step!r}")
            step = plan.send(outcome)
    except StopIteration:
        return
    except BaseException as exc:  # GeneratorExit too: the caller stopped early
        ended = exc
        raise
    finally:
        plan.close()
        if stream is not None:
            await stream.close()
        if done is not None:
            done(ended)


class AsyncItemIterator(AsyncCloses, Generic[T]):
    """Items as they arrive; aclose it (or use ``async with``) to stop early and free the
    connection."""

    def __init__(
        self,
        plan: ItemPlan[T],
        send: AsyncSendFunction,
        sleep: AsyncSleepFunction,
        done: WhenEnded | None = None,
    ) -> None:
        """
        Args:
            plan: the item plan to carry out.
            send: sends a request step.
            sleep: waits before a retry.
            done: told how the iteration ended (``WhenEnded``), once it has begun.
        """
        self._items = _items(plan, send, sleep, done)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> T:
        return await anext(self._items)

    async def close(self) -> None:
        await self._items.aclose()

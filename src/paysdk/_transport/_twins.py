"""The types the sync and async plan runners differ by, kept out of ``_async/``: unasync renames
each ``Async`` name here to its plain twin beside it. Nothing here loads asyncio or anyio."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar

from .._core.steps import Answer, Failure, Opened, Read, Send

if TYPE_CHECKING:
    from .async_streams import AsyncOpenStream as AsyncOpenStream  # for type checkers only

__all__ = [
    "AsyncRawBody",
    "AsyncSendFunction",
    "AsyncSleepFunction",
    "AsyncStepFunction",
    "OpenStream",
    "RawBody",
    "SendFunction",
    "SleepFunction",
    "StepFunction",
    "SteppedPlan",
    "WhenEnded",
]


class OpenStream(Protocol):
    """A sync sender's response still being read: what ``iter_payments`` reads a list from."""

    opened: Opened

    def read(self, step: Read) -> bytes | Failure: ...
    def close(self) -> None: ...


SendFunction = Callable[[Send], "Answer | Failure | OpenStream"]
AsyncSendFunction = Callable[[Send], Awaitable["Answer | Failure | AsyncOpenStream"]]
SleepFunction = Callable[[float], None]
WhenEnded = Callable[["BaseException | None"], object]
"""Told how an iteration ended: ``None`` (it ran out), ``GeneratorExit`` (stopped early), or
what it raised."""
AsyncSleepFunction = Callable[[float], Awaitable[None]]
RawBody: TypeAlias = tuple["str | None", Iterator[bytes], Callable[[], None]]
"""A response's body as read raw: its Content-Encoding (``None`` for bytes already decoded),
its chunks as they arrive, and what closes it (releasing its connection)."""
AsyncRawBody: TypeAlias = tuple["str | None", AsyncIterator[bytes], Callable[[], Awaitable[None]]]
S = TypeVar("S")
T = TypeVar("T")
SteppedPlan: TypeAlias = Generator[S, Any, T]
"""A plan ``drive`` runs: it yields steps ``S``, is sent what came of each, and returns ``T``."""
StepFunction = Callable[[S], object]
AsyncStepFunction = Callable[[S], Awaitable[object]]

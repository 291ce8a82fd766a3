"""The loops that carry plans out (_transport/_async/drive.py and its generated _sync twin)."""

from __future__ import annotations

import inspect
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, TypeAlias

import pytest

from paysdk._core import Answer, Emit, Failure, Opened, Read, Send, Sleep, list_request
from paysdk._transport._async.drive import AsyncItemIterator
from paysdk._transport._async.drive import drive as adrive
from paysdk._transport._async.drive import run as arun
from paysdk._transport._sync.drive import ItemIterator, drive, run
from tests.conftest import make_config

if TYPE_CHECKING:
    from paysdk._core.plans import ItemPlan

pytestmark = pytest.mark.anyio

REQUEST = list_request(make_config(), stream=True)
BUSY = Answer(503, {}, b"")
OK = Answer(200, {}, b"{}")
DROPPED = Failure("closed", "the connection was reset")


class Stream:
    """An open stream serving ``chunks``; what is done with it is written to ``events``."""

    def __init__(self, name: int, chunks: list[bytes | Failure], events: list[str]) -> None:
        self.opened = Opened(200, {})
        self.name = name
        self.chunks = chunks
        self.events = events

    def read(self, step: Read) -> bytes | Failure:
        self.events.append(f"read {self.name}")
        return self.chunks.pop(0)

    def close(self) -> None:
        self.events.append(f"close {self.name}")


class AsyncStream:
    """:class:`Stream`, read and closed with ``await``."""

    def __init__(self, stream: Stream) -> None:
        self.opened = stream.opened
        self.stream = stream

    async def read(self, step: Read) -> bytes | Failure:
        return self.stream.read(step)

    async def close(self) -> None:
        self.stream.close()


Reported: TypeAlias = Answer | Failure | list[bytes | Failure]


class Wire:
    """A fake sender and sleeper: each Send gets the next of ``outcomes`` (a list of chunks is
    a stream left open), and every send, read, sleep and close is written to ``events``."""

    def __init__(self, *outcomes: Reported) -> None:
        self.outcomes = list(outcomes)
        self.sent: list[Send] = []
        self.events: list[str] = []

    def send(self, request: Send) -> Answer | Failure | Stream:
        self.sent.append(request)
        self.events.append(f"send {len(self.sent)}")
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, list):
            return Stream(len(self.sent), outcome, self.events)
        return outcome

    def sleep(self, seconds: float) -> None:
        self.events.append(f"sleep {seconds:g}")

    async def asend(self, request: Send) -> Answer | Failure | AsyncStream:
        sent = self.send(request)
        return AsyncStream(sent) if isinstance(sent, Stream) else sent

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)


# --- plans, written by hand ----------------------------------------------------------------------


def call_plan(received: list[object]) -> Generator[Any, Any, str]:
    """Sends, waits, sends again, and returns; ``received`` gets what each step was answered."""
    received.append((yield REQUEST))
    received.append((yield Sleep(1.5)))
    received.append((yield REQUEST))
    return "the result"


def asking_for(step: object) -> Generator[Any, Any, str]:
    yield step
    return "carried on"


def streamed(events: list[str]) -> ItemPlan[str]:
    """Opens a stream and emits the words of each chunk until the body ends."""
    try:
        assert isinstance((yield REQUEST), Opened)
        while True:
            chunk = yield Read(5.0)
            assert isinstance(chunk, bytes)
            if not chunk:
                return
            yield Emit(chunk.decode().split())
    finally:
        events.append("plan closed")


def refusing() -> ItemPlan[str]:
    """Opens a stream, reads a chunk, and raises as a plan does over a body it cannot parse."""
    assert isinstance((yield REQUEST), Opened)
    yield Read(5.0)
    raise ValueError("not a list")


def retried() -> ItemPlan[str]:
    """Its first stream drops before any item; it waits, opens a second and emits its chunk."""
    assert isinstance((yield REQUEST), Opened)
    assert (yield Read(5.0)) == DROPPED
    assert (yield Sleep(0.5)) is None
    assert isinstance((yield REQUEST), Opened)
    chunk = yield Read(5.0)
    assert isinstance(chunk, bytes)
    yield Emit([chunk.decode()])


def answered_whole() -> ItemPlan[str]:
    """Its Sends are answered with an error status, then a failure: no stream is opened."""
    assert (yield REQUEST) == BUSY
    yield Sleep(0.5)
    assert (yield REQUEST) == DROPPED
    yield Emit(["given up"])


STREAMED_EVENTS = ["send 1", "read 1", "read 1", "read 1", "plan closed", "close 1"]
RETRIED_EVENTS = ["send 1", "read 1", "sleep 0.5", "close 1", "send 2", "read 2", "close 2"]


# --- a call's plan, sync -------------------------------------------------------------------------


def test_run_carries_out_sends_and_sleeps_and_returns_the_plan_s_result() -> None:
    wire = Wire(BUSY, OK)
    received: list[object] = []
    assert run(call_plan(received), wire.send, wire.sleep) == "the result"
    assert wire.events == ["send 1", "sleep 1.5", "send 2"]
    assert wire.sent == [REQUEST, REQUEST]
    assert received == [BUSY, None, OK]


@pytest.mark.parametrize(
    "step", [Read(5.0), Emit(["x"]), "not a step"], ids=["read", "emit", "other"]
)
def test_run_refuses_a_step_a_call_s_plan_cannot_ask_for(step: object) -> None:
    wire = Wire()
    with pytest.raises(TypeError, match="a call's plan asked for"):
        run(asking_for(step), wire.send, wire.sleep)
    assert wire.events == []


# --- an item plan, sync --------------------------------------------------------------------------


def test_an_item_plan_is_driven_only_as_far_as_the_caller_iterates() -> None:
    wire = Wire([b"a b", b"c", b""])
    plan = streamed(wire.events)
    items = ItemIterator(plan, wire.send, wire.sleep)
    assert wire.events == []
    assert inspect.getgeneratorstate(plan) == "GEN_CREATED"
    assert next(items) == "a"
    assert wire.events == ["send 1", "read 1"]
    assert next(items) == "b"
    assert wire.events == ["send 1", "read 1"]  # from the chunk already read
    assert next(items) == "c"
    assert wire.events == ["send 1", "read 1", "read 1"]
    items.close()


def test_the_stream_is_closed_when_the_items_run_out() -> None:
    wire = Wire([b"a b", b"c", b""])
    assert list(ItemIterator(streamed(wire.events), wire.send, wire.sleep)) == ["a", "b", "c"]
    assert wire.events == STREAMED_EVENTS


@pytest.mark.parametrize("stop", ["close", "with"])
def test_the_stream_and_the_plan_are_closed_when_the_caller_stops_early(stop: str) -> None:
    wire = Wire([b"a b", b"c", b""])
    plan = streamed(wire.events)
    items = ItemIterator(plan, wire.send, wire.sleep)
    if stop == "close":
        assert next(items) == "a"
        items.close()
    else:
        with items:
            assert next(items) == "a"
    assert wire.events == ["send 1", "read 1", "plan closed", "close 1"]
    assert inspect.getgeneratorstate(plan) == "GEN_CLOSED"


def test_the_stream_is_closed_when_the_plan_raises() -> None:
    wire = Wire([b"{"])
    with pytest.raises(ValueError, match="not a list"):
        list(ItemIterator(refusing(), wire.send, wire.sleep))
    assert wire.events == ["send 1", "read 1", "close 1"]


def test_a_second_send_closes_the_open_stream_first() -> None:
    wire = Wire([DROPPED], [b"a"])
    assert list(ItemIterator(retried(), wire.send, wire.sleep)) == ["a"]
    assert wire.events == RETRIED_EVENTS


def test_an_answer_or_a_failure_is_handed_to_the_item_plan_as_it_is() -> None:
    wire = Wire(BUSY, DROPPED)
    assert list(ItemIterator(answered_whole(), wire.send, wire.sleep)) == ["given up"]
    assert wire.events == ["send 1", "sleep 0.5", "send 2"]


# --- the async twins -----------------------------------------------------------------------------


async def test_arun_carries_out_sends_and_sleeps_and_returns_the_plan_s_result() -> None:
    wire = Wire(BUSY, OK)
    received: list[object] = []
    assert await arun(call_plan(received), wire.asend, wire.asleep) == "the result"
    assert wire.events == ["send 1", "sleep 1.5", "send 2"]
    assert wire.sent == [REQUEST, REQUEST]
    assert received == [BUSY, None, OK]


@pytest.mark.parametrize(
    "step", [Read(5.0), Emit(["x"]), "not a step"], ids=["read", "emit", "other"]
)
async def test_arun_refuses_a_step_a_call_s_plan_cannot_ask_for(step: object) -> None:
    wire = Wire()
    with pytest.raises(TypeError, match="a call's plan asked for"):
        await arun(asking_for(step), wire.asend, wire.asleep)
    assert wire.events == []


async def test_an_async_item_plan_is_driven_only_as_far_as_the_caller_iterates() -> None:
    wire = Wire([b"a b", b"c", b""])
    plan = streamed(wire.events)
    items = AsyncItemIterator(plan, wire.asend, wire.asleep)
    assert wire.events == []
    assert inspect.getgeneratorstate(plan) == "GEN_CREATED"
    assert await anext(items) == "a"
    assert wire.events == ["send 1", "read 1"]
    assert await anext(items) == "b"
    assert wire.events == ["send 1", "read 1"]  # from the chunk already read
    assert await anext(items) == "c"
    assert wire.events == ["send 1", "read 1", "read 1"]
    await items.aclose()


async def test_the_async_stream_is_closed_when_the_items_run_out() -> None:
    wire = Wire([b"a b", b"c", b""])
    items = AsyncItemIterator(streamed(wire.events), wire.asend, wire.asleep)
    assert [item async for item in items] == ["a", "b", "c"]
    assert wire.events == STREAMED_EVENTS


@pytest.mark.parametrize("stop", ["aclose", "async with"])
async def test_the_async_stream_and_the_plan_are_closed_when_the_caller_stops_early(
    stop: str,
) -> None:
    wire = Wire([b"a b", b"c", b""])
    plan = streamed(wire.events)
    items = AsyncItemIterator(plan, wire.asend, wire.asleep)
    if stop == "aclose":
        assert await anext(items) == "a"
        await items.aclose()
    else:
        async with items:
            assert await anext(items) == "a"
    assert wire.events == ["send 1", "read 1", "plan closed", "close 1"]
    assert inspect.getgeneratorstate(plan) == "GEN_CLOSED"


async def test_the_async_stream_is_closed_when_the_plan_raises() -> None:
    wire = Wire([b"{"])
    with pytest.raises(ValueError, match="not a list"):
        [item async for item in AsyncItemIterator(refusing(), wire.asend, wire.asleep)]
    assert wire.events == ["send 1", "read 1", "close 1"]


async def test_a_second_async_send_closes_the_open_stream_first() -> None:
    wire = Wire([DROPPED], [b"a"])
    items = AsyncItemIterator(retried(), wire.asend, wire.asleep)
    assert [item async for item in items] == ["a"]
    assert wire.events == RETRIED_EVENTS


async def test_an_answer_or_a_failure_is_handed_to_the_async_item_plan_as_it_is() -> None:
    wire = Wire(BUSY, DROPPED)
    items = AsyncItemIterator(answered_whole(), wire.asend, wire.asleep)
    assert [item async for item in items] == ["given up"]
    assert wire.events == ["send 1", "sleep 0.5", "send 2"]


# --- drive: the one loop every plan that runs to a result goes through -----------------------


def deciding_plan(seen: list[object]) -> Generator[str, object, str]:
    """Yields three steps; a step's failure thrown in is noted, and the plan goes on."""
    for step in ("first", "fails", "last"):
        try:
            seen.append((yield step))
        except LookupError as failed:
            seen.append(f"thrown in: {failed!r}")
    return "done"


def carry_out(step: str) -> object:
    if step == "fails":
        raise KeyError(step)
    return step.upper()


async def acarry_out(step: str) -> object:
    return carry_out(step)


async def test_drive_sends_back_what_each_step_gave_and_throws_in_the_failures_named() -> None:
    seen: list[object] = []
    assert drive(deciding_plan(seen), carry_out, (str,), LookupError) == "done"
    seen_async: list[object] = []
    assert await adrive(deciding_plan(seen_async), acarry_out, (str,), (LookupError,)) == "done"
    assert seen == seen_async == ["FIRST", "thrown in: KeyError('fails')", "LAST"]


async def test_drive_raises_a_failure_not_named_without_throwing_it_in() -> None:
    seen: list[object] = []
    with pytest.raises(KeyError, match="fails"):
        drive(deciding_plan(seen), carry_out, (str,))
    assert seen == ["FIRST"]
    with pytest.raises(KeyError, match="fails"):
        await adrive(deciding_plan(seen := []), acarry_out, (str,), ValueError)
    assert seen == ["FIRST"]


def careless_plan(seen: list[object]) -> Generator[object, object, str]:
    """Yields a step outside its vocabulary inside a try that takes any failure for a step's."""
    try:
        seen.append((yield ("not", "a", "str")))
    except Exception as failed:
        seen.append(f"thrown in: {failed!r}")
    return "carried on"


def refusing_carry_out(step: object) -> object:
    """A shell's way with a step it does not know: a TypeError, which ``drive`` must not throw
    in, since a plan's bug is not a step's failure."""
    raise TypeError(f"the shell was asked for {step!r}")


async def arefusing_carry_out(step: object) -> object:
    return refusing_carry_out(step)


async def test_drive_refuses_a_step_outside_the_vocabulary_without_the_plan_seeing_it() -> None:
    seen: list[object] = []
    with pytest.raises(TypeError, match=r"a plan asked for \('not', 'a', 'str'\).*\bstr\b"):
        drive(careless_plan(seen), refusing_carry_out, (str,), Exception)
    assert seen == []
    with pytest.raises(TypeError, match=r"a plan asked for \('not', 'a', 'str'\).*\bstr\b"):
        await adrive(careless_plan(seen), arefusing_carry_out, (str,), Exception)
    assert seen == []

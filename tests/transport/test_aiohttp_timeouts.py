"""The bounds the aiohttp backend gives aiohttp for one attempt: no ``total`` (its own cancel
scope bounds the attempt by its budget), and a read timeout only where it can end the attempt
sooner than the budget.

A read timer is rescheduled with every chunk received, so one that the budget always beats is
pure cost on every call; and aiohttp would round a total of 5 s or more up to a whole second.
"""

from __future__ import annotations

import asyncio
import math
import sys
import time

import httpx
import pytest

import paysdk
from paysdk._core.config import SealedHeaders, Timeout
from paysdk._core.steps import Send
from paysdk._transport.aiohttp_sender import _client_timeout
from tests.conftest import SECRET, MakeClient
from tests.support.hostile import HostileServer, stall, trickle_body

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1:9/payment/order-1042"


def _send(timeout: Timeout, budget: float | None, *, stream: bool = False) -> Send:
    return Send("GET", URL, SealedHeaders({}), timeout, budget=budget, stream=stream)


def test_a_read_timeout_the_budget_always_beats_sets_no_read_timer() -> None:
    bounds = _client_timeout(_send(Timeout(5.0, 30.0, 30.0, 30.0), 30.0))
    assert (bounds.total, bounds.sock_connect, bounds.sock_read) == (None, 5.0, None)


def test_a_read_timeout_shorter_than_the_budget_is_kept() -> None:
    bounds = _client_timeout(_send(Timeout(5.0, 0.5, 30.0, 30.0), 30.0))
    assert (bounds.total, bounds.sock_connect, bounds.sock_read) == (None, 5.0, 0.5)


def test_a_budget_cut_by_the_deadline_below_the_read_timeout_is_what_bounds_the_read() -> None:
    bounds = _client_timeout(_send(Timeout(5.0, 30.0, 30.0, 30.0), 2.5))
    assert (bounds.total, bounds.sock_read) == (None, None)


def test_a_stream_keeps_its_read_timeout_and_no_total() -> None:
    bounds = _client_timeout(_send(Timeout(5.0, 30.0, 30.0, 30.0), 30.0, stream=True))
    assert (bounds.total, bounds.sock_read) == (None, 30.0)


def test_no_bound_is_rounded_up_to_a_whole_second() -> None:
    bounds = _client_timeout(_send(Timeout(5.0, 30.0, 30.0, 30.0), 7.25))
    assert bounds.ceil_threshold == math.inf


async def test_a_read_timeout_shorter_than_the_budget_still_ends_a_stalled_body(
    hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """Headers at once, then a byte of body every 3 s: the 0.3 s read timeout ends the attempt,
    not the 5 s budget."""
    hostile.script(trickle_body(interval=3.0))
    client = make_loopback_client(
        base_url=hostile.base_url, timeout=httpx.Timeout(5.0, read=0.3), max_retries=0
    )
    started = time.monotonic()
    with pytest.raises(paysdk.APITimeoutError):
        await client.verify("order-1042")
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize("backend", ["httpx", "aiohttp"])
async def test_the_callers_timeout_of_about_the_budget_is_never_taken_back(
    hostile: HostileServer, backend: str
) -> None:
    """A caller's ``asyncio.wait_for`` (or ``asyncio.timeout``) of about the attempt's budget,
    on a server that never answers: however the two fall, the caller's timeout is raised
    (``TimeoutError``). aiohttp's ``total`` timer, when it fired as the caller's cancellation
    came, took that back as its own, and the call went on to retry past the caller's timeout
    (about one time in three; the outcome, not the time, is checked: no timing fails it).
    Python 3.10's asyncio keeps one of two cancellations coming in one turn of the loop (a task
    has no count of them before 3.11), so there a caller's timeout of exactly the budget is
    still the attempt's now and then: the call goes on and ends as the attempt's timeout."""
    hostile.script(stall())
    client = paysdk.AsyncClient(
        secret_key=SECRET,
        base_url=hostile.base_url,
        http_backend="aiohttp" if backend == "aiohttp" else "httpx",
        timeout=0.1,
        max_retries=1,  # an attempt out of time first: the caller's timeout ends its wait
    )
    outcomes: list[str] = []
    async with client:
        for tries in range(30):
            try:
                await asyncio.wait_for(client.verify("order-1042"), 0.1 + (tries % 7) * 0.0005)
            except BaseException as exc:
                outcomes.append(type(exc).__name__)
            else:
                outcomes.append("answered")
    told_apart = sys.version_info >= (3, 11)
    assert set(outcomes) <= ({"TimeoutError"} if told_apart else TIMEOUTS), outcomes
    assert "TimeoutError" in outcomes, outcomes


TIMEOUTS = {"TimeoutError", "APITimeoutError"}
"""What a call under a caller's timeout of about its attempt's ends with where one of the two
cancellations can be lost (Python 3.10): either timeout, never an answer nor another error."""

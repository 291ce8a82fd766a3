"""verify_many: input order, one typed result per reference, and a bounded window."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
import respx

import paysdk
from tests.conftest import BASE_URL, NOT_FOUND_BODY, SECRET, verify_body

pytestmark = pytest.mark.anyio


def answer(request: httpx.Request) -> httpx.Response:
    reference = request.url.path.rsplit("/", 1)[-1]
    if reference.startswith("missing"):
        return httpx.Response(404, json=NOT_FOUND_BODY)
    return httpx.Response(200, json=verify_body(reference))


def test_sync_results_come_in_input_order_with_typed_errors(
    respx_mock: respx.MockRouter,
) -> None:
    respx_mock.get(url__startswith=f"{BASE_URL}/payment/").side_effect = answer
    references = ["order-1", "missing-2", "order-3", "", "order-5"]
    with paysdk.Client(secret_key=SECRET, base_url=BASE_URL) as client:
        results = list(client.verify_many(references, concurrency=3))
    assert [r.reference for r in results] == references
    assert [r.ok for r in results] == [True, False, True, False, True]
    assert isinstance(results[1].error, paysdk.PaymentNotFoundError)
    assert isinstance(results[3].error, paysdk.InvalidReferenceError)
    assert results[0].unwrap().reference == "order-1"
    with pytest.raises(paysdk.PaymentNotFoundError):
        results[1].unwrap()


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_async_results_come_in_input_order_with_typed_errors(
    respx_mock: respx.MockRouter, anyio_backend: str
) -> None:
    respx_mock.get(url__startswith=f"{BASE_URL}/payment/").side_effect = answer
    references = [f"order-{n}" if n % 4 else f"missing-{n}" for n in range(40)]
    async with paysdk.AsyncClient(secret_key=SECRET, base_url=BASE_URL) as client:
        results = [r async for r in client.verify_many(references, concurrency=7)]
    assert [r.reference for r in results] == references
    assert [r.ok for r in results] == [bool(n % 4) for n in range(40)]


def test_sync_never_has_more_than_concurrency_in_flight_nor_reads_ahead(
    respx_mock: respx.MockRouter,
) -> None:
    in_flight = 0
    most = 0
    lock = threading.Lock()
    pulled = 0

    def slow(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, most
        with lock:
            in_flight += 1
            most = max(most, in_flight)
        threading.Event().wait(0.005)
        with lock:
            in_flight -= 1
        return answer(request)

    def references() -> Iterator[str]:
        nonlocal pulled
        for n in itertools.count():
            pulled += 1
            yield f"order-{n}"

    respx_mock.get(url__startswith=f"{BASE_URL}/payment/").side_effect = slow
    with (
        paysdk.Client(secret_key=SECRET, base_url=BASE_URL) as client,
        client.verify_many(references(), concurrency=4) as results,
    ):
        firsts = [next(results) for _ in range(20)]
    assert [r.reference for r in firsts] == [f"order-{n}" for n in range(20)]
    assert most <= 4
    assert pulled <= 20 + 4  # an endless input is read only as far as the window
    assert pulled == 20 + 4 - 1  # exactly: the 20 taken, and 3 more in flight with the 20th


async def test_async_window_is_bounded_for_an_endless_input(
    respx_mock: respx.MockRouter,
) -> None:
    in_flight = 0
    most = 0

    async def slow(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.001)
        in_flight -= 1
        return answer(request)

    respx_mock.get(url__startswith=f"{BASE_URL}/payment/").side_effect = slow
    async with paysdk.AsyncClient(secret_key=SECRET, base_url=BASE_URL) as client:
        endless = (f"order-{n}" for n in itertools.count())
        async with client.verify_many(endless, concurrency=5) as results:
            got = []
            async for result in results:
                got.append(result)
                if len(got) == 30:
                    break
            assert len(asyncio.all_tasks()) <= 1 + 5
    assert [r.reference for r in got] == [f"order-{n}" for n in range(30)]
    assert most <= 5


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_leaving_the_async_window_early_cancels_the_calls_still_in_flight(
    respx_mock: respx.MockRouter, anyio_backend: str
) -> None:
    never = anyio.Event()
    waiting = 0
    cancelled = 0

    async def first_answers_the_rest_hang(request: httpx.Request) -> httpx.Response:
        nonlocal waiting, cancelled
        if not request.url.path.endswith("/order-0"):
            waiting += 1
            try:
                await never.wait()  # never set: only a cancel ends these calls
            except anyio.get_cancelled_exc_class():
                cancelled += 1
                raise
        return answer(request)

    respx_mock.get(url__startswith=f"{BASE_URL}/payment/").side_effect = first_answers_the_rest_hang
    async with paysdk.AsyncClient(secret_key=SECRET, base_url=BASE_URL) as client:
        with anyio.fail_after(5):
            async with client.verify_many([f"order-{n}" for n in range(5)]) as results:
                first = await results.__anext__()
        assert (waiting, cancelled) == (4, 4)
        assert (await client.verify("order-0")).reference == "order-0"  # the client still works
    assert first.reference == "order-0"


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_a_caller_cancelling_its_async_window_leaves_no_call_running(
    respx_mock: respx.MockRouter, anyio_backend: str
) -> None:
    """A caller's own cancel scope (``move_on_after`` of trio or anyio) around the loop: the
    window's calls end with it, and the client goes on verifying."""
    hung = anyio.Event()
    running = 0

    async def hang(request: httpx.Request) -> httpx.Response:
        nonlocal running
        running += 1
        try:
            await hung.wait()  # never set
        finally:
            running -= 1
        return answer(request)  # pragma: no cover - never reached

    route = respx_mock.get(url__startswith=f"{BASE_URL}/payment/")
    route.side_effect = hang
    async with paysdk.AsyncClient(secret_key=SECRET, base_url=BASE_URL) as client:
        with anyio.move_on_after(0.2) as scope:
            async with client.verify_many([f"order-{n}" for n in range(10)], concurrency=4) as got:
                async for _ in got:
                    pass  # pragma: no cover - no call answers
        assert scope.cancelled_caught
        assert running == 0
        route.side_effect = answer
        assert (await client.verify("order-1")).reference == "order-1"


@pytest.mark.parametrize("concurrency", [0, -1, 1001, 2.5, True])
def test_concurrency_is_checked_before_anything_is_sent(concurrency: Any) -> None:
    with (
        paysdk.Client(secret_key=SECRET, base_url=BASE_URL) as client,
        pytest.raises(paysdk.ConfigurationError, match="concurrency"),
    ):
        client.verify_many(["order-1"], concurrency=concurrency)


async def test_a_bad_reference_or_none_gets_its_own_result_and_the_run_goes_on(
    respx_mock: respx.MockRouter,
) -> None:
    respx_mock.get(url__startswith=f"{BASE_URL}/payment/").side_effect = answer
    references: list[Any] = [None, "order-1", "bad ref\n", 123, "order-2"]
    with paysdk.Client(secret_key=SECRET, base_url=BASE_URL) as client:
        sync_results = list(client.verify_many(references, concurrency=2))
    async with paysdk.AsyncClient(secret_key=SECRET, base_url=BASE_URL) as aclient:
        async_results = [r async for r in aclient.verify_many(references, concurrency=2)]
    for results in (sync_results, async_results):
        assert [r.reference for r in results] == references
        assert [r.ok for r in results] == [False, True, False, False, True]
        bad = [results[0], results[2], results[3]]
        assert all(isinstance(r.error, paysdk.InvalidReferenceError) for r in bad)


def test_closing_the_sync_window_cuts_the_waits_between_retries_short(
    respx_mock: respx.MockRouter,
) -> None:
    route = respx_mock.get(url__startswith=f"{BASE_URL}/payment/").respond(
        503, headers={"Retry-After": "30"}
    )
    got: list[paysdk.VerifyResult] = []
    with paysdk.Client(secret_key=SECRET, base_url=BASE_URL) as client:
        results = client.verify_many(["order-0", "order-1"], concurrency=2)
        waiting = threading.Thread(target=lambda: got.append(next(results)))
        waiting.start()
        deadline = time.monotonic() + 5
        while route.call_count < 2 and time.monotonic() < deadline:
            time.sleep(0.01)  # both calls answered 503, and now wait 30 s to retry
        started = time.monotonic()
        results.close()
        assert time.monotonic() - started < 2
        waiting.join(5)
    assert route.call_count == 2  # no retry was sent after the close
    (result,) = got
    assert isinstance(result.error, paysdk.ClientClosedError)


@pytest.mark.parametrize("references", ["order-1", b"order-1"], ids=["str", "bytes"])
def test_one_reference_passed_as_the_iterable_is_refused_naming_its_type(
    references: Any,
) -> None:
    """A reference is an iterable of characters: verifying each would be a mistake."""
    with (
        paysdk.Client(secret_key=SECRET, base_url=BASE_URL) as client,
        pytest.raises(TypeError, match=r"iterable of references, not (str|bytes) \(which"),
    ):
        client.verify_many(references)

"""paysdk.integrations.fastapi through FastAPI's test client, verifying against the sandbox."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest
from fastapi import FastAPI, Response
from fastapi.responses import JSONResponse
from fastapi.testclient import TestClient
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

import paysdk
from paysdk.integrations.fastapi import verified_callback
from paysdk.ledger import LedgerRow
from paysdk.sandbox import Fault, Sandbox
from tests.support.fulfilment_rule import (
    RAISED_IDS,
    REFERENCE,
    VIEW_ANSWERS,
    Deliver,
    ShopOfLinkedOrders,
    ViewAnswer,
    Views,
    answer_ids,
    check_a_raising_lookup_is_no_verdict,
    check_a_raising_view_is_released,
    check_the_rule,
    ledger_rows,
    raised_by_views,
)
from tests.support.merchant import (
    CALLBACK_CASES,
    CallbackCase,
    Order,
    Shop,
    assert_answered,
    assert_refusal_recorded,
    service_failures,
    verify_requests,
)

PATH = "/payments/callback"


def make_app(client: paysdk.Client | paysdk.AsyncClient, shop: Shop) -> FastAPI:
    """A merchant app whose callback endpoint fulfils through ``shop``."""

    async def record_failure(error: paysdk.PaymentFailedError) -> None:
        shop.record_failure(error)

    app = FastAPI()

    @app.get(PATH)
    @verified_callback(client, lookup=shop.lookup, on_failed=record_failure)
    async def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        shop.fulfil(payment)
        return {"status": "ok"}

    return app


def sandbox_client(sandbox: Sandbox, kind: str) -> paysdk.Client | paysdk.AsyncClient:
    cls = paysdk.AsyncClient if kind == "async" else paysdk.Client
    return cls(secret_key=sandbox.secret_key, base_url=sandbox.base_url, max_retries=0)


def close(browser: TestClient, *closing: object) -> None:
    """Close clients and ledgers, async ones on the test client's event loop."""
    assert browser.portal is not None  # inside the test client's with block
    for thing in closing:
        if isinstance(thing, (paysdk.AsyncClient, paysdk.AsyncLedger)):
            browser.portal.call(thing.close)
        elif isinstance(thing, (paysdk.Client, paysdk.Ledger)):
            thing.close()


@pytest.fixture(params=["async", "sync"])
def browser(
    request: pytest.FixtureRequest, callback_sandbox: Sandbox, shop: Shop
) -> Iterator[TestClient]:
    """A TestClient (one event loop for its life) for an app using an AsyncClient or a Client."""
    client = sandbox_client(callback_sandbox, request.param)
    with TestClient(make_app(client, shop)) as browser:
        yield browser
        close(browser, client)


@pytest.mark.parametrize("case", CALLBACK_CASES, ids=[case.id for case in CALLBACK_CASES])
def test_each_callback_is_answered_and_only_a_match_is_fulfilled(
    browser: TestClient, shop: Shop, callback_sandbox: Sandbox, case: CallbackCase
) -> None:
    response = browser.get(f"{PATH}?{case.query}")
    assert_answered(
        case,
        shop,
        callback_sandbox,
        status_code=response.status_code,
        body=response.json(),
    )


def test_a_repeated_callback_is_fulfilled_once(browser: TestClient, shop: Shop) -> None:
    answers = [browser.get(f"{PATH}?reference=order-1042") for _ in range(2)]
    assert [response.status_code for response in answers] == [200, 200]
    assert shop.fulfilled == ["order-1042"]
    assert shop.deliveries == 2


@service_failures(Fault(disconnect="before_response"))
def test_the_service_failing_asks_for_a_retry_after_the_wait_it_asked(
    browser: TestClient, shop: Shop, callback_sandbox: Sandbox, fault: Fault, wait: str | None
) -> None:
    callback_sandbox.inject(fault)
    response = browser.get(f"{PATH}?reference=order-1042")
    assert (response.status_code, response.json()) == (503, {"status": "retry_later"})
    assert response.headers.get("Retry-After") == wait
    assert shop.fulfilled == []


def test_fastapi_reads_the_endpoints_parameters_without_the_payment(shop: Shop) -> None:
    """What FastAPI inspects: the endpoint's other parameters, resolved to classes, and the
    request the helper needs; the return annotation stays the endpoint's."""
    client = paysdk.AsyncClient(secret_key="sk_test_x", base_url="http://127.0.0.1:1")

    async def endpoint(payment: paysdk.VerifiedPayment, shop_id: int) -> dict[str, str]:
        return {}

    signature = inspect.signature(verified_callback(client, lookup=shop.lookup)(endpoint))
    assert [(p.name, p.annotation) for p in signature.parameters.values()] == [
        ("shop_id", int),
        ("paysdk_request", Request),
    ]
    assert signature.return_annotation == dict[str, str]


def test_path_parameters_and_the_request_reach_a_sync_endpoint(
    callback_sandbox: Sandbox, shop: Shop
) -> None:
    client = sandbox_client(callback_sandbox, "sync")
    app = FastAPI()

    @app.get("/shops/{shop_id}/callback")
    @verified_callback(client=client, lookup=shop.lookup)
    def payment_callback(
        payment: paysdk.VerifiedPayment, shop_id: int, request: Request
    ) -> dict[str, object]:
        return {"shop": shop_id, "reference": payment.reference, "path": request.url.path}

    with TestClient(app) as browser:
        response = browser.get("/shops/7/callback?reference=order-1042")
    client.close()
    assert response.json() == {"shop": 7, "reference": "order-1042", "path": "/shops/7/callback"}


@pytest.mark.parametrize("kind", ["async", "sync"])
@pytest.mark.parametrize("on_failed_kind", ["def", "async def"])
@pytest.mark.parametrize("returned", ["response", "dict"])
def test_on_failed_may_answer_instead(
    callback_sandbox: Sandbox, shop: Shop, kind: str, on_failed_kind: str, returned: str
) -> None:
    """``on_failed`` may return the answer to send, as the endpoint may: a response, or a value
    FastAPI sends (a dict as JSON, 200)."""
    client = sandbox_client(callback_sandbox, kind)
    app = FastAPI()

    def answer_failure(error: paysdk.PaymentFailedError) -> object:
        shop.record_failure(error)
        if returned == "response":
            return JSONResponse({"noted": error.reference}, status_code=202)
        return {"noted": error.reference}

    async def answer_failure_async(error: paysdk.PaymentFailedError) -> object:
        return answer_failure(error)

    on_failed = answer_failure if on_failed_kind == "def" else answer_failure_async

    @app.get(PATH)
    @verified_callback(client, lookup=shop.lookup, on_failed=on_failed)
    async def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        raise AssertionError("a failed payment must not reach the endpoint")

    with TestClient(app) as browser:
        response = browser.get(f"{PATH}?reference=order-1043")
        close(browser, client)
    status = 202 if returned == "response" else 200
    assert (response.status_code, response.json()) == (status, {"noted": "order-1043"})
    assert shop.failed == ["order-1043"]


def _on_the_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize(
    ("reference", "answer"),
    [("order-1042", "ok"), ("order-1043", "failed")],
    ids=["paid", "failed"],
)
@pytest.mark.parametrize("kind", ["async", "sync"])
def test_a_plain_lookup_and_on_failed_run_off_the_event_loop(
    callback_sandbox: Sandbox, shop: Shop, reference: str, answer: str, kind: str
) -> None:
    """A plain ``lookup`` or ``on_failed`` (a database query, say) runs in the thread pool, as
    a ``def`` endpoint does: on the event loop, its wait would hold up every other request."""
    client = sandbox_client(callback_sandbox, kind)
    on_loop: dict[str, bool] = {}

    def lookup(reference: str) -> Order | None:
        on_loop["lookup"] = _on_the_event_loop()
        return shop.lookup(reference)

    def record_failure(error: paysdk.PaymentFailedError) -> None:
        on_loop["on_failed"] = _on_the_event_loop()
        shop.record_failure(error)

    app = FastAPI()

    @app.get(PATH)
    @verified_callback(client, lookup=lookup, on_failed=record_failure)
    async def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        shop.fulfil(payment)
        return {"status": "ok"}

    with TestClient(app) as browser:
        response = browser.get(f"{PATH}?reference={reference}")
        close(browser, client)
    assert (response.status_code, response.json()) == (200, {"status": answer})
    expected = {"lookup": False} if answer == "ok" else {"lookup": False, "on_failed": False}
    assert on_loop == expected


@pytest.mark.parametrize("state", ["closed", "unconfigured"])
def test_a_malformed_callback_is_a_400_whatever_the_async_clients_state(
    shop: Shop, monkeypatch: pytest.MonkeyPatch, state: str
) -> None:
    """A callback without a reference, to a closed AsyncClient or one made without a key and
    base URL, is answered 400; a well-formed one 500 ``error``."""
    monkeypatch.delenv("PAYSDK_SECRET_KEY", raising=False)
    monkeypatch.delenv("PAYSDK_BASE_URL", raising=False)
    if state == "closed":
        client = paysdk.AsyncClient(secret_key="sk_test_closed", base_url="http://127.0.0.1:9")
    else:
        client = paysdk.AsyncClient()
    with TestClient(make_app(client, shop)) as browser:
        if state == "closed":
            close(browser, client)
        malformed = browser.get(f"{PATH}?order=order-1042")
        well_formed = browser.get(f"{PATH}?reference=order-1042")
        close(browser, client)
    assert (malformed.status_code, malformed.json()) == (400, {"status": "invalid_callback"})
    assert (well_formed.status_code, well_formed.json()) == (500, {"status": "error"})


def test_a_client_of_another_kind_is_refused(shop: Shop) -> None:
    with pytest.raises(paysdk.ConfigurationError, match="AsyncClient"):
        verified_callback(object(), lookup=shop.lookup)  # type: ignore[arg-type]


def test_an_endpoint_without_a_payment_parameter_is_refused(shop: Shop) -> None:
    client = paysdk.AsyncClient(secret_key="sk_test_x", base_url="http://127.0.0.1:1")

    async def endpoint() -> None: ...

    with pytest.raises(paysdk.ConfigurationError, match="payment"):
        verified_callback(client, lookup=shop.lookup)(endpoint)


def test_a_plain_starlette_app_answers_the_same_body(callback_sandbox: Sandbox, shop: Shop) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Route

    client = sandbox_client(callback_sandbox, "async")

    @verified_callback(client, lookup=shop.lookup)
    async def payment_callback(payment: paysdk.VerifiedPayment) -> JSONResponse:
        shop.fulfil(payment)
        return JSONResponse({"status": "ok"})

    app = Starlette(routes=[Route(PATH, payment_callback)])
    with TestClient(app) as browser:
        answers = [browser.get(f"{PATH}?reference={ref}") for ref in ("order-1042", "order-2001")]
        close(browser, client)
    assert [(a.status_code, a.json()) for a in answers] == [
        (200, {"status": "ok"}),
        (409, {"status": "mismatch"}),
    ]


# --- with a fulfilment ledger ------------------------------------------------------------------


def test_a_plain_starlette_endpoint_gets_the_request_by_its_unannotated_name(
    callback_sandbox: Sandbox, shop: Shop
) -> None:
    """A plain Starlette endpoint names its request ``request`` with no annotation: it gets it
    after the payment, in a ``Mount`` with path parameters (no good callback a 500)."""
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route

    client = sandbox_client(callback_sandbox, "async")

    @verified_callback(client, lookup=shop.lookup)
    async def payment_callback(payment, request):  # type: ignore[no-untyped-def]
        shop.fulfil(payment)
        return JSONResponse({"status": "ok", "shop": request.path_params["shop"]})

    routes = [Route("/{shop}/callback", payment_callback, methods=["GET"])]
    app = Starlette(routes=[Mount("/payments", routes=routes)])
    with TestClient(app) as browser:
        answers = [
            browser.get(f"/payments/lagos/callback?reference={reference}")
            for reference in ("order-1042", "order-1043", "order-0000")
        ]
        close(browser, client)
    assert [(answer.status_code, answer.json()) for answer in answers] == [
        (200, {"status": "ok", "shop": "lagos"}),
        (200, {"status": "failed"}),
        (404, {"status": "unknown_order"}),
    ]
    assert shop.fulfilled == ["order-1042"]


def test_a_fastapi_endpoints_unannotated_request_is_the_request(
    callback_sandbox: Sandbox, shop: Shop
) -> None:
    """In FastAPI too: read as a query parameter, it would make every callback a 422."""
    client = sandbox_client(callback_sandbox, "async")
    app = FastAPI()

    @app.get(PATH)
    @verified_callback(client, lookup=shop.lookup)
    async def payment_callback(  # type: ignore[no-untyped-def]
        payment: paysdk.VerifiedPayment, request
    ) -> dict[str, str]:
        shop.fulfil(payment)
        return {"status": "ok", "path": request.url.path}

    with TestClient(app) as browser:
        response = browser.get(f"{PATH}?reference=order-1042")
        close(browser, client)
    assert (response.status_code, response.json()) == (200, {"status": "ok", "path": PATH})
    assert shop.fulfilled == ["order-1042"]


def test_the_decorator_on_a_method_is_refused_with_what_to_write(shop: Shop) -> None:
    """Written on a method, the helper would be called with the instance in the payment's place
    (every callback a 500): refused when applied, naming the bound method."""
    client = paysdk.AsyncClient(secret_key="sk_test_x", base_url="http://127.0.0.1:1")
    with pytest.raises(TypeError, match=r"is a method .*bound method"):

        class Handler:
            @verified_callback(client, lookup=shop.lookup)
            async def callback(self, payment: paysdk.VerifiedPayment) -> dict[str, str]:
                return {"status": "ok"}


def open_ledger(kind: str, path: Path, **options: Any) -> paysdk.Ledger | paysdk.AsyncLedger:
    return (paysdk.AsyncLedger if kind == "async" else paysdk.Ledger)(path, **options)


def ledger_app(
    client: paysdk.Client | paysdk.AsyncClient,
    shop: Shop,
    ledger: paysdk.Ledger | paysdk.AsyncLedger,
    views: Views,
) -> FastAPI:
    """An app whose endpoint answers what ``views`` says (a plain dict for a 200 ``ok``)."""
    app = FastAPI()

    @app.get(PATH)
    @verified_callback(client, lookup=shop.lookup, ledger=ledger)
    async def payment_callback(payment: paysdk.VerifiedPayment) -> object:
        answer = views.next()
        if answer is VIEW_ANSWERS[0]:
            return answer.body  # a value, not a response: a success
        return JSONResponse(answer.body, status_code=answer.status_code)

    return app


def delivery(browser: TestClient) -> Deliver:
    def deliver() -> tuple[int, bytes]:
        response = browser.get(f"{PATH}?reference={REFERENCE}")
        return response.status_code, response.content

    return deliver


def row_of(browser: TestClient, ledger: paysdk.Ledger | paysdk.AsyncLedger) -> LedgerRow | None:
    assert browser.portal is not None  # inside the test client's with block
    if isinstance(ledger, paysdk.AsyncLedger):
        return browser.portal.call(ledger.row, REFERENCE)
    return ledger.row(REFERENCE)


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_with_a_ledger_the_endpoint_runs_once_per_payment(
    callback_sandbox: Sandbox, shop: Shop, tmp_path: Path, kind: str
) -> None:
    shop.orders["order-1044"] = Order("order-1044", amount=85000, currency="GHS")
    client = sandbox_client(callback_sandbox, "async")
    ledger = open_ledger(kind, tmp_path / "ledger.db")
    app = FastAPI()

    @app.get(PATH)
    @verified_callback(client, lookup=shop.lookup, ledger=ledger)
    async def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        shop.fulfil(payment)
        return {"status": "ok"}

    with TestClient(app) as browser:
        answers = [browser.get(f"{PATH}?reference=order-1042") for _ in range(2)]
        with paysdk.Ledger(tmp_path / "ledger.db") as other_worker:
            during: list[Any] = []
            held = paysdk.VerifiedPayment(
                reference="order-1044", amount=85000, currency="GHS", success=True
            )
            other_worker.fulfil_once(
                held, lambda p: during.append(browser.get(f"{PATH}?reference=order-1044"))
            )
        close(browser, client, ledger)

    assert [(r.status_code, r.json()) for r in answers] == [
        (200, {"status": "ok"}),
        (200, {"status": "already_fulfilled"}),
    ]
    assert (shop.fulfilled, shop.deliveries) == (["order-1042"], 1)
    assert [(r.status_code, r.json()) for r in during] == [(503, {"status": "in_progress"})]


@pytest.mark.parametrize("endpoint", ["def", "async def, offloading to the pool"])
def test_an_endpoint_under_a_sync_ledger_never_waits_for_the_thread_the_ledger_holds(
    callback_sandbox: Sandbox, shop: Shop, tmp_path: Path, endpoint: str
) -> None:
    """The sync ledger holds a worker thread while its action, the endpoint, runs: taken from
    Starlette's pool, an endpoint needing a thread of that pool too (a ``def`` one, run there;
    an ``async def`` one's ``run_in_threadpool``) waited for one while holding one. With as many
    callbacks at once as the pool has threads (40, a burst under uvicorn), every thread was held
    by a waiting ledger and the app hung for good, every callback and every other ``def``
    endpoint of it. Here the pool has one thread, so one callback is that burst."""
    client = sandbox_client(callback_sandbox, "sync")
    ledger = paysdk.Ledger(tmp_path / "ledger.db")
    app = FastAPI()

    if endpoint == "def":

        @app.get(PATH)
        @verified_callback(client, lookup=shop.lookup, ledger=ledger)
        def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
            shop.fulfil(payment)
            return {"status": "ok"}

    else:

        @app.get(PATH)
        @verified_callback(client, lookup=shop.lookup, ledger=ledger)
        async def offloading_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
            await run_in_threadpool(shop.fulfil, payment)
            return {"status": "ok"}

    async def pool_of(threads: int) -> None:
        anyio.to_thread.current_default_thread_limiter().total_tokens = threads

    answers: list[Any] = []
    with TestClient(app) as browser:
        assert browser.portal is not None  # inside the test client's with block
        browser.portal.call(pool_of, 1)
        calling = threading.Thread(
            target=lambda: answers.append(browser.get(f"{PATH}?reference=order-1042"))
        )
        calling.start()
        calling.join(10)
        answered = not calling.is_alive()
        browser.portal.call(pool_of, 40)  # a callback waiting for a second thread gets it
        calling.join(10)
        close(browser, client, ledger)

    assert answered, "the callback waited for a second thread of Starlette's pool"
    assert [(r.status_code, r.json()) for r in answers] == [(200, {"status": "ok"})]
    assert (shop.fulfilled, shop.deliveries) == (["order-1042"], 1)


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_a_second_deployment_labelling_the_key_otherwise_never_ships_a_payment_again(
    callback_sandbox: Sandbox, shop: Shop, tmp_path: Path, kind: str
) -> None:
    """Two deployments of one shop, each its own client, ledger and event loop on one ledger
    file, their clients of one key labelled ``lagos-1`` and ``Lagos-1``: the second's callback
    for the payment the first shipped is answered 500 before its endpoint runs."""
    answers = []
    for label in ("lagos-1", "Lagos-1"):
        kinds = {"async": paysdk.AsyncClient, "sync": paysdk.Client}
        client = kinds[kind](
            secret_key=callback_sandbox.secret_key,
            base_url=callback_sandbox.base_url,
            account=label,
        )
        ledger = open_ledger(kind, tmp_path / "ledger.db")
        app = FastAPI()

        @app.get(PATH)
        @verified_callback(client, lookup=shop.lookup, ledger=ledger)
        async def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
            shop.fulfil(payment)
            return {"status": "ok"}

        with TestClient(app) as browser:
            answers.append(browser.get(f"{PATH}?reference=order-1042"))
            close(browser, client, ledger)

    assert [(r.status_code, r.json()) for r in answers] == [
        (200, {"status": "ok"}),
        (500, {"status": "error"}),
    ]
    assert (shop.fulfilled, shop.deliveries) == (["order-1042"], 1)
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        assert ledger.row("order-1042", account="Lagos-1") is None


@pytest.mark.parametrize("kind", ["async", "sync"])
@pytest.mark.parametrize("answer", VIEW_ANSWERS, ids=answer_ids())
def test_an_endpoints_answer_is_recorded_by_the_fulfilment_rule(
    callback_sandbox: Sandbox, shop: Shop, tmp_path: Path, answer: ViewAnswer, kind: str
) -> None:
    views = Views(answer)
    client = sandbox_client(callback_sandbox, kind)
    ledger = open_ledger(kind, tmp_path / "ledger.db")
    with TestClient(ledger_app(client, shop, ledger, views)) as browser:
        check_the_rule(answer, views, delivery(browser), lambda: row_of(browser, ledger))
        close(browser, client, ledger)


@pytest.mark.parametrize("kind", ["async", "sync"])
@pytest.mark.parametrize("answer", VIEW_ANSWERS, ids=answer_ids())
def test_a_status_set_on_the_injected_response_is_recorded_by_the_fulfilment_rule(
    callback_sandbox: Sandbox, shop: Shop, tmp_path: Path, answer: ViewAnswer, kind: str
) -> None:
    """FastAPI's way to answer a returned value with another status: ``response.status_code``
    on a ``Response`` parameter. That status is the answer, so it is what the ledger records
    (a 503 so set asks for the retry, which runs the endpoint again)."""
    views = Views(answer)
    client = sandbox_client(callback_sandbox, kind)
    ledger = open_ledger(kind, tmp_path / "ledger.db")
    app = FastAPI()

    @app.get(PATH)
    @verified_callback(client, lookup=shop.lookup, ledger=ledger)
    async def payment_callback(
        payment: paysdk.VerifiedPayment, response: Response
    ) -> dict[str, str]:
        answered = views.next()
        response.status_code = answered.status_code
        return answered.body

    with TestClient(app) as browser:
        check_the_rule(answer, views, delivery(browser), lambda: row_of(browser, ledger))
        close(browser, client, ledger)


@pytest.mark.parametrize("error", raised_by_views(), ids=RAISED_IDS)
@pytest.mark.parametrize("kind", ["async", "sync"])
def test_an_endpoint_that_raises_leaves_the_payment_unfulfilled(
    callback_sandbox: Sandbox, shop: Shop, tmp_path: Path, kind: str, error: Exception
) -> None:
    views = Views(error)
    client = sandbox_client(callback_sandbox, kind)
    ledger = open_ledger(kind, tmp_path / "ledger.db")
    app = ledger_app(client, shop, ledger, views)
    with TestClient(app, raise_server_exceptions=False) as browser:
        row = functools.partial(row_of, browser, ledger)
        check_a_raising_view_is_released(views, delivery(browser), row, tmp_path / "ledger.db")
        close(browser, client, ledger)


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_a_lookup_that_raises_a_paysdk_error_of_its_own_is_no_verdict(
    callback_sandbox: Sandbox, tmp_path: Path, kind: str
) -> None:
    shop = ShopOfLinkedOrders()
    client = sandbox_client(callback_sandbox, kind)
    ledger = open_ledger(kind, tmp_path / "ledger.db")
    app = ledger_app(client, shop, ledger, Views())
    with TestClient(app, raise_server_exceptions=False) as browser:
        check_a_raising_lookup_is_no_verdict(shop, delivery(browser), tmp_path / "ledger.db")
        close(browser, client, ledger)


@pytest.mark.parametrize("case", CALLBACK_CASES, ids=[case.id for case in CALLBACK_CASES])
def test_with_a_ledger_refusals_of_confirmed_payments_are_recorded(
    callback_sandbox: Sandbox, shop: Shop, tmp_path: Path, case: CallbackCase
) -> None:
    client = sandbox_client(callback_sandbox, "async")
    ledger = paysdk.AsyncLedger(tmp_path / "ledger.db")
    with TestClient(ledger_app(client, shop, ledger, Views())) as browser:
        browser.portal.call(ledger.create_table)
        response = browser.get(f"{PATH}?{case.query}")
        close(browser, client, ledger)
    assert (response.status_code, response.json()) == (case.status_code, {"status": case.status})
    rows = [row for row in ledger_rows(tmp_path / "ledger.db") if row[1] != "fulfilled"]
    assert_refusal_recorded(case, rows)


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_a_refusal_the_ledger_cannot_record_is_answered_as_usual(
    callback_sandbox: Sandbox,
    shop: Shop,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    kind: str,
) -> None:
    client = sandbox_client(callback_sandbox, kind)
    unreachable = open_ledger(kind, tmp_path / "no-such-directory" / "ledger.db", timeout=1)
    with (
        TestClient(ledger_app(client, shop, unreachable, Views())) as browser,
        caplog.at_level(logging.ERROR, logger="paysdk.callbacks"),
    ):
        failed = browser.get(f"{PATH}?reference=order-1043")
        close(browser, client, unreachable)
    assert (failed.status_code, json.loads(failed.content)) == (200, {"status": "failed"})
    assert any("could not record the refusal of 'order-1043'" in m for m in caplog.messages)


def test_a_ledger_of_another_kind_is_refused(callback_sandbox: Sandbox, shop: Shop) -> None:
    client = sandbox_client(callback_sandbox, "sync")
    with pytest.raises(paysdk.ConfigurationError, match="Ledger"):
        verified_callback(client, lookup=shop.lookup, ledger=object())  # type: ignore[arg-type]
    client.close()


# --- only GET is a callback ----------------------------------------------------------------------

NOT_GET = ["HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"]


def routed_app(routing: str, endpoint: Any) -> Any:
    """An app routing ``PATH`` to ``endpoint``: Starlette's default ``Route`` (GET and HEAD), or
    FastAPI's ``api_route`` for every method."""
    if routing == "starlette":
        from starlette.applications import Starlette
        from starlette.routing import Route

        return Starlette(routes=[Route(PATH, endpoint)])
    app = FastAPI()
    app.api_route(PATH, methods=["GET", *NOT_GET])(endpoint)
    return app


@pytest.mark.parametrize("routing", ["starlette", "fastapi"])
@pytest.mark.parametrize("kind", ["async", "sync"])
def test_only_get_verifies_runs_the_endpoint_and_fulfils(
    callback_sandbox: Sandbox, shop: Shop, tmp_path: Path, kind: str, routing: str
) -> None:
    """Starlette routes HEAD to a GET endpoint; a route may take other methods too. Each is
    answered 405 with ``Allow: GET`` before anything is verified, run or recorded."""
    client = sandbox_client(callback_sandbox, kind)
    ledger = open_ledger(kind, tmp_path / "ledger.db")
    runs: list[str] = []

    @verified_callback(client, lookup=shop.lookup, ledger=ledger)
    async def payment_callback(payment: paysdk.VerifiedPayment) -> JSONResponse:
        runs.append(payment.reference)
        return JSONResponse({"status": "ok"})

    methods = NOT_GET if routing == "fastapi" else ["HEAD"]  # Starlette's router refuses the rest
    with TestClient(routed_app(routing, payment_callback)) as browser:
        for method in methods:
            response = browser.request(method, f"{PATH}?reference={REFERENCE}")
            assert (response.status_code, response.headers["allow"]) == (405, "GET"), method
            if method != "HEAD":
                assert response.json() == {"status": "method_not_allowed"}
        assert (runs, row_of(browser, ledger)) == ([], None)
        assert verify_requests(callback_sandbox) == []
        fulfilled = browser.get(f"{PATH}?reference={REFERENCE}")
        row = row_of(browser, ledger)
        close(browser, client, ledger)
    assert (fulfilled.status_code, runs) == (200, [REFERENCE])
    assert row is not None and row.state == "fulfilled"


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_a_key_echoed_by_the_service_is_blotted_out_of_the_reasons_the_ledger_records(
    callback_sandbox: Sandbox, tmp_path: Path, kind: str
) -> None:
    """A key the service echoes into a currency, or that an endpoint's refusal quotes, reads
    ``<secret key>`` in the ledger's reasons, with an ``AsyncClient`` and a ledger of each kind."""
    key = callback_sandbox.secret_key
    callback_sandbox.add_payment("order-echo-currency", amount=700, currency=key)
    callback_sandbox.add_payment("order-echo-body", amount=700, currency="KES")
    references = ["order-echo-currency", "order-echo-body"]
    shop = Shop(*(Order(reference, 700, "KES") for reference in references))
    client = sandbox_client(callback_sandbox, "async")
    ledger = open_ledger(kind, tmp_path / "ledger.db")
    app = FastAPI()

    @app.get(PATH)
    @verified_callback(client, lookup=shop.lookup, ledger=ledger)
    async def payment_callback(payment: paysdk.VerifiedPayment) -> JSONResponse:
        return JSONResponse({"refused": "x" * 170 + key}, status_code=422)  # key at the cut

    with TestClient(app) as browser:
        statuses = [browser.get(f"{PATH}?reference={ref}").status_code for ref in references]
        close(browser, client, ledger)
    assert statuses == [409, 422]
    assert sorted(str(why) for _, _, why in ledger_rows(tmp_path / "ledger.db")) == [
        "paid, but not for this order: currency '<secret key>' instead of 'KES'",
        'the callback view answered 422: {"refused":"' + "x" * 170 + '<secret key>"}',
    ]

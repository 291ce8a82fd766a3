"""paysdk.integrations.django through Django's test clients, verifying against the sandbox."""

from __future__ import annotations

import inspect
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import django
import pytest
from django.conf import settings
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.template import engines
from django.template.response import TemplateResponse
from django.test import AsyncClient as DjangoAsyncClient
from django.test import Client as DjangoClient
from django.test import RequestFactory
from django.urls import path
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt

import paysdk
from paysdk.integrations.django import verified_callback
from paysdk.ledger import LedgerRow
from paysdk.sandbox import Fault, Sandbox
from paysdk.testing import CallbackSender, MockPaymentAPI
from tests.conftest import SECRET
from tests.support.django_site import configure, debug_page, serve
from tests.support.fulfilment_rule import (
    RAISED_IDS,
    REFERENCE,
    VIEW_ANSWERS,
    Deliver,
    ShopOfLinkedOrders,
    ViewAnswer,
    Views,
    answer_ids,
    assert_recorded,
    assert_state_after_first,
    check_a_raising_lookup_is_no_verdict,
    check_a_raising_view_is_released,
    check_the_rule,
    ledger_rows,
    raised_by_views,
)
from tests.support.hostile import Connection, HostileServer, Request, respond
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

configure()

PATH = "/payments/callback"


@pytest.fixture
def browser(client: paysdk.Client, shop: Shop) -> DjangoClient:
    """Django's test client for a sync callback view that fulfils through ``shop``."""

    def record_failure(request: HttpRequest, error: paysdk.PaymentFailedError) -> None:
        shop.record_failure(error)

    @verified_callback(client=client, lookup=shop.lookup, on_failed=record_failure)
    def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> JsonResponse:
        shop.fulfil(payment)
        return JsonResponse({"status": "ok"})

    serve(path(PATH.lstrip("/"), payment_callback))
    return DjangoClient()


@pytest.mark.parametrize("case", CALLBACK_CASES, ids=[case.id for case in CALLBACK_CASES])
def test_each_callback_is_answered_and_only_a_match_is_fulfilled(
    browser: DjangoClient, shop: Shop, callback_sandbox: Sandbox, case: CallbackCase
) -> None:
    response = browser.get(f"{PATH}?{case.query}")
    body = json.loads(response.content)
    assert_answered(case, shop, callback_sandbox, status_code=response.status_code, body=body)


def test_a_repeated_callback_is_fulfilled_once(browser: DjangoClient, shop: Shop) -> None:
    answers = [browser.get(f"{PATH}?reference=order-1042") for _ in range(2)]
    assert [response.status_code for response in answers] == [200, 200]
    assert shop.fulfilled == ["order-1042"]
    assert shop.deliveries == 2


@service_failures(Fault.server_error(502))
def test_the_service_failing_asks_for_a_retry_after_the_wait_it_asked(
    browser: DjangoClient, shop: Shop, callback_sandbox: Sandbox, fault: Fault, wait: str | None
) -> None:
    callback_sandbox.inject(fault)
    response = browser.get(f"{PATH}?reference=order-1042")
    assert (response.status_code, json.loads(response.content)) == (503, {"status": "retry_later"})
    assert response.headers.get("Retry-After") == wait
    assert shop.fulfilled == []


def test_url_kwargs_reach_the_view_and_on_failed_may_answer(
    client: paysdk.Client, shop: Shop
) -> None:
    def answer_failure(request: HttpRequest, error: paysdk.PaymentFailedError) -> HttpResponse:
        return HttpResponse(f"failed {error.reference}", status=202)

    @verified_callback(client=client, lookup=shop.lookup, on_failed=answer_failure)
    def payment_callback(
        request: HttpRequest, payment: paysdk.VerifiedPayment, shop_id: int
    ) -> HttpResponseBase:
        return JsonResponse({"shop": shop_id, "reference": payment.reference})

    serve(path("shops/<int:shop_id>/callback", payment_callback))
    browser = DjangoClient()
    good = browser.get("/shops/7/callback?reference=order-1042")
    assert json.loads(good.content) == {"shop": 7, "reference": "order-1042"}
    failed = browser.get("/shops/7/callback?reference=order-1043")
    assert (failed.status_code, failed.content) == (202, b"failed order-1043")


def test_a_class_based_views_method_takes_the_decorator_through_method_decorator(
    client: paysdk.Client, shop: Shop
) -> None:
    """``method_decorator`` hands the helper the method bound already (stacked with
    ``csrf_exempt`` here): the payment reaches ``get`` after the request, the URL's kwargs after
    it."""

    class PaymentCallback(View):
        @method_decorator([csrf_exempt, verified_callback(client, lookup=shop.lookup)])
        def get(
            self, request: HttpRequest, payment: paysdk.VerifiedPayment, shop_name: str
        ) -> HttpResponse:
            shop.fulfil(payment)
            return JsonResponse({"status": "ok", "shop": shop_name})

    serve(path("shops/<str:shop_name>/callback", PaymentCallback.as_view()))
    browser = DjangoClient()
    answers = [
        browser.get(f"/shops/lagos/callback?reference={reference}")
        for reference in ("order-1042", "order-1043", "order-0000")
    ]
    assert [(answer.status_code, json.loads(answer.content)) for answer in answers] == [
        (200, {"status": "ok", "shop": "lagos"}),
        (200, {"status": "failed"}),
        (404, {"status": "unknown_order"}),
    ]
    assert shop.fulfilled == ["order-1042"]


def test_the_decorator_on_a_class_based_views_method_is_refused_with_what_to_write(
    client: paysdk.Client, shop: Shop
) -> None:
    """Written on ``get`` itself, the helper would be called with the view in the request's
    place (every callback a 500): refused when applied, naming ``method_decorator``."""
    with pytest.raises(TypeError, match=r"is a method .*@method_decorator\(verified_callback"):

        class PaymentCallback(View):
            @verified_callback(client, lookup=shop.lookup)  # type: ignore[arg-type, type-var]
            def get(self, request: HttpRequest, payment: paysdk.VerifiedPayment) -> HttpResponse:
                return JsonResponse({"status": "ok"})


def test_parse_callback_reads_a_django_request() -> None:
    request = RequestFactory().get(PATH, {"reference": "order/1042 é"})
    assert paysdk.parse_callback(request) == "order/1042 é"
    repeated = RequestFactory().get(f"{PATH}?reference=a&reference=a")
    with pytest.raises(paysdk.InvalidCallbackError, match="2 times"):
        paysdk.parse_callback(repeated)


def test_mixing_sync_and_async_is_refused(client: paysdk.Client, shop: Shop) -> None:
    async def async_view(request: HttpRequest, payment: paysdk.VerifiedPayment) -> HttpResponse:
        return HttpResponse()

    with pytest.raises(paysdk.ConfigurationError, match="AsyncClient"):
        verified_callback(client, lookup=shop.lookup)(async_view)


# --- async views ------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["async def", "def"])
@pytest.mark.parametrize("case", CALLBACK_CASES, ids=[case.id for case in CALLBACK_CASES])
async def test_an_async_view_with_an_async_client(
    async_client: paysdk.AsyncClient,
    shop: Shop,
    callback_sandbox: Sandbox,
    case: CallbackCase,
    kind: str,
) -> None:
    """Its ``lookup`` and ``on_failed`` ``async def`` or plain: a plain one runs where Django's
    ORM may be used, as a sync view does (called in the event loop, Django refused its every
    query, ``SynchronousOnlyOperation``, so every callback was answered 500)."""

    def query() -> None:
        with connection.cursor() as cursor:  # what the ORM does: refused in the event loop
            cursor.execute("SELECT 1")

    def plain_lookup(reference: str) -> object:
        query()
        return shop.lookup(reference)

    def plain_record_failure(request: HttpRequest, error: paysdk.PaymentFailedError) -> None:
        query()
        shop.record_failure(error)

    async def lookup(reference: str) -> object:
        return shop.lookup(reference)

    async def record_failure(request: HttpRequest, error: paysdk.PaymentFailedError) -> None:
        shop.record_failure(error)

    plain = kind == "def"

    @verified_callback(
        client=async_client,
        lookup=plain_lookup if plain else lookup,
        on_failed=plain_record_failure if plain else record_failure,
    )
    async def payment_callback(
        request: HttpRequest, payment: paysdk.VerifiedPayment
    ) -> HttpResponseBase:
        shop.fulfil(payment)
        return JsonResponse({"status": "ok"})

    serve(path(PATH.lstrip("/"), payment_callback))
    browser = DjangoAsyncClient(raise_request_exception=False)
    response = await browser.get(f"{PATH}?{case.query}", headers={"Accept": "text/plain"})
    assert response.status_code == case.status_code, response.content.decode()[:300]
    assert json.loads(response.content) == {"status": case.status}
    assert tuple(shop.fulfilled) == case.fulfilled
    assert tuple(shop.failed) == case.failed
    assert bool(verify_requests(callback_sandbox)) == case.asks_service


@pytest.mark.anyio
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            "get",
            marks=pytest.mark.skipif(
                django.VERSION < (5, 2),
                reason="Django before 5.2 makes an async method sync under method_decorator, so "
                "it never awaits get: the docs say to decorate dispatch there",
            ),
        ),
        "dispatch",
    ],
)
async def test_an_async_class_based_view_takes_the_decorator_through_method_decorator(
    async_client: paysdk.AsyncClient, shop: Shop, tmp_path: Path, name: str
) -> None:
    """With an ``AsyncClient``, ``method_decorator`` on an async class-based view: on ``get``
    (an ``async def``) or on ``dispatch`` (sync, returning the handler's coroutine), and on the
    stand-in function it decorates when the class is defined; the payment reaches ``get``."""
    async with paysdk.AsyncLedger(tmp_path / "ledger.db") as ledger:
        decorate = method_decorator(
            verified_callback(async_client, lookup=shop.lookup, ledger=ledger),  # type: ignore[arg-type]
            name=name,
        )

        @decorate
        class PaymentCallback(View):
            async def get(
                self, request: HttpRequest, payment: paysdk.VerifiedPayment, shop_name: str
            ) -> HttpResponse:
                shop.fulfil(payment)
                return JsonResponse({"status": "ok", "shop": shop_name})

        serve(path("shops/<str:shop_name>/callback", PaymentCallback.as_view()))
        browser = DjangoAsyncClient()
        answers = [
            await browser.get(f"/shops/lagos/callback?reference={reference}")
            for reference in ("order-1042", "order-1042", "order-1043", "order-0000")
        ]
    assert [(answer.status_code, json.loads(answer.content)) for answer in answers] == [
        (200, {"status": "ok", "shop": "lagos"}),
        (200, {"status": "already_fulfilled"}),
        (200, {"status": "failed"}),
        (404, {"status": "unknown_order"}),
    ]
    assert (shop.fulfilled, shop.deliveries) == (["order-1042"], 1)


def test_an_answer_of_on_failed_django_cannot_send_is_refused(
    client: paysdk.Client, shop: Shop, tmp_path: Path
) -> None:
    """Django sends only a response: a dict from ``on_failed`` (Flask's idiom) is refused with
    a ``ConfigurationError`` naming it, Django's 500, nothing recorded, rather than dropped for
    the helper's own answer; the service calls again once ``on_failed`` is fixed."""

    def answer_failure(request: HttpRequest, error: paysdk.PaymentFailedError) -> object:
        return {"noted": error.reference}

    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:

        @verified_callback(
            client=client, lookup=shop.lookup, ledger=ledger, on_failed=answer_failure
        )
        def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> HttpResponse:
            raise AssertionError("a failed payment must not reach the view")

        serve(path(PATH.lstrip("/"), payment_callback))
        browser = DjangoClient(raise_request_exception=False)
        page = browser.get(f"{PATH}?reference=order-1043", HTTP_ACCEPT="text/html")
        row = ledger.row("order-1043")
    assert page.status_code == 500
    assert "on_failed returned a dict, which Django cannot send" in page.content.decode()
    assert row is None


@pytest.mark.anyio
@pytest.mark.parametrize("answer", ["dict", "response"])
async def test_what_an_async_views_on_failed_answers(
    async_client: paysdk.AsyncClient, shop: Shop, answer: str
) -> None:
    """An async view's ``on_failed`` (awaited) answers as a sync one's: its response is sent,
    anything else it cannot send is refused."""

    async def answer_failure(request: HttpRequest, error: paysdk.PaymentFailedError) -> object:
        noted = {"noted": error.reference}
        return noted if answer == "dict" else JsonResponse(noted, status=202)

    @verified_callback(client=async_client, lookup=shop.lookup, on_failed=answer_failure)
    async def payment_callback(
        request: HttpRequest, payment: paysdk.VerifiedPayment
    ) -> HttpResponseBase:
        raise AssertionError("a failed payment must not reach the view")

    serve(path(PATH.lstrip("/"), payment_callback))
    browser = DjangoAsyncClient(raise_request_exception=False)
    page = await browser.get(f"{PATH}?reference=order-1043", HTTP_ACCEPT="text/html")
    if answer == "dict":
        assert page.status_code == 500
        assert "on_failed returned a dict, which Django cannot send" in page.content.decode()
    else:
        assert (page.status_code, json.loads(page.content)) == (202, {"noted": "order-1043"})


# --- the testing kit's fixtures: a Django app's callback without a server -------------------


def test_the_kit_sends_a_callback_through_django_wsgi(
    paysdk_api: MockPaymentAPI, paysdk_client: paysdk.Client, paysdk_callback: CallbackSender
) -> None:
    orders = {"order-1": {"amount": 5000, "currency": "NGN"}}

    @verified_callback(client=paysdk_client, lookup=orders.get)
    def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> JsonResponse:
        return JsonResponse({"status": "ok", "reference": payment.reference})

    serve(path(PATH.lstrip("/"), payment_callback))
    paysdk_api.add_payment("order-1", amount=5000, currency="NGN")
    response = paysdk_callback.send(WSGIHandler(), PATH, "order-1")
    assert response.json() == {"status": "ok", "reference": "order-1"}
    paysdk_api.add_payment("order-1", amount=1, currency="NGN")
    assert paysdk_callback.send(WSGIHandler(), PATH, "order-1").status_code == 409


def test_the_kit_sends_a_callback_through_django_asgi(
    paysdk_api: MockPaymentAPI, paysdk_callback: CallbackSender
) -> None:
    orders = {"order-1": {"amount": 5000, "currency": "NGN"}}

    @verified_callback(client=paysdk_api.async_client(), lookup=orders.get)
    async def payment_callback(
        request: HttpRequest, payment: paysdk.VerifiedPayment
    ) -> JsonResponse:
        return JsonResponse({"status": "ok"})

    serve(path(PATH.lstrip("/"), payment_callback))
    paysdk_api.add_payment("order-1", amount=5000, currency="NGN", success=False)
    response = paysdk_callback.send(ASGIHandler(), PATH, "order-1")
    assert (response.status_code, response.json()) == (200, {"status": "failed"})
    assert paysdk_api.verified_references() == ["order-1"]


@pytest.mark.parametrize("handler", [WSGIHandler, ASGIHandler], ids=["wsgi", "asgi"])
def test_the_kit_raises_what_a_django_view_raised(
    handler: type[WSGIHandler | ASGIHandler], paysdk_callback: CallbackSender
) -> None:
    """Django answers a view's exception with its 500 (its debug page, under ``DEBUG = True``);
    the test fails with the exception, as with Django's test client."""

    def payment_callback(request: HttpRequest) -> HttpResponse:
        raise LookupError("no such order table")

    serve(path(PATH.lstrip("/"), payment_callback))
    with pytest.raises(LookupError, match="no such order table"):
        paysdk_callback.send(handler(), PATH, "order-1")


# --- with a fulfilment ledger ------------------------------------------------------------------


def test_with_a_ledger_the_view_runs_once_per_payment(
    client: paysdk.Client, shop: Shop, tmp_path: Path
) -> None:
    shop.orders["order-1044"] = Order("order-1044", amount=85000, currency="GHS")
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:

        @verified_callback(client=client, lookup=shop.lookup, ledger=ledger)
        def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> JsonResponse:
            shop.fulfil(payment)
            return JsonResponse({"status": "ok"})

        serve(path(PATH.lstrip("/"), payment_callback))
        browser = DjangoClient()
        answers = [browser.get(f"{PATH}?reference=order-1042") for _ in range(2)]
        during: list[Any] = []  # another worker holds order-1044 while its callback comes
        ledger.fulfil_once(
            client.verify("order-1044"),
            lambda p: during.append(browser.get(f"{PATH}?reference=order-1044")),
        )

    assert [(r.status_code, json.loads(r.content)) for r in answers] == [
        (200, {"status": "ok"}),
        (200, {"status": "already_fulfilled"}),
    ]
    assert (shop.fulfilled, shop.deliveries) == (["order-1042"], 1)
    assert [(r.status_code, json.loads(r.content)) for r in during] == [
        (503, {"status": "in_progress"})
    ]


def test_a_second_deployment_labelling_the_key_otherwise_never_ships_a_payment_again(
    client: paysdk.Client, shop: Shop, tmp_path: Path
) -> None:
    """Two deployments of one shop share the ledger, their clients of one key labelled
    ``lagos-1`` and ``Lagos-1``: the second's callback for the payment the first shipped is
    answered 500 before its view runs, not shipped again."""
    answers = []
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        for label in ("lagos-1", "Lagos-1"):

            @verified_callback(
                client.with_options(account=label), lookup=shop.lookup, ledger=ledger
            )
            def payment_callback(
                request: HttpRequest, payment: paysdk.VerifiedPayment
            ) -> JsonResponse:
                shop.fulfil(payment)
                return JsonResponse({"status": "ok"})

            serve(path(PATH.lstrip("/"), payment_callback))
            answers.append(DjangoClient().get(f"{PATH}?reference=order-1042"))
        assert ledger.row("order-1042", account="Lagos-1") is None

    assert [(r.status_code, json.loads(r.content)) for r in answers] == [
        (200, {"status": "ok"}),
        (500, {"status": "error"}),
    ]
    assert (shop.fulfilled, shop.deliveries) == (["order-1042"], 1)


@pytest.mark.anyio
async def test_with_an_async_ledger_an_async_view_runs_once(
    async_client: paysdk.AsyncClient, shop: Shop, tmp_path: Path
) -> None:
    async with paysdk.AsyncLedger(tmp_path / "ledger.db") as ledger:

        @verified_callback(client=async_client, lookup=shop.lookup, ledger=ledger)
        async def payment_callback(
            request: HttpRequest, payment: paysdk.VerifiedPayment
        ) -> HttpResponseBase:
            shop.fulfil(payment)
            return JsonResponse({"status": "ok"})

        serve(path(PATH.lstrip("/"), payment_callback))
        answers = [await DjangoAsyncClient().get(f"{PATH}?reference=order-1042") for _ in range(2)]

    assert [json.loads(r.content) for r in answers] == [
        {"status": "ok"},
        {"status": "already_fulfilled"},
    ]
    assert shop.deliveries == 1


def test_a_ledger_of_the_other_kind_is_refused(
    client: paysdk.Client, shop: Shop, tmp_path: Path
) -> None:
    ledger = paysdk.AsyncLedger(tmp_path / "ledger.db")
    with pytest.raises(paysdk.ConfigurationError, match="AsyncLedger"):
        verified_callback(client, lookup=shop.lookup, ledger=ledger)  # type: ignore[call-overload]


# --- the fulfilment rule: only a success is recorded as fulfilled ------------------------------


def serve_ledger_view(
    client: paysdk.Client, shop: Shop, ledger: paysdk.Ledger, views: Views
) -> DjangoClient:
    """A sync view answering what ``views`` says, through ``ledger``; its test client."""

    @verified_callback(client, lookup=shop.lookup, ledger=ledger)
    def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> HttpResponse:
        answer = views.next()
        return HttpResponse(answer.content, status=answer.status_code)

    serve(path(PATH.lstrip("/"), payment_callback))
    return DjangoClient(raise_request_exception=False)


def serve_async_ledger_view(
    client: paysdk.AsyncClient, shop: Shop, ledger: paysdk.AsyncLedger, views: Views
) -> DjangoAsyncClient:
    """An async view answering what ``views`` says, through ``ledger``; its test client."""

    @verified_callback(client, lookup=shop.lookup, ledger=ledger)
    async def payment_callback(
        request: HttpRequest, payment: paysdk.VerifiedPayment
    ) -> HttpResponseBase:
        answer = views.next()
        return HttpResponse(answer.content, status=answer.status_code)

    serve(path(PATH.lstrip("/"), payment_callback))
    return DjangoAsyncClient(raise_request_exception=False)


async def deliver_twice(
    client: paysdk.AsyncClient, shop: Shop, views: Views, path: Path
) -> tuple[tuple[int, bytes], LedgerRow | None, tuple[int, bytes], LedgerRow | None]:
    """An async view answering what ``views`` says, through a ledger at ``path``, and the
    callback delivered to it twice: each answer (status, body), and the ledger's row after it."""
    async with paysdk.AsyncLedger(path) as ledger:
        browser = serve_async_ledger_view(client, shop, ledger, views)
        first = await browser.get(f"{PATH}?reference={REFERENCE}")
        after_first = await ledger.row(REFERENCE)
        retry = await browser.get(f"{PATH}?reference={REFERENCE}")
        after_retry = await ledger.row(REFERENCE)
    answers = (first.status_code, first.content), (retry.status_code, retry.content)
    return answers[0], after_first, answers[1], after_retry


def delivery(browser: DjangoClient) -> Deliver:
    def deliver() -> tuple[int, bytes]:
        response = browser.get(f"{PATH}?reference={REFERENCE}")
        return response.status_code, response.content

    return deliver


@pytest.mark.parametrize("answer", VIEW_ANSWERS, ids=answer_ids())
def test_a_views_answer_is_recorded_by_the_fulfilment_rule(
    client: paysdk.Client, shop: Shop, tmp_path: Path, answer: ViewAnswer
) -> None:
    views = Views(answer)
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        deliver = delivery(serve_ledger_view(client, shop, ledger, views))
        check_the_rule(answer, views, deliver, lambda: ledger.row(REFERENCE))


@pytest.mark.anyio
@pytest.mark.parametrize("answer", VIEW_ANSWERS, ids=answer_ids())
async def test_an_async_views_answer_is_recorded_by_the_fulfilment_rule(
    async_client: paysdk.AsyncClient, shop: Shop, tmp_path: Path, answer: ViewAnswer
) -> None:
    views = Views(answer)
    first, after_first, retry, row = await deliver_twice(
        async_client, shop, views, tmp_path / "ledger.db"
    )
    assert_state_after_first(answer, after_first)
    assert_recorded(answer, first, retry, row, views)


@pytest.mark.parametrize("error", raised_by_views(), ids=RAISED_IDS)
def test_a_view_that_raises_leaves_the_payment_unfulfilled(
    client: paysdk.Client, shop: Shop, tmp_path: Path, error: Exception
) -> None:
    views = Views(error)
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        deliver = delivery(serve_ledger_view(client, shop, ledger, views))
        check_a_raising_view_is_released(
            views, deliver, lambda: ledger.row(REFERENCE), tmp_path / "ledger.db"
        )


@pytest.mark.anyio
@pytest.mark.parametrize("error", raised_by_views(), ids=RAISED_IDS)
async def test_an_async_view_that_raises_leaves_the_payment_unfulfilled(
    async_client: paysdk.AsyncClient, shop: Shop, tmp_path: Path, error: Exception
) -> None:
    """As a sync view's: Django's 500, the claim released and nothing else recorded."""
    views = Views(error)
    first, released, retry, fulfilled = await deliver_twice(
        async_client, shop, views, tmp_path / "ledger.db"
    )
    assert first[0] == 500
    assert released is not None and released.state == "released"
    assert (retry[0], json.loads(retry[1])) == (200, {"status": "ok"})
    assert fulfilled is not None and fulfilled.state == "fulfilled"
    assert [reference for reference, _, _ in ledger_rows(tmp_path / "ledger.db")] == [REFERENCE]


def test_a_lookup_that_raises_a_paysdk_error_of_its_own_is_no_verdict(
    client: paysdk.Client, tmp_path: Path
) -> None:
    shop = ShopOfLinkedOrders()
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        deliver = delivery(serve_ledger_view(client, shop, ledger, Views()))
        check_a_raising_lookup_is_no_verdict(shop, deliver, tmp_path / "ledger.db")


@pytest.mark.anyio
async def test_an_async_views_lookup_that_raises_a_paysdk_error_of_its_own_is_no_verdict(
    async_client: paysdk.AsyncClient, tmp_path: Path
) -> None:
    shop = ShopOfLinkedOrders()
    first, _, retry, row = await deliver_twice(async_client, shop, Views(), tmp_path / "ledger.db")
    assert first[0] == 500
    assert (retry[0], json.loads(retry[1])) == (200, {"status": "ok"})
    assert row is not None and row.state == "fulfilled"
    assert [reference for reference, _, _ in ledger_rows(tmp_path / "ledger.db")] == [REFERENCE]
    assert (shop.lookups, shop.failed) == (2, [])


def test_a_view_that_forgets_to_return_a_response_is_fulfilled_once(
    client: paysdk.Client, shop: Shop, tmp_path: Path
) -> None:
    """A view that ships and returns no response ran to its end: the payment is recorded
    fulfilled, Django says what the view returned, and the retry does not ship it again."""
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:

        @verified_callback(client, lookup=shop.lookup, ledger=ledger)
        def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> Any:
            shop.fulfil(payment)

        serve(path(PATH.lstrip("/"), payment_callback))
        browser = DjangoClient()
        with pytest.raises(ValueError, match="didn't return an HttpResponse"):
            browser.get(f"{PATH}?reference={REFERENCE}")
        retry = browser.get(f"{PATH}?reference={REFERENCE}")
        row = ledger.row(REFERENCE)
    assert (retry.status_code, json.loads(retry.content)) == (200, {"status": "already_fulfilled"})
    assert (shop.fulfilled, shop.deliveries) == ([REFERENCE], 1)
    assert row is not None and row.state == "fulfilled"


@pytest.mark.parametrize(("status", "state"), [(200, "fulfilled"), (409, "refused")])
def test_a_template_response_is_recorded_by_the_fulfilment_rule(
    client: paysdk.Client, shop: Shop, tmp_path: Path, status: int, state: str
) -> None:
    """A ``TemplateResponse`` (what class-based views return) is rendered after the view
    returns: the ledger records it by its status without reading its body first, and Django
    renders it as usual."""
    template = engines["django"].from_string("thank you for {{ reference }}")
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:

        @verified_callback(client, lookup=shop.lookup, ledger=ledger)
        def payment_callback(
            request: HttpRequest, payment: paysdk.VerifiedPayment
        ) -> TemplateResponse:
            shop.fulfil(payment)
            context = {"reference": payment.reference}
            return TemplateResponse(request, template, context, status=status)

        serve(path(PATH.lstrip("/"), payment_callback))
        first = DjangoClient().get(f"{PATH}?reference={REFERENCE}")
        row = ledger.row(REFERENCE)
    assert (first.status_code, first.content) == (status, b"thank you for order-1042")
    assert row is not None and row.state == state
    assert shop.deliveries == 1


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        ("out of stock: {{ reference }}", "out of stock: order-1042"),
        ("{% url 'no-such-view' %}", "(not rendered yet)"),
    ],
    ids=["rendered", "unrenderable"],
)
def test_a_refusing_template_responses_reason_quotes_its_rendered_body(
    client: paysdk.Client, shop: Shop, tmp_path: Path, template: str, reason: str
) -> None:
    """A refusing ``TemplateResponse`` (as Django REST framework's ``Response`` is) has no
    content until Django renders it after the view: its reason quotes it rendered for the
    reason alone (it was recorded as an ``(empty body)``), and Django renders it as usual; one
    that cannot be rendered says so, and Django's rendering raises as it would have."""
    page = engines["django"].from_string(template)
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:

        @verified_callback(client, lookup=shop.lookup, ledger=ledger)
        def payment_callback(
            request: HttpRequest, payment: paysdk.VerifiedPayment
        ) -> TemplateResponse:
            return TemplateResponse(request, page, {"reference": payment.reference}, status=409)

        serve(path(PATH.lstrip("/"), payment_callback))
        answer = DjangoClient(raise_request_exception=False).get(f"{PATH}?reference={REFERENCE}")
        row = ledger.row(REFERENCE)
    assert row is not None
    assert (row.state, row.reason) == ("refused", f"the callback view answered 409: {reason}")
    rendered = answer.status_code == 409 and answer.content == reason.encode()
    assert rendered if reason != "(not rendered yet)" else answer.status_code == 500


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["def", "async def"])
async def test_the_decorated_views_signature_is_what_django_calls_it_with(
    client: paysdk.Client, callback_sandbox: Sandbox, shop: Shop, kind: str
) -> None:
    """A library that reads a view's signature to fill its parameters (Django Ninja) reads the
    decorated view's: without the payment, which the helper gives (Ninja read it as a query
    parameter the service never sends, so every callback was a 422), and with its annotations
    resolved in the view's module (Ninja resolves them in the helper's)."""

    def view(
        request: HttpRequest, payment: paysdk.VerifiedPayment, shop_name: Literal["lagos"]
    ) -> HttpResponse:
        return HttpResponse()

    async def async_view(
        request: HttpRequest, payment: paysdk.VerifiedPayment, shop_name: Literal["lagos"]
    ) -> HttpResponse:
        return HttpResponse()

    if kind == "def":
        decorated: Any = verified_callback(client, lookup=shop.lookup)(view)
    else:
        async with paysdk.AsyncClient(
            secret_key=callback_sandbox.secret_key, base_url=callback_sandbox.base_url
        ) as async_client:
            decorated = verified_callback(async_client, lookup=shop.lookup)(async_view)
    assert str(inspect.signature(decorated)) == (
        "(request: django.http.request.HttpRequest, shop_name: Literal['lagos']) "
        "-> django.http.response.HttpResponse"
    )


def test_a_view_annotated_with_names_it_cannot_resolve_is_decorated_as_written(
    client: paysdk.Client, shop: Shop
) -> None:
    """An annotation naming what only a type checker imports is left as written: the view is
    served as it was before its annotations were resolved."""

    @verified_callback(client, lookup=shop.lookup)
    def payment_callback(request: HttpRequest, payment: NotImported) -> HttpResponse:  # type: ignore[name-defined]  # noqa: F821
        return HttpResponse(payment.reference)

    assert list(inspect.signature(payment_callback).parameters) == ["request"]
    serve(path(PATH.lstrip("/"), payment_callback))
    assert DjangoClient().get(f"{PATH}?reference={REFERENCE}").content == REFERENCE.encode()


@pytest.mark.anyio
async def test_an_async_view_that_forgets_to_return_a_response_is_fulfilled_once(
    async_client: paysdk.AsyncClient, shop: Shop, tmp_path: Path
) -> None:
    async with paysdk.AsyncLedger(tmp_path / "ledger.db") as ledger:

        @verified_callback(async_client, lookup=shop.lookup, ledger=ledger)
        async def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> Any:
            shop.fulfil(payment)

        serve(path(PATH.lstrip("/"), payment_callback))
        browser = DjangoAsyncClient()
        with pytest.raises(ValueError, match="didn't return an HttpResponse"):
            await browser.get(f"{PATH}?reference={REFERENCE}")
        retry = await browser.get(f"{PATH}?reference={REFERENCE}")
        row = await ledger.row(REFERENCE)
    assert (retry.status_code, json.loads(retry.content)) == (200, {"status": "already_fulfilled"})
    assert (shop.fulfilled, shop.deliveries) == ([REFERENCE], 1)
    assert row is not None and row.state == "fulfilled"


@pytest.mark.parametrize("case", CALLBACK_CASES, ids=[case.id for case in CALLBACK_CASES])
def test_with_a_ledger_refusals_of_confirmed_payments_are_recorded(
    client: paysdk.Client, shop: Shop, tmp_path: Path, case: CallbackCase
) -> None:
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        ledger.create_table()
        response = serve_ledger_view(client, shop, ledger, Views()).get(f"{PATH}?{case.query}")
    assert response.status_code == case.status_code
    assert json.loads(response.content) == {"status": case.status}
    rows = [row for row in ledger_rows(tmp_path / "ledger.db") if row[1] != "fulfilled"]
    assert_refusal_recorded(case, rows)


@pytest.mark.anyio
async def test_an_async_view_records_refusals_and_survives_a_ledger_failing_to(
    async_client: paysdk.AsyncClient,
    shop: Shop,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with paysdk.AsyncLedger(tmp_path / "ledger.db") as ledger:
        browser = serve_async_ledger_view(async_client, shop, ledger, Views())
        mismatch = await browser.get(f"{PATH}?reference=order-2001")
        row = await ledger.row("order-2001")
    unreachable = paysdk.AsyncLedger(tmp_path / "no-such-directory" / "ledger.db", timeout=1)
    browser = serve_async_ledger_view(async_client, shop, unreachable, Views())
    with caplog.at_level(logging.ERROR, logger="paysdk.callbacks"):
        failed = await browser.get(f"{PATH}?reference=order-1043")
    assert (mismatch.status_code, json.loads(mismatch.content)) == (409, {"status": "mismatch"})
    assert row is not None and row.state == "refused"
    assert (failed.status_code, json.loads(failed.content)) == (200, {"status": "failed"})
    assert any("could not record the refusal of 'order-1043'" in m for m in caplog.messages)


def test_a_refusal_the_ledger_cannot_record_is_answered_as_usual(
    client: paysdk.Client, shop: Shop, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    unreachable = paysdk.Ledger(tmp_path / "no-such-directory" / "ledger.db", timeout=1)
    browser = serve_ledger_view(client, shop, unreachable, Views())
    with caplog.at_level(logging.ERROR, logger="paysdk.callbacks"):
        mismatch = browser.get(f"{PATH}?reference=order-2001")
    assert (mismatch.status_code, json.loads(mismatch.content)) == (409, {"status": "mismatch"})
    assert any("could not record the refusal of 'order-2001'" in m for m in caplog.messages)


# --- only GET is a callback ----------------------------------------------------------------------

NOT_GET = ["HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"]


def test_only_get_verifies_runs_the_view_and_fulfils(
    client: paysdk.Client, shop: Shop, callback_sandbox: Sandbox, tmp_path: Path
) -> None:
    """Django routes every method to a view: each but GET is answered 405 with ``Allow: GET``
    before anything is verified, run or recorded."""
    runs: list[str] = []
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        ledger.create_table()

        @verified_callback(client=client, lookup=shop.lookup, ledger=ledger)
        def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> JsonResponse:
            runs.append(payment.reference)
            return JsonResponse({"status": "ok"})

        serve(path(PATH.lstrip("/"), payment_callback))
        browser = DjangoClient()
        for method in NOT_GET:
            response = browser.generic(method, f"{PATH}?reference=order-1042")
            assert (response.status_code, response["Allow"]) == (405, "GET"), method
            if method != "HEAD":  # Django's test client drops a HEAD answer's body, as HTTP does
                assert json.loads(response.content) == {"status": "method_not_allowed"}
        assert (runs, ledger.row("order-1042")) == ([], None)
        assert verify_requests(callback_sandbox) == []
        fulfilled = browser.get(f"{PATH}?reference=order-1042")
        row = ledger.row("order-1042")
    assert (fulfilled.status_code, runs) == (200, ["order-1042"])
    assert row is not None and row.state == "fulfilled"


@pytest.mark.anyio
async def test_only_get_runs_an_async_view(
    async_client: paysdk.AsyncClient, shop: Shop, callback_sandbox: Sandbox, tmp_path: Path
) -> None:
    runs: list[str] = []
    async with paysdk.AsyncLedger(tmp_path / "ledger.db") as ledger:
        await ledger.create_table()

        @verified_callback(client=async_client, lookup=shop.lookup, ledger=ledger)
        async def payment_callback(
            request: HttpRequest, payment: paysdk.VerifiedPayment
        ) -> HttpResponseBase:
            runs.append(payment.reference)
            return JsonResponse({"status": "ok"})

        serve(path(PATH.lstrip("/"), payment_callback))
        browser = DjangoAsyncClient()
        for method in NOT_GET:
            response = await browser.generic(method, f"{PATH}?reference=order-1042")
            assert (response.status_code, response["Allow"]) == (405, "GET"), method
        assert (runs, await ledger.row("order-1042")) == ([], None)
        assert verify_requests(callback_sandbox) == []
        fulfilled = await browser.get(f"{PATH}?reference=order-1042")
    assert (fulfilled.status_code, runs) == (200, ["order-1042"])


# --- Django's debug page (DEBUG = True, as a new project has it) ---------------------------


@pytest.mark.parametrize(
    "document",
    [
        {"error": "bad header", "message": "Authorization: {said}"},
        {
            "status": True,
            "data": {
                "reference": "other",
                "amount": 1,
                "currency": "NGN",
                "success": True,
                "echo": "{said}",
            },
        },
        {"status": True, "data": {"reference": REFERENCE, "currency": "NGN", "echo": "{said}"}},
        {
            "data": [
                {"reference": "a", "amount": 1, "currency": "NGN", "status": "completed"},
                {"reference": "b", "echo": "{said}"},
            ]
        },
    ],
    ids=["401", "another-payment", "not-a-payment", "streamed-list"],
)
def test_a_debug_page_of_a_failed_call_shows_no_echoed_key(
    document: dict[str, Any], hostile: HostileServer
) -> None:
    """A merchant's own view whose ``verify`` (or ``iter_payments``) raises gets Django's debug
    page, which shows every frame's locals: what the server answered (it echoed the key, in
    an error body or a 2xx one) is among them."""
    said_at = json.dumps(document)

    def echo(conn: Connection, request: Request) -> bool:
        said = request.headers.get("authorization", "")
        body = said_at.replace("{said}", said).encode()
        status = 401 if "error" in document else 200
        return respond(status, body, {"Content-Type": "application/json"})(conn, request)

    hostile.script(echo)
    client = paysdk.Client(secret_key=SECRET, base_url=hostile.base_url, max_retries=0)

    def checkout(request: HttpRequest) -> HttpResponse:
        if isinstance(document.get("data"), list):
            list(client.iter_payments())
        else:
            client.verify(REFERENCE)
        return HttpResponse("paid")

    with client:
        html = debug_page(checkout)
    assert "paysdk" in html
    assert SECRET not in html


@pytest.mark.parametrize(
    "call",
    [
        "verify",
        "confirm",
        "iter_payments",
        "raw",
        "lookup",
        "malformed",
        "bad_option",
        "with_options",
    ],
)
def test_a_debug_page_of_a_failed_call_shows_no_key_given_for_the_call(
    callback_sandbox: Sandbox, call: str
) -> None:
    """A platform's view gives each account's key to the call (``secret_key=``, or
    ``with_options``) of one client: when the call fails (the service's 500, the view's own
    lookup raising, another option refused), Django's debug page shows the locals of each
    frame, the call's own among them."""
    key = callback_sandbox.secret_key
    callback_sandbox.inject(Fault.server_error(500))

    def key_of(account: str) -> str:
        """The account's key, read where the view needs it: the view's own locals hold none."""
        return key

    def lookup(reference: str) -> Order:
        raise RuntimeError("the orders database is down")

    def checkout(request: HttpRequest) -> HttpResponse:
        if call == "verify":
            platform.verify(REFERENCE, secret_key=key_of("acme"))
        elif call == "confirm":
            platform.confirm(REFERENCE, amount=1, currency="NGN", secret_key=key_of("acme"))
        elif call == "iter_payments":
            list(platform.iter_payments(secret_key=key_of("acme")))
        elif call == "raw":
            platform.with_raw_response.verify(REFERENCE, secret_key=key_of("acme")).parse()
        elif call == "bad_option":  # refused, with the key beside it
            platform.verify(REFERENCE, secret_key=key_of("acme"), timeout=-1)
        elif call == "with_options":
            platform.with_options(secret_key=key_of("acme"), timeout=-1)
        elif call == "malformed":  # refused before the client's settings are checked
            platform.verify_callback("order=1", lookup=lookup, secret_key=key_of("acme"))
        else:
            platform.verify_callback(request, lookup=lookup, secret_key=key_of("acme"))
        return HttpResponse("paid")

    serve(path("checkout", checkout))
    base_url = callback_sandbox.base_url
    with paysdk.Client(secret_key="sk_test_platform", base_url=base_url, max_retries=0) as platform:
        browser = DjangoClient(raise_request_exception=False)
        page = browser.get(f"/checkout?reference={REFERENCE}", HTTP_ACCEPT="text/html")
    html = page.content.decode()
    assert page.status_code == 500
    assert "paysdk" in html and "Local vars" in html  # the debug page, with the locals
    assert key not in html


@pytest.mark.parametrize("given", ["environment", "with_options", "call"])
def test_a_debug_page_of_a_base_url_refused_for_holding_the_key_shows_no_key(
    monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """A base URL pasted with the key in it (``PAYSDK_BASE_URL``, or a platform's URL for one
    account) is refused, its message quoting neither; the frames of that refusal, whose locals
    Django's debug page shows, hold the URL no more than the key."""
    key = "sk_live_Pasted1nUrl"
    monkeypatch.setenv("PAYSDK_SECRET_KEY", key)
    pasted = f"https://pay.example.com/{key}/"
    monkeypatch.setenv("PAYSDK_BASE_URL", pasted if given == "environment" else "https://x.test")

    def url_of(account: str) -> str:
        """The account's URL, read where the view needs it: the view's own locals hold none."""
        return pasted

    def checkout(request: HttpRequest) -> HttpResponse:
        client = paysdk.Client(max_retries=0)
        if given == "with_options":
            client.with_options(base_url=url_of("acme"))
        elif given == "call":
            client.verify(REFERENCE, base_url=url_of("acme"))
        return HttpResponse("paid")

    html = debug_page(checkout)
    assert "base_url contains the secret key" in html
    assert key.lower() not in html.lower()


@pytest.mark.anyio
async def test_a_key_echoed_by_the_service_is_blotted_out_of_the_reasons_the_ledger_records(
    async_client: paysdk.AsyncClient, callback_sandbox: Sandbox, tmp_path: Path
) -> None:
    """A key the service echoes into a currency, or that an async view's refusal quotes, reads
    ``<secret key>`` in the reasons an ``AsyncLedger`` records."""
    key = callback_sandbox.secret_key
    callback_sandbox.add_payment("order-echo-currency", amount=700, currency=key)
    callback_sandbox.add_payment("order-echo-body", amount=700, currency="KES")
    references = ["order-echo-currency", "order-echo-body"]
    shop = Shop(*(Order(reference, 700, "KES") for reference in references))
    async with paysdk.AsyncLedger(tmp_path / "ledger.db") as ledger:

        @verified_callback(client=async_client, lookup=shop.lookup, ledger=ledger)
        async def payment_callback(
            request: HttpRequest, payment: paysdk.VerifiedPayment
        ) -> HttpResponseBase:
            return HttpResponse("x" * 180 + key, status=422)  # the key at the excerpt's cut

        serve(path(PATH.lstrip("/"), payment_callback))
        answers = [await DjangoAsyncClient().get(f"{PATH}?reference={r}") for r in references]
        rows = await ledger.rows(references)

    assert [answer.status_code for answer in answers] == [409, 422]
    assert {r.reference: r.reason for r in rows.values()} == {
        "order-echo-currency": "paid, but not for this order: currency '<secret key>' instead of "
        "'KES'",
        "order-echo-body": "the callback view answered 422: " + "x" * 180 + "<secret key>",
    }


# --- under ATOMIC_REQUESTS ---------------------------------------------------------------------


def atomic_requests(monkeypatch: pytest.MonkeyPatch, *aliases: str) -> None:
    """``ATOMIC_REQUESTS = True`` in the site's ``DATABASES`` entry of each of ``aliases``, as a
    project's settings module may set it, for this test."""
    for alias in aliases:
        monkeypatch.setitem(settings.DATABASES[alias], "ATOMIC_REQUESTS", True)


@pytest.fixture
def order_tables() -> Iterator[None]:
    """A shop's tables in the site's database: a payment row refers to its order's row by a
    foreign key checked when its transaction commits, as Django's SQLite backend creates one."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE shop_order (reference TEXT PRIMARY KEY)")
        cursor.execute(
            "CREATE TABLE shop_payment (reference TEXT NOT NULL REFERENCES shop_order (reference)"
            " DEFERRABLE INITIALLY DEFERRED)"
        )
    yield
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE shop_payment")
        cursor.execute("DROP TABLE shop_order")
    connection.close()


def test_under_atomic_requests_a_commit_that_fails_leaves_the_payment_to_the_retry(
    client: paysdk.Client,
    shop: Shop,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    order_tables: None,
) -> None:
    """With ``ATOMIC_REQUESTS``, the ledger's view is outside the request's transaction: the
    view's writes commit in its own ``transaction.atomic()`` before the ledger records the
    payment, so a commit that fails (the order's row, which the payment's refers to, not
    committed yet) is answered 500 with the payment released, and the retry fulfils it."""
    atomic_requests(monkeypatch, "default")
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:

        @verified_callback(client, lookup=shop.lookup, ledger=ledger)
        def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> JsonResponse:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("INSERT INTO shop_payment VALUES (%s)", [payment.reference])
            return JsonResponse({"status": "ok"})

        serve(path(PATH.lstrip("/"), payment_callback))
        browser = DjangoClient(raise_request_exception=False)
        failed = browser.get(f"{PATH}?reference={REFERENCE}")
        after_failure = ledger.row(REFERENCE)
        with connection.cursor() as cursor:  # the checkout's transaction commits the order
            cursor.execute("INSERT INTO shop_order VALUES (%s)", [REFERENCE])
        retried = browser.get(f"{PATH}?reference={REFERENCE}")
        after_retry = ledger.row(REFERENCE)
        with connection.cursor() as cursor:
            cursor.execute("SELECT reference FROM shop_payment")
            paid = cursor.fetchall()

    assert failed.status_code == 500
    assert after_failure is not None and after_failure.state == "released"
    assert (retried.status_code, json.loads(retried.content)) == (200, {"status": "ok"})
    assert after_retry is not None and after_retry.state == "fulfilled"
    assert paid == [(REFERENCE,)]


def test_under_atomic_requests_a_view_without_a_ledger_is_left_in_the_requests_transaction(
    client: paysdk.Client, shop: Shop, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a ledger nothing is committed around the view: Django's ``ATOMIC_REQUESTS``
    applies to it as to any view."""
    atomic_requests(monkeypatch, "default")
    inside: list[bool] = []

    @verified_callback(client, lookup=shop.lookup)
    def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> JsonResponse:
        inside.append(connection.in_atomic_block)
        return JsonResponse({"status": "ok"})

    serve(path(PATH.lstrip("/"), payment_callback))
    response = DjangoClient().get(f"{PATH}?reference={REFERENCE}")
    connection.close()
    assert (response.status_code, inside) == (200, [True])


@pytest.mark.parametrize(("method", "atomic"), [("dispatch", False), ("get", True)])
def test_under_atomic_requests_a_class_based_views_dispatch_takes_the_decorator(
    client: paysdk.Client,
    shop: Shop,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    method: str,
    atomic: bool,
) -> None:
    """A class-based view is non-atomic when ``verified_callback`` decorates its ``dispatch``
    (``as_view()`` copies what ``dispatch`` carries), as docs/fulfilment.md says; on ``get`` it
    is not, which is why the docs name ``dispatch``."""
    atomic_requests(monkeypatch, "default")
    inside: list[bool] = []
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        decorate = method_decorator(
            verified_callback(client, lookup=shop.lookup, ledger=ledger), name=method
        )

        @decorate
        class PaymentCallback(View):
            def get(self, request: HttpRequest, payment: paysdk.VerifiedPayment) -> HttpResponse:
                inside.append(connection.in_atomic_block)
                shop.fulfil(payment)
                return JsonResponse({"status": "ok"})

        serve(path(PATH.lstrip("/"), PaymentCallback.as_view()))
        response = DjangoClient().get(f"{PATH}?reference={REFERENCE}")
        connection.close()
    assert (response.status_code, inside) == (200, [atomic])


@pytest.mark.anyio
async def test_under_atomic_requests_an_async_view_with_a_ledger_runs_once(
    async_client: paysdk.AsyncClient,
    shop: Shop,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Django refuses ``ATOMIC_REQUESTS`` for an async view; the ledger's async view is
    non-atomic, so it is served and fulfils once."""
    atomic_requests(monkeypatch, "default")
    async with paysdk.AsyncLedger(tmp_path / "ledger.db") as ledger:

        @verified_callback(async_client, lookup=shop.lookup, ledger=ledger)
        async def payment_callback(
            request: HttpRequest, payment: paysdk.VerifiedPayment
        ) -> HttpResponseBase:
            shop.fulfil(payment)
            return JsonResponse({"status": "ok"})

        serve(path(PATH.lstrip("/"), payment_callback))
        answers = [await DjangoAsyncClient().get(f"{PATH}?reference={REFERENCE}") for _ in "12"]

    assert [(r.status_code, json.loads(r.content)) for r in answers] == [
        (200, {"status": "ok"}),
        (200, {"status": "already_fulfilled"}),
    ]
    assert (shop.fulfilled, shop.deliveries) == ([REFERENCE], 1)


UNCONFIGURED = """
import sys

import paysdk
from paysdk.integrations.django import verified_callback

client = paysdk.Client(secret_key="sk_test_unconfigured", base_url="http://127.0.0.1:9")


def payment_callback(request, payment):
    return None


verified_callback(client, lookup={}.get)(payment_callback)  # no ledger: Django's settings unread
try:
    verified_callback(client, lookup={}.get, ledger=paysdk.Ledger(sys.argv[1]))(payment_callback)
except paysdk.ConfigurationError as error:
    print(error)
"""


def test_a_ledgers_view_decorated_before_djangos_settings_are_configured_is_refused(
    tmp_path: Path,
) -> None:
    """A views module imported before Django's settings are configured: the ledger's view, which
    is non-atomic on each of Django's databases, cannot know them, and says so at once."""
    env = {name: value for name, value in os.environ.items() if name != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "-c", UNCONFIGURED, str(tmp_path / "ledger.db")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "verified_callback with a ledger makes its view non-atomic" in done.stdout
    assert "before the view is decorated" in done.stdout
    assert "DJANGO_SETTINGS_MODULE" in done.stdout
    assert not (tmp_path / "ledger.db").exists()

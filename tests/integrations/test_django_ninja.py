"""paysdk.integrations.django under Django Ninja's operations, through Django's test clients."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.http import HttpRequest, HttpResponseBase, JsonResponse
from django.test import AsyncClient as DjangoAsyncClient
from django.test import Client as DjangoClient
from django.urls import path

import paysdk
from paysdk.integrations.django import verified_callback
from paysdk.sandbox import Sandbox
from tests.support.django_site import configure, serve
from tests.support.fulfilment_rule import (
    REFERENCE,
    VIEW_ANSWERS,
    ViewAnswer,
    Views,
    answer_ids,
    check_the_rule,
)
from tests.support.merchant import CALLBACK_CASES, CallbackCase, Shop, assert_answered

configure()

from ninja import NinjaAPI, Status  # noqa: E402 - Ninja reads Django's settings on import

PATH = "/api/payments/callback"
STATUSES = {200, *(answer.status_code for answer in VIEW_ANSWERS)}
_namespaces = itertools.count()


def serve_api() -> NinjaAPI:
    """A new Ninja API, under a namespace of its own (Ninja refuses two APIs under one)."""
    return NinjaAPI(urls_namespace=f"paysdk-test-{next(_namespaces)}")


def on_failed(shop: Shop) -> Callable[[HttpRequest, paysdk.PaymentFailedError], None]:
    def record_failure(request: HttpRequest, error: paysdk.PaymentFailedError) -> None:
        shop.record_failure(error)

    return record_failure


def route(api: NinjaAPI) -> None:
    """Serve ``api`` at ``/api/``."""
    serve(path("api/", api.urls))


@pytest.mark.parametrize("case", CALLBACK_CASES, ids=[case.id for case in CALLBACK_CASES])
def test_each_callback_to_an_operation_is_answered_and_only_a_match_is_fulfilled(
    client: paysdk.Client, shop: Shop, callback_sandbox: Sandbox, case: CallbackCase
) -> None:
    """The payment is the helper's to give, not a parameter Ninja reads from the query (read so,
    every callback was a 422)."""
    api = serve_api()

    @api.get("/payments/callback")
    @verified_callback(client, lookup=shop.lookup, on_failed=on_failed(shop))
    def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> dict[str, str]:
        shop.fulfil(payment)
        return {"status": "ok"}

    route(api)
    response = DjangoClient().get(f"{PATH}?{case.query}")
    body = json.loads(response.content)
    assert_answered(case, shop, callback_sandbox, status_code=response.status_code, body=body)


@pytest.mark.anyio
@pytest.mark.parametrize("case", CALLBACK_CASES, ids=[case.id for case in CALLBACK_CASES])
async def test_each_callback_to_an_async_operation_is_answered_and_only_a_match_is_fulfilled(
    async_client: paysdk.AsyncClient, shop: Shop, callback_sandbox: Sandbox, case: CallbackCase
) -> None:
    api = serve_api()

    @api.get("/payments/callback")
    @verified_callback(async_client, lookup=shop.lookup, on_failed=on_failed(shop))
    async def payment_callback(
        request: HttpRequest, payment: paysdk.VerifiedPayment
    ) -> dict[str, str]:
        shop.fulfil(payment)
        return {"status": "ok"}

    route(api)
    response = await DjangoAsyncClient().get(f"{PATH}?{case.query}")
    body = json.loads(response.content)
    assert_answered(case, shop, callback_sandbox, status_code=response.status_code, body=body)


def test_an_operation_reads_its_path_and_query_parameters_beside_the_payment(
    client: paysdk.Client, shop: Shop
) -> None:
    api = serve_api()

    @api.get("/shops/{shop_id}/callback")
    @verified_callback(client, lookup=shop.lookup)
    def payment_callback(
        request: HttpRequest, payment: paysdk.VerifiedPayment, shop_id: int, note: str = ""
    ) -> dict[str, object]:
        return {"reference": payment.reference, "shop_id": shop_id, "note": note}

    route(api)
    answers = [
        DjangoClient().get(f"/api/shops/{shop_id}/callback?reference={REFERENCE}{query}")
        for shop_id, query in [("7", "&note=lagos"), ("7", ""), ("seven", "")]
    ]
    assert [(answer.status_code, json.loads(answer.content)) for answer in answers[:2]] == [
        (200, {"reference": REFERENCE, "shop_id": 7, "note": "lagos"}),
        (200, {"reference": REFERENCE, "shop_id": 7, "note": ""}),
    ]
    assert answers[2].status_code == 422  # Ninja's own answer to a path parameter it cannot read


ANSWER_FORMS: dict[str, Callable[[ViewAnswer], Any]] = {
    "Status": lambda answer: Status(answer.status_code, answer.body),
    "tuple": lambda answer: (answer.status_code, answer.body),
    "response": lambda answer: JsonResponse(answer.body, status=answer.status_code),
}


@pytest.mark.filterwarnings("ignore:Returning tuple:DeprecationWarning")
@pytest.mark.parametrize("form", ANSWER_FORMS)
@pytest.mark.parametrize("answer", VIEW_ANSWERS, ids=answer_ids())
def test_an_operations_status_is_recorded_by_the_fulfilment_rule(
    client: paysdk.Client, shop: Shop, tmp_path: Path, answer: ViewAnswer, form: str
) -> None:
    """Ninja's ``Status(409, body)`` and ``(409, body)`` answer with that status: read as values,
    they were recorded fulfilled, so a refused payment was never delivered again."""
    views = Views(answer)
    api = serve_api()
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:

        @api.get("/payments/callback", response=dict.fromkeys(STATUSES, dict))
        @verified_callback(client, lookup=shop.lookup, ledger=ledger)
        def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> Any:
            return ANSWER_FORMS[form](views.next())

        route(api)
        browser = DjangoClient(raise_request_exception=False)

        def deliver() -> tuple[int, bytes]:
            response = browser.get(f"{PATH}?reference={REFERENCE}")
            return response.status_code, response.content

        check_the_rule(answer, views, deliver, lambda: ledger.row(REFERENCE))


@pytest.mark.anyio
async def test_an_async_operations_refusal_is_recorded_with_its_body(
    async_client: paysdk.AsyncClient, shop: Shop, tmp_path: Path
) -> None:
    api = serve_api()
    async with paysdk.AsyncLedger(tmp_path / "ledger.db") as ledger:

        @api.get("/payments/callback", response={200: dict, 409: dict})
        @verified_callback(async_client, lookup=shop.lookup, ledger=ledger)
        async def payment_callback(
            request: HttpRequest, payment: paysdk.VerifiedPayment
        ) -> Status[dict[str, str]] | HttpResponseBase:
            return Status(409, {"status": "out of stock"})

        route(api)
        answer = await DjangoAsyncClient().get(f"{PATH}?reference={REFERENCE}")
        row = await ledger.row(REFERENCE)
    assert (answer.status_code, json.loads(answer.content)) == (409, {"status": "out of stock"})
    assert row is not None
    assert (row.state, row.reason) == (
        "refused",
        'the callback view answered 409: {"status":"out of stock"}',
    )

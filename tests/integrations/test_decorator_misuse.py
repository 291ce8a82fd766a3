"""A callback helper applied where it can never work is refused when it is applied, with a
TypeError that says what to write, rather than as a 500 at the first callback."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import flask
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

import paysdk
from paysdk.integrations import fastapi as fastapi_helper
from paysdk.integrations import flask as flask_helper
from paysdk.sandbox import COMPLETED_REFERENCE, FAILED_REFERENCE, Sandbox
from tests.support.django_site import configure

configure()

from paysdk.integrations import django as django_helper  # noqa: E402 - needs the settings

ORDERS = {COMPLETED_REFERENCE: {"amount": 2_500_000, "currency": "NGN"}}
ROUTED_ALREADY = (
    r"is routed already, so the route would call it without the decorator: write "
    r"@verified_callback\(\.\.\.\) below the route's decorator"
)


@pytest.fixture
def client(sandbox: Sandbox) -> Iterator[paysdk.Client]:
    with paysdk.Client(secret_key=sandbox.secret_key, base_url=sandbox.base_url) as made:
        yield made


@pytest.fixture
def async_client(sandbox: Sandbox) -> Iterator[paysdk.AsyncClient]:
    """Closed after the test, from a loop of its own (a test client served on another)."""
    made = paysdk.AsyncClient(secret_key=sandbox.secret_key, base_url=sandbox.base_url)
    yield made
    asyncio.run(made.close())


# --- Flask ------------------------------------------------------------------------------------


def test_flask_the_decorator_above_the_route_is_refused(client: paysdk.Client) -> None:
    app = flask.Flask(__name__)
    with pytest.raises(TypeError, match=ROUTED_ALREADY):

        @flask_helper.verified_callback(client, lookup=ORDERS.get)
        @app.get("/payments/callback")
        def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
            return {"status": "ok"}


def test_flask_a_view_without_a_payment_parameter_is_refused(client: paysdk.Client) -> None:
    app = flask.Flask(__name__)
    with pytest.raises(
        TypeError, match=r"must take payment as its first positional parameter: def view\(payment"
    ):

        @app.get("/payments/callback")
        @flask_helper.verified_callback(client, lookup=ORDERS.get)  # type: ignore[arg-type]  # the misuse itself
        def payment_callback() -> dict[str, str]:
            return {"status": "ok"}


def test_flask_the_decorator_below_the_route_still_serves(client: paysdk.Client) -> None:
    app = flask.Flask(__name__)

    @app.get("/payments/callback")
    @flask_helper.verified_callback(client, lookup=ORDERS.get)
    def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        return {"status": "ok", "reference": payment.reference}

    answer = app.test_client().get(f"/payments/callback?reference={COMPLETED_REFERENCE}")
    assert (answer.status_code, answer.get_json()["reference"]) == (200, COMPLETED_REFERENCE)


# --- FastAPI ----------------------------------------------------------------------------------


def test_fastapi_the_decorator_above_the_route_is_refused(
    async_client: paysdk.AsyncClient,
) -> None:
    app = FastAPI()
    with pytest.raises(TypeError, match=ROUTED_ALREADY):

        @fastapi_helper.verified_callback(async_client, lookup=ORDERS.get)
        @app.get("/payments/callback")
        async def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
            return {"status": "ok"}


def test_fastapi_a_keyword_only_payment_is_refused(async_client: paysdk.AsyncClient) -> None:
    app = FastAPI()
    with pytest.raises(TypeError, match="must take payment as its first positional parameter"):

        @app.get("/payments/callback")
        @fastapi_helper.verified_callback(async_client, lookup=ORDERS.get)
        async def payment_callback(*, payment: paysdk.VerifiedPayment) -> dict[str, str]:
            return {"status": "ok"}


def test_fastapi_the_decorator_below_the_route_still_serves(
    async_client: paysdk.AsyncClient,
) -> None:
    app = FastAPI()

    @app.get("/payments/callback")
    @fastapi_helper.verified_callback(async_client, lookup=ORDERS.get)
    async def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        return {"status": "ok", "reference": payment.reference}

    with TestClient(app) as browser:
        answer = browser.get(f"/payments/callback?reference={COMPLETED_REFERENCE}")
        assert browser.portal is not None  # inside the test client's with block
        browser.portal.call(async_client.close)  # on the loop its connections belong to
    assert (answer.status_code, answer.json()["reference"]) == (200, COMPLETED_REFERENCE)


# --- Django -----------------------------------------------------------------------------------


def test_django_a_view_without_a_payment_parameter_is_refused(client: paysdk.Client) -> None:
    from django.http import HttpRequest, JsonResponse

    with pytest.raises(
        TypeError,
        match=r"must take request and payment as its first positional parameters: "
        r"def view\(request, payment",
    ):

        @django_helper.verified_callback(client, lookup=ORDERS.get)  # type: ignore[arg-type]  # the misuse itself
        def payment_callback(request: HttpRequest) -> JsonResponse:
            return JsonResponse({"status": "ok"})


def test_django_an_async_view_without_a_payment_parameter_is_refused(
    async_client: paysdk.AsyncClient,
) -> None:
    from django.http import JsonResponse

    with pytest.raises(TypeError, match="must take request and payment"):

        @django_helper.verified_callback(async_client, lookup=ORDERS.get)  # type: ignore[arg-type, type-var]  # the misuse itself
        async def payment_callback(payment: paysdk.VerifiedPayment) -> JsonResponse:
            return JsonResponse({"status": "ok"})


# --- the order table itself as lookup -----------------------------------------------------------

NOT_CALLABLE = (
    r"lookup must be a function of the reference that returns its order, not the dict given: for a "
    r"dict of orders, pass its \.get"
)


def test_the_order_table_as_lookup_is_refused_when_applied_in_each_framework(
    client: paysdk.Client, async_client: paysdk.AsyncClient, sandbox: Sandbox
) -> None:
    """``lookup=ORDERS`` for the examples' ``lookup=ORDERS.get``: refused where the decorator is
    applied, saying what to write, not a TypeError (and Flask's HTML 500) at every callback."""
    app = flask.Flask(__name__)
    with pytest.raises(paysdk.ConfigurationError, match=NOT_CALLABLE):

        @app.get("/payments/callback")
        @flask_helper.verified_callback(client, lookup=ORDERS)  # type: ignore[arg-type]
        def flask_view(payment: paysdk.VerifiedPayment) -> dict[str, str]:
            return {"status": "ok"}

    with pytest.raises(paysdk.ConfigurationError, match=NOT_CALLABLE):
        fastapi_helper.verified_callback(async_client, lookup=ORDERS)  # type: ignore[arg-type]
    with pytest.raises(paysdk.ConfigurationError, match=NOT_CALLABLE):
        django_helper.verified_callback(client, lookup=ORDERS)  # type: ignore[call-overload]
    with pytest.raises(paysdk.ConfigurationError, match=r"not the str given$"):
        django_helper.verified_callback(async_client, lookup="ORDERS")  # type: ignore[call-overload]
    assert sandbox.requests == []


def test_the_order_table_as_lookup_of_verify_callback_or_reconcile_is_refused_before_a_request(
    client: paysdk.Client, sandbox: Sandbox, tmp_path: Path
) -> None:
    with pytest.raises(paysdk.ConfigurationError, match=NOT_CALLABLE):
        client.verify_callback(f"reference={COMPLETED_REFERENCE}", lookup=ORDERS)  # type: ignore[arg-type]
    ledger = paysdk.Ledger(f"sqlite:///{tmp_path / 'ledger.db'}")
    with ledger, pytest.raises(paysdk.ConfigurationError, match=NOT_CALLABLE):
        ledger.reconcile(client, lookup=ORDERS)  # type: ignore[arg-type]
    assert sandbox.requests == []


# --- an async on_failed for a sync view ---------------------------------------------------------

ASYNC_ON_FAILED = r"on_failed is async, and the helper of a sync view \(a paysdk\.Client\) cannot"
FAILED_ORDERS = {FAILED_REFERENCE: {"amount": 4999, "currency": "USD"}}


class AsyncCall:
    """An ``on_failed`` whose ``__call__`` is async: no signature says so before it is called."""

    def __init__(self) -> None:
        self.ran = False

    async def __call__(self, *args: object) -> None:
        self.ran = True


def test_an_async_on_failed_for_a_sync_view_is_refused_when_applied(
    client: paysdk.Client, async_client: paysdk.AsyncClient
) -> None:
    """Called from a sync Django view it would only make a coroutine, never run: the failure it
    records would go unrecorded."""

    async def on_failed(*args: object) -> None:
        pass

    with pytest.raises(paysdk.ConfigurationError, match=ASYNC_ON_FAILED):
        django_helper.verified_callback(client, lookup=ORDERS.get, on_failed=on_failed)
    # where it can be awaited (Flask runs it as it runs an async view), it is taken
    django_helper.verified_callback(async_client, lookup=ORDERS.get, on_failed=on_failed)
    fastapi_helper.verified_callback(client, lookup=ORDERS.get, on_failed=on_failed)
    flask_helper.verified_callback(client, lookup=ORDERS.get, on_failed=on_failed)


def test_an_awaitable_answer_of_a_sync_views_on_failed_is_refused(
    client: paysdk.Client, sandbox: Sandbox, caplog: pytest.LogCaptureFixture
) -> None:
    """An ``on_failed`` that turns out async only when called is refused then: the framework's
    500, so the service calls again, rather than a failure recorded by nothing."""
    from django.http import HttpRequest, JsonResponse
    from django.test import Client as DjangoClient
    from django.urls import path

    from tests.support.django_site import serve

    flask_on_failed, django_on_failed = AsyncCall(), AsyncCall()
    app = flask.Flask(__name__)

    @app.get("/payments/callback")
    @flask_helper.verified_callback(client, lookup=FAILED_ORDERS.get, on_failed=flask_on_failed)
    def flask_view(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        return {"status": "ok"}

    @django_helper.verified_callback(client, lookup=FAILED_ORDERS.get, on_failed=django_on_failed)
    def django_view(request: HttpRequest, payment: paysdk.VerifiedPayment) -> JsonResponse:
        return JsonResponse({"status": "ok"})

    serve(path("payments/callback", django_view))
    query = f"/payments/callback?reference={FAILED_REFERENCE}"
    with caplog.at_level(logging.CRITICAL, logger="django.request"):
        django_answer = DjangoClient(raise_request_exception=False).get(query)
    with caplog.at_level(logging.CRITICAL, logger=app.logger.name):
        flask_answer = app.test_client().get(query)
    assert (flask_answer.status_code, django_answer.status_code) == (500, 500)
    assert not flask_on_failed.ran and not django_on_failed.ran

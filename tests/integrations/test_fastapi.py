"""paysdk.integrations.fastapi through FastAPI's test client, verifying against the sandbox."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import Depends, FastAPI
from fastapi.testclient import TestClient
from starlette.requests import Request

import paysdk
from paysdk.integrations.fastapi import VerifiedCallback, install
from paysdk.sandbox import Fault, Sandbox
from tests.support.merchant import CALLBACK_CASES, CallbackCase, Order, Shop, assert_answered

PATH = "/payments/callback"


def make_app(client: paysdk.Client | paysdk.AsyncClient, shop: Shop) -> FastAPI:
    """A merchant app whose callback endpoint fulfils through ``shop``."""

    async def record_failure(error: paysdk.PaymentFailedError) -> None:
        shop.record_failure(error)

    verified_callback = VerifiedCallback(client, lookup=shop.lookup, on_failed=record_failure)
    app = FastAPI()
    install(app)

    @app.get(PATH)
    async def payment_callback(
        payment: paysdk.VerifiedPayment = Depends(verified_callback),  # noqa: B008 (closure)
    ) -> dict[str, str]:
        shop.fulfil(payment)
        return {"status": "ok"}

    return app


@pytest.fixture(params=["async", "sync"])
def browser(
    request: pytest.FixtureRequest, callback_sandbox: Sandbox, shop: Shop
) -> Iterator[TestClient]:
    """A TestClient (one event loop for its life) for an app using an AsyncClient or a Client."""
    kind = paysdk.AsyncClient if request.param == "async" else paysdk.Client
    client = kind(
        secret_key=callback_sandbox.secret_key, base_url=callback_sandbox.base_url, max_retries=0
    )
    with TestClient(make_app(client, shop)) as browser:
        yield browser
        if isinstance(client, paysdk.AsyncClient):
            browser.portal.call(client.close)
    if isinstance(client, paysdk.Client):
        client.close()


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


def test_the_service_failing_asks_for_a_retry(
    browser: TestClient, shop: Shop, callback_sandbox: Sandbox
) -> None:
    callback_sandbox.inject(Fault(disconnect="before_response"))
    response = browser.get(f"{PATH}?reference=order-1042")
    assert (response.status_code, response.json()) == (503, {"status": "retry_later"})
    assert shop.fulfilled == []


def test_fastapi_reads_the_request_parameter_as_the_request_class(shop: Shop) -> None:
    """What FastAPI inspects, a callable instance's signature, holds the class, not a string: a
    string annotation there cannot be resolved by FastAPI before 0.124 (it answers 422)."""
    client = paysdk.AsyncClient(secret_key="sk_test_x", base_url="http://127.0.0.1:1")
    signature = inspect.signature(VerifiedCallback(client, lookup=shop.lookup))
    assert signature.parameters["request"].annotation is Request
    assert signature.return_annotation is paysdk.VerifiedPayment


def test_a_client_of_another_kind_is_refused(shop: Shop) -> None:
    with pytest.raises(paysdk.ConfigurationError, match="AsyncClient"):
        VerifiedCallback(object(), lookup=shop.lookup)  # type: ignore[arg-type]


def test_an_app_without_install_is_told_to_call_it(callback_sandbox: Sandbox, shop: Shop) -> None:
    """Without the handler FastAPI would answer {"detail": ...}: refuse to, loudly."""
    client = paysdk.AsyncClient(
        secret_key=callback_sandbox.secret_key, base_url=callback_sandbox.base_url
    )
    verified_callback = VerifiedCallback(client, lookup=shop.lookup)
    app = FastAPI()

    @app.get(PATH)
    async def payment_callback(
        payment: paysdk.VerifiedPayment = Depends(verified_callback),  # noqa: B008 (closure)
    ) -> dict[str, str]:
        return {"status": "ok"}

    with TestClient(app) as browser:
        with pytest.raises(paysdk.ConfigurationError, match=r"install\(app\)"):
            browser.get(f"{PATH}?reference=order-1042")
        browser.portal.call(client.close)
    assert shop.fulfilled == []


def test_a_plain_starlette_app_answers_the_same_body(callback_sandbox: Sandbox, shop: Shop) -> None:
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    client = paysdk.AsyncClient(
        secret_key=callback_sandbox.secret_key, base_url=callback_sandbox.base_url
    )
    verified_callback = VerifiedCallback(client, lookup=shop.lookup)

    async def payment_callback(request: Request) -> JSONResponse:
        payment = await verified_callback(request)
        shop.fulfil(payment)
        return JSONResponse({"status": "ok"})

    app = Starlette(routes=[Route(PATH, payment_callback)])
    install(app)
    with TestClient(app) as browser:
        answers = [browser.get(f"{PATH}?reference={ref}") for ref in ("order-1042", "order-2001")]
        browser.portal.call(client.close)
    assert [(a.status_code, a.json()) for a in answers] == [
        (200, {"status": "ok"}),
        (409, {"status": "mismatch"}),
    ]


# --- with a fulfilment ledger ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_with_a_ledger_fulfil_runs_once_before_the_endpoint(
    callback_sandbox: Sandbox, shop: Shop, tmp_path: Path, kind: str
) -> None:
    shop.orders["order-1044"] = Order("order-1044", amount=85000, currency="GHS")
    client = paysdk.AsyncClient(
        secret_key=callback_sandbox.secret_key, base_url=callback_sandbox.base_url
    )
    ledger: paysdk.Ledger | paysdk.AsyncLedger
    if kind == "async":
        ledger = paysdk.AsyncLedger(tmp_path / "ledger.db")

        async def fulfil(payment: paysdk.VerifiedPayment) -> None:
            shop.fulfil(payment)

        verified = VerifiedCallback(client, lookup=shop.lookup, ledger=ledger, fulfil=fulfil)
    else:
        ledger = paysdk.Ledger(tmp_path / "ledger.db")
        verified = VerifiedCallback(client, lookup=shop.lookup, ledger=ledger, fulfil=shop.fulfil)
    app = FastAPI()
    install(app)

    @app.get(PATH)
    async def payment_callback(
        payment: paysdk.VerifiedPayment = Depends(verified),  # noqa: B008 (closure)
    ) -> dict[str, str]:
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
        browser.portal.call(client.close)
        if isinstance(ledger, paysdk.AsyncLedger):
            browser.portal.call(ledger.close)
        else:
            ledger.close()

    assert [(r.status_code, r.json()) for r in answers] == [
        (200, {"status": "ok"}),
        (200, {"status": "already_fulfilled"}),
    ]
    assert (shop.fulfilled, shop.deliveries) == (["order-1042"], 1)
    assert [(r.status_code, r.json()) for r in during] == [(503, {"status": "in_progress"})]


def test_a_ledger_needs_its_fulfil(shop: Shop, tmp_path: Path) -> None:
    client = paysdk.Client(secret_key="sk_test_x", base_url="http://127.0.0.1:9")
    with pytest.raises(paysdk.ConfigurationError, match="fulfil"):
        VerifiedCallback(client, lookup=shop.lookup, ledger=paysdk.Ledger(tmp_path / "l.db"))
    client.close()

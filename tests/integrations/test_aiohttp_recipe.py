"""The callbacks guide's recipe for a framework paysdk has no helper for, in a real aiohttp.web
app: the client and ledger made on the app's loop (``cleanup_ctx``), ``verify_callback`` given
aiohttp's request, ``callback_response`` answering, through aiohttp's own test client."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

import paysdk
from paysdk.integrations.responses import CallbackResponse, callback_response, fulfilment_response
from paysdk.ledger import AmountOutOfRangeError
from paysdk.sandbox import Fault, Sandbox
from tests.support.merchant import (
    CALLBACK_CASES,
    CallbackCase,
    Order,
    Shop,
    assert_answered,
    service_failures,
)

pytestmark = pytest.mark.anyio

PATH = "/payments/callback"
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "callbacks.md"
CLIENT = web.AppKey("paysdk_client", paysdk.AsyncClient)
LEDGER = web.AppKey("paysdk_ledger", paysdk.AsyncLedger)


def answer(response: CallbackResponse) -> web.Response:
    return web.json_response(response.body, status=response.status_code, headers=response.headers)


def make_app(
    make_client: Callable[[], paysdk.AsyncClient], shop: Shop, ledger_path: Path | None = None
) -> web.Application:
    """The guide's app: GET only, the request itself read, one answer shape for every refusal."""

    async def paysdk_context(app: web.Application) -> AsyncIterator[None]:
        app[CLIENT] = make_client()
        if ledger_path is not None:
            app[LEDGER] = paysdk.AsyncLedger(ledger_path)
        yield
        await app[CLIENT].close()
        if ledger_path is not None:
            await app[LEDGER].close()

    async def ship(payment: paysdk.VerifiedPayment) -> None:
        await asyncio.sleep(0)  # let other callbacks reach the ledger meanwhile
        shop.fulfil(payment)

    async def payment_callback(request: web.Request) -> web.Response:
        if request.method != "GET":  # aiohttp's add_get routes HEAD here too
            return answer(CallbackResponse(405, "method_not_allowed"))
        try:
            payment = await request.app[CLIENT].verify_callback(request, lookup=shop.lookup)
        except paysdk.PaySDKError as error:
            if isinstance(error, paysdk.PaymentFailedError):
                shop.record_failure(error)
            return answer(callback_response(error))
        if LEDGER not in request.app:
            await ship(payment)
            return web.json_response({"status": "ok"})
        try:
            result = await request.app[LEDGER].fulfil_once(payment, ship)
        except (paysdk.LedgerError, AmountOutOfRangeError) as error:
            return answer(callback_response(error))
        refused = fulfilment_response(result)
        return web.json_response({"status": "ok"}) if refused is None else answer(refused)

    app = web.Application()
    app.cleanup_ctx.append(paysdk_context)
    app.router.add_get(PATH, payment_callback)
    return app


@pytest.fixture(params=["httpx", "aiohttp"])
def make_client(
    request: pytest.FixtureRequest, callback_sandbox: Sandbox
) -> Callable[[], paysdk.AsyncClient]:
    def make() -> paysdk.AsyncClient:
        return paysdk.AsyncClient(
            secret_key=callback_sandbox.secret_key,
            base_url=callback_sandbox.base_url,
            max_retries=0,
            http_backend=request.param,
        )

    return make


@pytest.mark.parametrize("case", CALLBACK_CASES, ids=[case.id for case in CALLBACK_CASES])
async def test_each_callback_is_answered_and_only_a_match_is_fulfilled(
    make_client: Callable[[], paysdk.AsyncClient],
    shop: Shop,
    callback_sandbox: Sandbox,
    case: CallbackCase,
) -> None:
    async with TestClient(TestServer(make_app(make_client, shop))) as browser:
        response = await browser.get(f"{PATH}?{case.query}")
        body = await response.json()
    assert_answered(case, shop, callback_sandbox, status_code=response.status, body=body)


async def test_a_reference_aiohttp_has_decoded_once_is_read_as_the_service_sent_it(
    make_client: Callable[[], paysdk.AsyncClient], callback_sandbox: Sandbox
) -> None:
    """aiohttp's ``query_string`` reads ``a%2541`` as ``a%41``, which parsed again is ``aA``."""
    callback_sandbox.add_payment("a%41", amount=500, currency="USD")
    shop = Shop(Order("a%41", amount=500, currency="USD"))
    async with TestClient(TestServer(make_app(make_client, shop))) as browser:
        response = await browser.get(f"{PATH}?reference=a%2541")
        assert (response.status, await response.json()) == (200, {"status": "ok"})
    assert shop.fulfilled == ["a%41"]


async def test_callbacks_at_once_are_fulfilled_once_through_the_ledger(
    make_client: Callable[[], paysdk.AsyncClient], shop: Shop, tmp_path: Path
) -> None:
    app = make_app(make_client, shop, tmp_path / "fulfilments.db")
    async with TestClient(TestServer(app)) as browser:
        responses = await asyncio.gather(
            *[browser.get(f"{PATH}?reference=order-1042") for _ in range(25)]
        )
        answers = {(response.status, (await response.json())["status"]) for response in responses}
    assert shop.fulfilled == ["order-1042"]
    assert answers <= {(200, "ok"), (200, "already_fulfilled"), (503, "in_progress")}


@service_failures(Fault(disconnect="before_response"))
async def test_the_service_failing_is_answered_503_with_the_wait_it_asked(
    make_client: Callable[[], paysdk.AsyncClient],
    shop: Shop,
    callback_sandbox: Sandbox,
    fault: Fault,
    wait: str | None,
) -> None:
    callback_sandbox.inject(fault)
    async with TestClient(TestServer(make_app(make_client, shop))) as browser:
        response = await browser.get(f"{PATH}?reference=order-1042")
        assert (response.status, await response.json()) == (503, {"status": "retry_later"})
        assert response.headers.get("Retry-After") == wait
    assert shop.fulfilled == []


def guides_view() -> str:
    """The aiohttp app of the callbacks guide's "Other frameworks", as the page shows it."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text[text.index("## Other frameworks") :]
    found = re.search(r"```python\n(# Fragment: an aiohttp.web app.*?)```", section, re.DOTALL)
    assert found is not None, "the guide's aiohttp app is gone from Other frameworks"
    return found[1]


async def test_the_guides_aiohttp_app_runs_as_written(
    shop: Shop, callback_sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's own code, given the merchant's order lookup and fulfilment: fulfils once under
    callbacks at once, refuses HEAD, and answers a failed payment and a spoofed one."""
    monkeypatch.setenv("PAYSDK_BASE_URL", callback_sandbox.base_url)
    monkeypatch.setenv("PAYSDK_SECRET_KEY", callback_sandbox.secret_key)
    monkeypatch.chdir(tmp_path)  # the guide's ledger is fulfilments.db, here
    merchant: dict[str, object] = {
        "__name__": "guide",
        "find_order": shop.lookup,
        "ship": shop.fulfil,
    }
    exec(compile(guides_view(), str(GUIDE), "exec"), merchant)  # noqa: S102 - the docs' own code
    app = merchant["app"]
    assert isinstance(app, web.Application)
    async with TestClient(TestServer(app)) as browser:
        await asyncio.gather(*[browser.get(f"{PATH}?reference=order-1042") for _ in range(20)])
        head = await browser.head(f"{PATH}?reference=order-1042")
        failed = await browser.get(f"{PATH}?reference=order-1043")
        spoofed = await browser.get(f"{PATH}?reference=order-0000")
        answers = [(failed.status, await failed.json()), (spoofed.status, await spoofed.json())]
    assert (head.status, head.headers.get("Allow")) == (405, "GET")
    assert answers == [(200, {"status": "failed"}), (404, {"status": "unknown_order"})]
    assert shop.fulfilled == ["order-1042"]

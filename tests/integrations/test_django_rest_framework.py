"""paysdk.integrations.django under Django REST framework's views, through DRF's test client:
an ``@api_view`` function view with the helper below it, an ``APIView`` with the helper on
``dispatch``, and a ``ViewSet``'s action routed by a router (docs/callbacks.md's DRF section)."""

from __future__ import annotations

import asyncio
import gc
import json
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.db.transaction import non_atomic_requests
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.test import override_settings
from django.urls import include, path
from django.utils.decorators import method_decorator

import paysdk
from paysdk.integrations.django import verified_callback
from paysdk.sandbox import Fault, Sandbox
from tests.support.django_site import configure, serve
from tests.support.fulfilment_rule import (
    REFERENCE,
    VIEW_ANSWERS,
    ViewAnswer,
    Views,
    answer_ids,
    check_the_rule,
)
from tests.support.merchant import (
    CALLBACK_CASES,
    CallbackCase,
    Shop,
    assert_answered,
    verify_requests,
)

configure()

# DRF reads Django's settings on import
from rest_framework.authentication import (  # noqa: E402
    BaseAuthentication,
    BasicAuthentication,
    SessionAuthentication,
)
from rest_framework.decorators import (  # noqa: E402
    action,
    api_view,
    authentication_classes,
    permission_classes,
)
from rest_framework.permissions import AllowAny  # noqa: E402
from rest_framework.request import Request  # noqa: E402
from rest_framework.response import Response  # noqa: E402
from rest_framework.routers import SimpleRouter  # noqa: E402
from rest_framework.settings import api_settings  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402
from rest_framework.views import APIView  # noqa: E402
from rest_framework.viewsets import ViewSet  # noqa: E402

KINDS = ["api_view", "APIView.dispatch", "APIView.get", "ViewSet.action"]
"""How a DRF view takes the decorator: below ``@api_view``; on an ``APIView``'s ``dispatch``
(``method_decorator(..., name="dispatch")`` on the class) or on its ``get``; on a ``ViewSet``'s
``@action`` (its ``method_decorator`` below ``@action``), routed by a ``SimpleRouter``."""

URLS = {
    "api_view": "/payments/callback",
    "APIView.dispatch": "/payments/callback",
    "APIView.get": "/payments/callback",
    "ViewSet.action": "/payments/callback/",  # the router's URL of the action
}

Answer = Callable[[paysdk.VerifiedPayment], HttpResponseBase]
"""What a test's view does with the payment, and the response it answers with."""
OnFailed = Callable[[Request, paysdk.PaymentFailedError], object]


def serve_drf(
    kind: str,
    client: paysdk.Client,
    shop: Shop,
    answer: Answer,
    *,
    ledger: paysdk.Ledger | None = None,
    on_failed: OnFailed | None = None,
    allow_any: bool = False,
    non_atomic: bool = False,
) -> str:
    """Serve a DRF callback view of ``kind`` that answers with ``answer``; its URL. With
    ``allow_any``, the view has ``AllowAny`` and no authentication classes, as the docs say;
    with ``non_atomic``, ``transaction.non_atomic_requests`` above ``@api_view`` (on a
    ``ViewSet``'s ``dispatch``)."""
    decorate = verified_callback(client, lookup=shop.lookup, ledger=ledger, on_failed=on_failed)
    if kind == "api_view":

        def payment_callback(request: Request, payment: paysdk.VerifiedPayment) -> Any:
            return answer(payment)

        view = decorate(payment_callback)
        if allow_any:
            view = authentication_classes([])(permission_classes([AllowAny])(view))
        routed = api_view(["GET"])(view)
        serve(path("payments/callback", non_atomic_requests(routed) if non_atomic else routed))
    elif kind.startswith("APIView"):

        class PaymentCallback(APIView):
            def get(self, request: Request, payment: paysdk.VerifiedPayment) -> HttpResponseBase:
                return answer(payment)

        if allow_any:
            PaymentCallback.permission_classes = [AllowAny]
            PaymentCallback.authentication_classes = []
        method = kind.removeprefix("APIView.")
        decorated = method_decorator(decorate, name=method)(PaymentCallback)
        serve(path("payments/callback", decorated.as_view()))
    else:

        class Payments(ViewSet):
            @action(detail=False, methods=["get"])
            @method_decorator(decorate)
            def callback(self, request: Request, payment: paysdk.VerifiedPayment) -> Any:
                return answer(payment)

        if allow_any:
            Payments.permission_classes = [AllowAny]
            Payments.authentication_classes = []
        if non_atomic:
            method_decorator(non_atomic_requests, name="dispatch")(Payments)
        router = SimpleRouter()
        router.register("payments", Payments, basename="payments")
        serve(path("", include(router.urls)))
    return URLS[kind]


def fulfilling(shop: Shop) -> Answer:
    def fulfil(payment: paysdk.VerifiedPayment) -> Response:
        shop.fulfil(payment)
        return Response({"status": "ok"})

    return fulfil


def recording_failures(shop: Shop) -> OnFailed:
    def record_failure(request: Request, error: paysdk.PaymentFailedError) -> None:
        shop.record_failure(error)

    return record_failure


@pytest.mark.parametrize("case", CALLBACK_CASES, ids=[case.id for case in CALLBACK_CASES])
@pytest.mark.parametrize("kind", KINDS)
def test_each_callback_to_a_drf_view_is_answered_and_only_a_match_is_fulfilled(
    client: paysdk.Client, shop: Shop, callback_sandbox: Sandbox, kind: str, case: CallbackCase
) -> None:
    url = serve_drf(kind, client, shop, fulfilling(shop), on_failed=recording_failures(shop))
    response = APIClient().get(f"{url}?{case.query}")
    body = json.loads(response.content)
    assert_answered(case, shop, callback_sandbox, status_code=response.status_code, body=body)


HELPERS_OWN = [case for case in CALLBACK_CASES if case.id != "good"]
"""Every case the helper answers itself (a ``JsonResponse``), not the view."""


@pytest.mark.parametrize("case", HELPERS_OWN, ids=[case.id for case in HELPERS_OWN])
@pytest.mark.parametrize("kind", KINDS)
def test_the_helpers_own_answers_are_sent_as_they_are_whatever_drf_negotiates(
    client: paysdk.Client, shop: Shop, callback_sandbox: Sandbox, kind: str, case: CallbackCase
) -> None:
    """Asked for HTML (DRF's browsable API), the helper's answers stay its JSON: DRF renders
    only its own ``Response``."""
    url = serve_drf(kind, client, shop, fulfilling(shop), on_failed=recording_failures(shop))
    response = APIClient().get(f"{url}?{case.query}", HTTP_ACCEPT="text/html")
    assert response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert_answered(case, shop, callback_sandbox, status_code=response.status_code, body=body)


@pytest.mark.parametrize("kind", KINDS)
def test_the_helpers_503_and_its_retry_after_are_sent_as_they_are_whatever_drf_negotiates(
    client: paysdk.Client, shop: Shop, callback_sandbox: Sandbox, kind: str
) -> None:
    callback_sandbox.inject(Fault.rate_limited(retry_after=3600))
    url = serve_drf(kind, client, shop, fulfilling(shop))
    response = APIClient().get(f"{url}?reference={REFERENCE}", HTTP_ACCEPT="text/html")
    assert (response.status_code, json.loads(response.content)) == (503, {"status": "retry_later"})
    assert (response["Content-Type"], response["Retry-After"]) == ("application/json", "3600")
    assert shop.fulfilled == []


# --- permissions ---------------------------------------------------------------------------------

AUTHENTICATIONS: dict[str, tuple[list[type[BaseAuthentication]], int]] = {
    # DRF's default: its first class asks for no credentials (no WWW-Authenticate), so 403
    "session-first": ([SessionAuthentication, BasicAuthentication], 403),
    "basic": ([BasicAuthentication], 401),
}


@pytest.fixture(params=list(AUTHENTICATIONS))
def authenticated_api(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[int]:
    """``IsAuthenticated`` in ``REST_FRAMEWORK``'s ``DEFAULT_PERMISSION_CLASSES`` (and the
    authentication classes of the param) for this test: the status DRF refuses a request with
    no credentials with. ``APIView`` reads the defaults when DRF is imported, as a project's
    settings are there first: they are read again into it here."""
    classes, status = AUTHENTICATIONS[request.param]
    rest = {
        "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
        "DEFAULT_AUTHENTICATION_CLASSES": [f"{c.__module__}.{c.__qualname__}" for c in classes],
    }
    with override_settings(REST_FRAMEWORK=rest):
        monkeypatch.setattr(APIView, "permission_classes", api_settings.DEFAULT_PERMISSION_CLASSES)
        monkeypatch.setattr(
            APIView, "authentication_classes", api_settings.DEFAULT_AUTHENTICATION_CLASSES
        )
        yield status


NOT_LOGGED_IN = {"detail": "Authentication credentials were not provided."}


@pytest.mark.parametrize("kind", KINDS)
def test_under_a_global_is_authenticated_every_callback_is_refused(
    client: paysdk.Client,
    shop: Shop,
    callback_sandbox: Sandbox,
    tmp_path: Path,
    authenticated_api: int,
    kind: str,
) -> None:
    """The service is never logged in: DRF refuses the callback before the view runs. With the
    helper on an ``APIView``'s ``dispatch``, DRF refuses inside the ledger's action, which
    records the refusal with DRF's ``detail``; below ``@api_view`` or on an action, the helper
    never runs (nothing verified, nothing recorded)."""
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        ledger.create_table()
        url = serve_drf(kind, client, shop, fulfilling(shop), ledger=ledger)
        response = APIClient().get(f"{url}?reference={REFERENCE}")
        row = ledger.row(REFERENCE)
    assert (response.status_code, json.loads(response.content)) == (
        authenticated_api,
        NOT_LOGGED_IN,
    )
    assert shop.fulfilled == []
    if kind == "APIView.dispatch":
        assert row is not None
        assert (row.state, row.reason) == (
            "refused",
            f"the callback view answered {authenticated_api}: "
            '{"detail":"Authentication credentials were not provided."}',
        )
    else:
        assert (row, verify_requests(callback_sandbox)) == (None, [])


@pytest.mark.parametrize("credentials", [None, "Basic !!!"], ids=["none", "malformed"])
@pytest.mark.parametrize("kind", KINDS)
def test_under_a_global_is_authenticated_allow_any_without_authentication_fulfils(
    client: paysdk.Client,
    shop: Shop,
    tmp_path: Path,
    authenticated_api: int,
    kind: str,
    credentials: str | None,
) -> None:
    """``AllowAny`` and no authentication classes: the callback is verified and fulfilled, and
    whatever ``Authorization`` header comes with it is not read (DRF's authentication refuses a
    malformed one even under ``AllowAny``)."""
    browser = APIClient()
    if credentials is not None:
        browser.credentials(HTTP_AUTHORIZATION=credentials)
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        url = serve_drf(kind, client, shop, fulfilling(shop), ledger=ledger, allow_any=True)
        response = browser.get(f"{url}?reference={REFERENCE}")
        row = ledger.row(REFERENCE)
    assert (response.status_code, json.loads(response.content)) == (200, {"status": "ok"})
    assert shop.fulfilled == [REFERENCE]
    assert row is not None and row.state == "fulfilled"


# --- the fulfilment rule -------------------------------------------------------------------------


@pytest.mark.parametrize("answer", VIEW_ANSWERS, ids=answer_ids())
@pytest.mark.parametrize("kind", KINDS)
def test_a_drf_responses_status_is_recorded_by_the_fulfilment_rule(
    client: paysdk.Client, shop: Shop, tmp_path: Path, kind: str, answer: ViewAnswer
) -> None:
    """``Response(body, status=...)`` is read by its status, as any response: a 4xx is a
    refusal whose reason quotes the body, a 5xx leaves the payment to the retry."""
    views = Views(answer)

    def respond(payment: paysdk.VerifiedPayment) -> Response:
        shown = views.next()
        return Response(shown.body, status=shown.status_code)

    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        url = serve_drf(kind, client, shop, respond, ledger=ledger)
        browser = APIClient(raise_request_exception=False)

        def deliver() -> tuple[int, bytes]:
            response = browser.get(f"{url}?reference={REFERENCE}")
            return response.status_code, response.content

        check_the_rule(answer, views, deliver, lambda: ledger.row(REFERENCE))


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"status": "out of stock"}, '{"status":"out of stock"}'),
        (["out of stock", 3], '["out of stock",3]'),
        (
            {"detail": "x" * 180 + "{key}"},
            ('{"detail":"' + "x" * 180 + "<secret key>")[:200] + "...",
        ),
    ],
    ids=["dict", "list", "key-at-the-cut"],
)
@pytest.mark.parametrize("kind", KINDS)
def test_a_refusing_drf_responses_reason_quotes_its_data(
    client: paysdk.Client,
    shop: Shop,
    callback_sandbox: Sandbox,
    tmp_path: Path,
    kind: str,
    data: object,
    reason: str,
) -> None:
    """Under ``@api_view`` or from an action, DRF chooses the ``Response``'s renderer after the
    view returns, so it cannot be rendered for the reason yet (recorded as ``(not rendered
    yet)``): the reason quotes its ``data`` as JSON, the key blotted out and the excerpt bounded
    as any reason's; on ``dispatch``, DRF's JSON rendering reads the same. DRF renders the
    answer as usual."""
    if isinstance(data, dict):
        data = {name: value.format(key=callback_sandbox.secret_key) for name, value in data.items()}
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        url = serve_drf(
            kind, client, shop, lambda payment: Response(data, status=409), ledger=ledger
        )
        answer = APIClient().get(f"{url}?reference={REFERENCE}")
        row = ledger.row(REFERENCE)
    assert (answer.status_code, json.loads(answer.content)) == (409, data)
    assert row is not None
    assert (row.state, row.reason) == ("refused", f"the callback view answered 409: {reason}")


# --- where the decorator goes ---------------------------------------------------------------------


@pytest.mark.parametrize("position", ["below", "above"])
def test_on_faileds_response_is_rendered_by_drf_with_the_helper_below_api_view(
    client: paysdk.Client, shop: Shop, position: str
) -> None:
    """Below ``@api_view``, the ``Response`` ``on_failed`` returns goes back to DRF, which
    renders it; above, it goes to Django unrendered (no renderer chosen): Django's 500."""

    def answer_failure(request: Request, error: paysdk.PaymentFailedError) -> Response:
        return Response({"status": "failed-own"})

    decorate = verified_callback(client, lookup=shop.lookup, on_failed=answer_failure)

    def payment_callback(request: Request, payment: paysdk.VerifiedPayment) -> Response:
        return Response({"status": "ok"})

    if position == "below":
        view: Callable[..., HttpResponseBase] = api_view(["GET"])(decorate(payment_callback))
    else:
        view = decorate(api_view(["GET"])(payment_callback))
    serve(path("payments/callback", view))
    browser = APIClient(raise_request_exception=False)
    good, failed = (browser.get(f"/payments/callback?reference={r}") for r in SPOOFED)
    assert (good.status_code, json.loads(good.content)) == (200, {"status": "ok"})
    if position == "below":
        assert (failed.status_code, json.loads(failed.content)) == (200, {"status": "failed-own"})
    else:
        assert failed.status_code == 500


SPOOFED = [REFERENCE, "order-1043"]
"""The shop's paid order, and its order the service says failed."""


def test_an_async_view_under_api_view_is_drfs_500(callback_sandbox: Sandbox, shop: Shop) -> None:
    """DRF calls its views synchronously: an ``async def`` view under ``@api_view`` hands DRF a
    coroutine, which it refuses (the coroutine is closed here, never run: it is not awaited)."""
    async_client = paysdk.AsyncClient(
        secret_key=callback_sandbox.secret_key, base_url=callback_sandbox.base_url
    )

    @api_view(["GET"])  # type: ignore[type-var]  # DRF's stubs refuse a coroutine's view too
    @verified_callback(async_client, lookup=shop.lookup)
    async def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> Response:
        return Response({"status": "ok"})

    serve(path("payments/callback", payment_callback))
    try:
        with pytest.raises(AssertionError, match=r"received a `?<class 'coroutine'>"):
            APIClient().get(f"/payments/callback?reference={REFERENCE}")
    finally:
        # type(), not isinstance(), which would set up the lazy objects it meets
        for unawaited in [o for o in gc.get_objects() if type(o) is types.CoroutineType]:
            if unawaited.cr_code.co_name == "callback_view" and unawaited.cr_frame is not None:
                unawaited.close()
        asyncio.run(async_client.close())
    assert verify_requests(callback_sandbox) == []


# --- under ATOMIC_REQUESTS ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "non_atomic", "atomic"),
    [
        ("api_view", False, True),
        ("api_view", True, False),
        ("APIView.dispatch", False, False),
        ("ViewSet.action", False, True),
        ("ViewSet.action", True, False),
    ],
    ids=["api_view", "api_view-non_atomic", "APIView", "ViewSet", "ViewSet-non_atomic"],
)
def test_under_atomic_requests_the_view_django_routes_to_decides(
    client: paysdk.Client,
    shop: Shop,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    non_atomic: bool,
    atomic: bool,
) -> None:
    """Django makes the view it routes to atomic: DRF's under ``@api_view`` or a router, which
    ``transaction.non_atomic_requests`` above ``@api_view`` (or on the ``ViewSet``'s
    ``dispatch``) leaves out of the request's transaction; an ``APIView``'s with the helper on
    ``dispatch`` is the helper's, non-atomic."""
    monkeypatch.setitem(settings.DATABASES["default"], "ATOMIC_REQUESTS", True)
    inside: list[bool] = []

    def record(payment: paysdk.VerifiedPayment) -> Response:
        inside.append(connection.in_atomic_block)
        return Response({"status": "ok"})

    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        url = serve_drf(kind, client, shop, record, ledger=ledger, non_atomic=non_atomic)
        response = APIClient().get(f"{url}?reference={REFERENCE}")
        connection.close()
    assert (response.status_code, inside) == (200, [atomic])

"""paysdk.integrations.flask through Flask's test client, verifying against the sandbox."""

from __future__ import annotations

import contextlib
import decimal
import functools
import io
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import flask
import pytest
from flask.testing import FlaskClient
from flask.views import MethodView, View
from werkzeug.test import TestResponse

import paysdk
from paysdk.integrations.flask import verified_callback
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
T = TypeVar("T")


@pytest.fixture(params=["def", "async def"])
def kind(request: pytest.FixtureRequest) -> str:
    """How the merchant wrote the view: Flask runs an ``async def`` one too (``ensure_sync``)."""
    kind: str = request.param
    return kind


def written_as(kind: str, view: Callable[..., T]) -> Callable[..., T | Awaitable[T]]:
    """``view``, or the same view as an ``async def``, as a merchant may write it."""
    if kind == "def":
        return view

    @functools.wraps(view)
    async def async_view(*args: Any, **kwargs: Any) -> T:
        return view(*args, **kwargs)

    return async_view


@pytest.fixture
def browser(client: paysdk.Client, shop: Shop, kind: str) -> FlaskClient:
    """A Flask app whose callback view, lookup and ``on_failed`` (written as ``kind`` says)
    fulfil through ``shop``, and its test client."""
    app = flask.Flask(__name__)

    def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        shop.fulfil(payment)
        return {"status": "ok"}

    verified = verified_callback(
        client,
        lookup=written_as(kind, shop.lookup),
        on_failed=written_as(kind, shop.record_failure),
    )
    app.get(PATH)(verified(written_as(kind, payment_callback)))
    return app.test_client()


@pytest.mark.parametrize("case", CALLBACK_CASES, ids=[case.id for case in CALLBACK_CASES])
def test_each_callback_is_answered_and_only_a_match_is_fulfilled(
    browser: FlaskClient, shop: Shop, callback_sandbox: Sandbox, case: CallbackCase
) -> None:
    response = browser.get(f"{PATH}?{case.query}")
    body = response.get_json()
    assert_answered(case, shop, callback_sandbox, status_code=response.status_code, body=body)


def test_a_repeated_callback_is_fulfilled_once(browser: FlaskClient, shop: Shop) -> None:
    answers = [browser.get(f"{PATH}?reference=order-1042") for _ in range(2)]
    assert [response.status_code for response in answers] == [200, 200]
    assert shop.fulfilled == ["order-1042"]
    assert shop.deliveries == 2


@service_failures(Fault.server_error(500))
def test_the_service_failing_asks_for_a_retry_after_the_wait_it_asked(
    browser: FlaskClient, shop: Shop, callback_sandbox: Sandbox, fault: Fault, wait: str | None
) -> None:
    callback_sandbox.inject(fault)
    response = browser.get(f"{PATH}?reference=order-1042")
    assert (response.status_code, response.get_json()) == (503, {"status": "retry_later"})
    assert response.headers.get("Retry-After") == wait
    assert shop.fulfilled == []
    retried = browser.get(f"{PATH}?reference=order-1042")
    assert retried.status_code == 200
    assert shop.fulfilled == ["order-1042"]


def test_a_stalled_service_is_answered_retry_later_by_the_clients_deadline(
    client: paysdk.Client, shop: Shop, callback_sandbox: Sandbox
) -> None:
    """With a ``deadline`` (docs/callbacks.md), a stalled service holds a callback no longer
    than that, so the helper's 503 answers it, not the server's own request time limit
    (gunicorn's 30 s kills a sync worker: the service would get a 500, or nothing)."""
    callback_sandbox.inject(Fault.timeout(3))
    app = flask.Flask(__name__)

    @app.get(PATH)
    @verified_callback(client.with_options(deadline=0.5, max_retries=2), lookup=shop.lookup)
    def payment_callback(payment: paysdk.VerifiedPayment) -> str:
        raise AssertionError("an unverified payment must not reach the view")

    response = app.test_client().get(f"{PATH}?reference=order-1042")
    assert (response.status_code, response.get_json()) == (503, {"status": "retry_later"})
    assert verify_requests(callback_sandbox) == ["/payment/order-1042"]  # no retry past it


def test_on_failed_may_answer_instead(client: paysdk.Client, shop: Shop) -> None:
    app = flask.Flask(__name__)

    @app.get(PATH)
    @verified_callback(client, lookup=shop.lookup, on_failed=lambda error: ("noted", 202))
    def payment_callback(payment: paysdk.VerifiedPayment) -> str:
        raise AssertionError("a failed payment must not reach the view")

    response = app.test_client().get(f"{PATH}?reference=order-1043")
    assert (response.status_code, response.text) == (202, "noted")


def test_a_dict_on_failed_returns_is_sent_as_json(client: paysdk.Client, shop: Shop) -> None:
    """As a view's dict is: Flask sends it as JSON, 200 (as FastAPI does too)."""
    app = flask.Flask(__name__)

    @app.get(PATH)
    @verified_callback(client, lookup=shop.lookup, on_failed=lambda e: {"noted": e.reference})
    def payment_callback(payment: paysdk.VerifiedPayment) -> str:
        raise AssertionError("a failed payment must not reach the view")

    response = app.test_client().get(f"{PATH}?reference=order-1043")
    assert (response.status_code, response.json) == (200, {"noted": "order-1043"})


def test_url_values_reach_the_view(client: paysdk.Client, shop: Shop) -> None:
    app = flask.Flask(__name__)

    @app.get("/shops/<int:shop_id>/callback")
    @verified_callback(client, lookup=shop.lookup)
    def payment_callback(payment: paysdk.VerifiedPayment, shop_id: int) -> dict[str, object]:
        return {"shop": shop_id, "reference": payment.reference}

    response = app.test_client().get("/shops/7/callback?reference=order-1042")
    assert response.get_json() == {"shop": 7, "reference": "order-1042"}


@pytest.mark.parametrize("base", ["MethodView", "View"])
def test_a_class_based_view_lists_the_decorator_in_its_decorators(
    client: paysdk.Client, shop: Shop, tmp_path: Path, base: str
) -> None:
    """Flask's own way to decorate a class-based view, ``decorators = [...]``, applies the helper
    to ``as_view()``'s function, which takes keywords alone: the payment reaches ``get`` (or
    ``dispatch_request``) by keyword, with the URL's values, in a blueprint with a prefix."""
    ledger = paysdk.Ledger(tmp_path / "ledger.db")
    decorators = [verified_callback(client, lookup=shop.lookup, ledger=ledger)]

    def fulfil(payment: paysdk.VerifiedPayment, shop_id: int) -> dict[str, object]:
        shop.fulfil(payment)
        return {"status": "ok", "shop": shop_id}

    class ByMethod(MethodView):
        def get(self, payment: paysdk.VerifiedPayment, shop_id: int) -> dict[str, object]:
            return fulfil(payment, shop_id)

    class ByDispatch(View):
        methods = ("GET",)

        def dispatch_request(  # type: ignore[override]  # as Flask's docs write it
            self, payment: paysdk.VerifiedPayment, shop_id: int
        ) -> dict[str, object]:
            return fulfil(payment, shop_id)

    view_class: type[View] = ByMethod if base == "MethodView" else ByDispatch
    view_class.decorators = decorators
    payments = flask.Blueprint("payments", __name__)
    payments.add_url_rule("/<int:shop_id>/callback", view_func=view_class.as_view("callback"))
    app = flask.Flask(__name__)
    app.register_blueprint(payments, url_prefix="/payments")
    browser = app.test_client()
    with ledger:
        answers = [
            browser.get(f"/payments/7/callback?reference={reference}")
            for reference in ("order-1042", "order-1042", "order-1043", "order-0000")
        ]
    assert [(answer.status_code, answer.get_json()) for answer in answers] == [
        (200, {"status": "ok", "shop": 7}),
        (200, {"status": "already_fulfilled"}),
        (200, {"status": "failed"}),
        (404, {"status": "unknown_order"}),
    ]
    assert (shop.fulfilled, shop.deliveries) == (["order-1042"], 1)


def test_the_decorator_on_a_class_based_views_method_is_refused_with_what_to_write(
    client: paysdk.Client, shop: Shop
) -> None:
    """Written on ``get`` itself, the helper would be called with the view in the payment's
    place (every good callback a 500): refused when applied, naming ``decorators``."""
    with pytest.raises(TypeError, match=r"is a method .*decorators = \[verified_callback"):

        class PaymentCallback(MethodView):
            @verified_callback(client, lookup=shop.lookup)  # type: ignore[arg-type]
            def get(self, payment: paysdk.VerifiedPayment) -> dict[str, str]:  # type: ignore[misc]
                return {"status": "ok"}


def test_an_async_client_is_refused() -> None:
    async_client = paysdk.AsyncClient(secret_key="sk_test_x", base_url="http://127.0.0.1:9")
    with pytest.raises(paysdk.ConfigurationError, match=r"paysdk\.Client"):
        verified_callback(async_client, lookup=dict[str, object]().get)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["def", "async def"])
def test_a_view_called_without_flasks_request_says_what_to_write_instead(
    client: paysdk.Client, shop: Shop, kind: str
) -> None:
    """Quart calls a view with its own request, not Flask's: every callback was Flask's
    ``Working outside of request context``, which named neither paysdk nor what to do."""

    def view(payment: paysdk.VerifiedPayment) -> str:
        shop.fulfil(payment)
        return "ok"

    async def async_view(payment: paysdk.VerifiedPayment) -> str:
        return view(payment)

    payment_callback = verified_callback(client, lookup=shop.lookup)(
        view if kind == "def" else async_view
    )
    with pytest.raises(paysdk.ConfigurationError, match=r"Quart.*verify_callback in the view"):
        payment_callback()
    assert shop.fulfilled == []


@pytest.mark.parametrize("state", ["closed", "unconfigured"])
def test_a_malformed_callback_is_a_400_whatever_the_clients_state(
    shop: Shop, monkeypatch: pytest.MonkeyPatch, state: str
) -> None:
    """A callback without a reference is the sender's mistake (or a probe): answered 400 by a
    closed client or one made without a key and base URL too, whose well-formed callbacks are
    answered 500 ``error``, as every real callback is until it is fixed."""
    monkeypatch.delenv("PAYSDK_SECRET_KEY", raising=False)
    monkeypatch.delenv("PAYSDK_BASE_URL", raising=False)
    if state == "closed":
        client = paysdk.Client(secret_key="sk_test_closed", base_url="http://127.0.0.1:9")
        client.close()
    else:
        client = paysdk.Client()
    app = flask.Flask(__name__)

    @app.get(PATH)
    @verified_callback(client, lookup=shop.lookup)
    def payment_callback(payment: paysdk.VerifiedPayment) -> str:
        raise AssertionError("nothing is verified")

    browser = app.test_client()
    malformed = browser.get(f"{PATH}?order=order-1042")
    well_formed = browser.get(f"{PATH}?reference=order-1042")
    assert (malformed.status_code, malformed.get_json()) == (400, {"status": "invalid_callback"})
    assert (well_formed.status_code, well_formed.get_json()) == (500, {"status": "error"})


# --- with a fulfilment ledger ------------------------------------------------------------------


def test_with_a_ledger_the_view_runs_once_and_a_duplicate_is_already_fulfilled(
    client: paysdk.Client, shop: Shop, tmp_path: Path, kind: str
) -> None:
    app = flask.Flask(__name__)
    ledger = paysdk.Ledger(tmp_path / "ledger.db")

    def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        shop.fulfil(payment)
        return {"status": "ok"}

    verified = verified_callback(client, lookup=shop.lookup, ledger=ledger)
    app.get(PATH)(verified(written_as(kind, payment_callback)))
    browser = app.test_client()
    with ledger:
        answers = [browser.get(f"{PATH}?reference=order-1042") for _ in range(2)]
        mismatch = browser.get(f"{PATH}?reference=order-2002")
        refused = ledger.row("order-2002")  # recorded refused, never claimed
        assert refused is not None and (refused.state, refused.attempts) == ("refused", 0)

    assert [(r.status_code, r.get_json()) for r in answers] == [
        (200, {"status": "ok"}),
        (200, {"status": "already_fulfilled"}),
    ]
    assert (shop.fulfilled, shop.deliveries) == (["order-1042"], 1)
    assert (mismatch.status_code, mismatch.get_json()) == (409, {"status": "mismatch"})


def test_with_a_ledger_a_delivery_during_anothers_fulfilment_is_asked_to_retry(
    client: paysdk.Client, shop: Shop, tmp_path: Path
) -> None:
    app = flask.Flask(__name__)
    ledger = paysdk.Ledger(tmp_path / "ledger.db")

    @app.get(PATH)
    @verified_callback(client, lookup=shop.lookup, ledger=ledger)
    def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        shop.fulfil(payment)
        return {"status": "ok"}

    during: list[TestResponse] = []
    with ledger:
        ledger.fulfil_once(
            client.verify("order-1042"),
            lambda p: during.append(app.test_client().get(f"{PATH}?reference=order-1042")),
        )
    assert [(r.status_code, r.get_json()) for r in during] == [(503, {"status": "in_progress"})]
    assert shop.deliveries == 0


@pytest.mark.parametrize(
    ("first", "second"), [("lagos-1", "Lagos-1"), ("lagos-1", ""), ("", "lagos-1")]
)
def test_a_second_deployment_labelling_the_key_otherwise_never_ships_a_payment_again(
    client: paysdk.Client, shop: Shop, tmp_path: Path, first: str, second: str
) -> None:
    """Two deployments of one shop share the ledger, their clients of one key labelled
    otherwise (a label in another case, left out, or added): the second's callback for the
    payment the first shipped is answered 500 before its view runs, not shipped again."""

    def deployment(label: str) -> FlaskClient:
        app = flask.Flask(__name__)

        @app.get(PATH)
        @verified_callback(client.with_options(account=label), lookup=shop.lookup, ledger=ledger)
        def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
            shop.fulfil(payment)
            return {"status": "ok"}

        return app.test_client()

    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        deployments = [deployment(label) for label in (first, second)]
        answers = [each.get(f"{PATH}?reference=order-1042") for each in deployments]
        assert ledger.row("order-1042", account=second) is None

    assert [(r.status_code, r.get_json()) for r in answers] == [
        (200, {"status": "ok"}),
        (500, {"status": "error"}),
    ]
    assert (shop.fulfilled, shop.deliveries) == (["order-1042"], 1)


# --- the fulfilment rule: only a success is recorded as fulfilled ------------------------------


def ledger_app(
    client: paysdk.Client, shop: Shop, ledger: paysdk.Ledger, views: Views, kind: str = "def"
) -> flask.Flask:
    """A Flask app whose callback view (written as ``kind`` says) answers what ``views`` says,
    through ``ledger``."""
    app = flask.Flask(__name__)

    def payment_callback(payment: paysdk.VerifiedPayment) -> tuple[dict[str, str], int]:
        answer = views.next()
        return answer.body, answer.status_code

    verified = verified_callback(client=client, lookup=shop.lookup, ledger=ledger)
    app.get(PATH)(verified(written_as(kind, payment_callback)))
    return app


def delivery(browser: FlaskClient) -> Deliver:
    def deliver() -> tuple[int, bytes]:
        response = browser.get(f"{PATH}?reference={REFERENCE}")
        return response.status_code, response.data

    return deliver


@pytest.mark.parametrize("answer", VIEW_ANSWERS, ids=answer_ids())
def test_a_views_answer_is_recorded_by_the_fulfilment_rule(
    client: paysdk.Client, shop: Shop, tmp_path: Path, answer: ViewAnswer, kind: str
) -> None:
    views = Views(answer)
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        deliver = delivery(ledger_app(client, shop, ledger, views, kind).test_client())
        check_the_rule(answer, views, deliver, lambda: ledger.row(REFERENCE))


@pytest.mark.parametrize("error", raised_by_views(), ids=RAISED_IDS)
def test_a_view_that_raises_leaves_the_payment_unfulfilled(
    client: paysdk.Client, shop: Shop, tmp_path: Path, error: Exception, kind: str
) -> None:
    views = Views(error)
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        deliver = delivery(ledger_app(client, shop, ledger, views, kind).test_client())
        check_a_raising_view_is_released(
            views, deliver, lambda: ledger.row(REFERENCE), tmp_path / "ledger.db"
        )


def test_a_lookup_may_raise_unknown_order_error_to_say_there_is_no_such_order(
    client: paysdk.Client, shop: Shop, callback_sandbox: Sandbox, tmp_path: Path
) -> None:
    """As returning None says it: the 404 that stops the service calling, nothing recorded."""

    def lookup(reference: str) -> object:
        raise paysdk.UnknownOrderError(f"no order {reference}", reference=reference)

    app = flask.Flask(__name__)
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:

        @app.get(PATH)
        @verified_callback(client, lookup=lookup, on_failed=shop.record_failure, ledger=ledger)
        def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
            raise AssertionError("no order, no view")

        answer = app.test_client().get(f"{PATH}?reference={REFERENCE}")
        row = ledger.row(REFERENCE)
    assert (answer.status_code, answer.json) == (404, {"status": "unknown_order"})
    assert (row, shop.failed, callback_sandbox.requests) == (None, [], [])


LOOK_ALIKES = [
    ("\u043erder-1042", "'\\u043erder-1042'"),  # a Cyrillic o: reads as order-1042
    ("order-1042\u3164", "'order-1042\\u3164'"),  # a Hangul filler: drawn as nothing
]


@pytest.mark.parametrize(("reference", "quoted"), LOOK_ALIKES, ids=["cyrillic-o", "filler"])
@pytest.mark.parametrize("expects", ["no-order", "no-payment"])
def test_a_callback_for_a_look_alike_of_an_order_is_logged_so_as_to_tell_it_apart(
    client: paysdk.Client,
    shop: Shop,
    caplog: pytest.LogCaptureFixture,
    reference: str,
    quoted: str,
    expects: str,
) -> None:
    """A spoofed reference drawn like a real order's: the line that refuses it (no such order,
    or no such payment) quotes it in ASCII, so it never reads as the order it imitates."""

    def an_order_of_every_reference(reference: str) -> paysdk.Expected:
        return paysdk.Expected(amount=500, currency="NGN")

    lookup = shop.lookup if expects == "no-order" else an_order_of_every_reference
    app = flask.Flask(__name__)

    @app.get(PATH)
    @verified_callback(client, lookup=lookup)
    def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        raise AssertionError("nothing to fulfil")

    with caplog.at_level(logging.INFO, logger="paysdk.callbacks"):
        answer = app.test_client().get(PATH, query_string={"reference": reference})
    status = "unknown_order" if expects == "no-order" else "unknown_payment"
    assert (answer.status_code, answer.json) == (404, {"status": status})
    (line,) = [r.getMessage() for r in caplog.records if r.name == "paysdk.callbacks"]
    assert f"the reference {quoted}" in line
    assert reference not in line
    assert caplog.records[-1].__dict__["paysdk_reference"] == reference  # the field keeps it


MALFORMED_LOOK_ALIKES = [
    ("\u043erder-1042\u00a0", "'\\u043erder-1042\\xa0'"),  # a Cyrillic o, a no-break space
    ("\u3164order-1042\u200b", "'\\u3164order-1042\\u200b'"),  # a filler, a zero-width space
]


@pytest.mark.parametrize(
    ("reference", "quoted"), MALFORMED_LOOK_ALIKES, ids=["cyrillic-o", "filler"]
)
def test_a_malformed_look_alike_of_an_order_is_logged_so_as_to_tell_it_apart(
    client: paysdk.Client, shop: Shop, caplog: pytest.LogCaptureFixture, reference: str, quoted: str
) -> None:
    """A reference refused as malformed is quoted in ASCII too, as a refused order's is: its
    excerpt showed it as it was sent, so the line read as one about the order it imitates."""
    app = flask.Flask(__name__)

    @app.get(PATH)
    @verified_callback(client, lookup=shop.lookup)
    def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        raise AssertionError("nothing to fulfil")

    with caplog.at_level(logging.INFO, logger="paysdk.callbacks"):
        answer = app.test_client().get(PATH, query_string={"reference": reference})
    assert (answer.status_code, answer.json) == (400, {"status": "invalid_callback"})
    (line,) = [r.getMessage() for r in caplog.records if r.name == "paysdk.callbacks"]
    assert f"({quoted})" in line
    assert line.isascii()


def test_a_lookup_that_raises_a_paysdk_error_of_its_own_is_no_verdict(
    client: paysdk.Client, tmp_path: Path
) -> None:
    shop = ShopOfLinkedOrders()
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        deliver = delivery(ledger_app(client, shop, ledger, Views()).test_client())
        check_a_raising_lookup_is_no_verdict(shop, deliver, tmp_path / "ledger.db")


def test_a_view_that_forgets_to_return_a_response_is_fulfilled_once(
    client: paysdk.Client, shop: Shop, tmp_path: Path
) -> None:
    """A view that ships and returns nothing Flask can answer ran to its end: the payment is
    recorded fulfilled, Flask says what the view returned, and the retry does not ship again."""
    app = flask.Flask(__name__)
    app.testing = True  # the view's error reaches the test, not only Flask's 500 page
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:

        @app.get(PATH)
        @verified_callback(client, lookup=shop.lookup, ledger=ledger)
        def payment_callback(payment: paysdk.VerifiedPayment) -> Any:
            shop.fulfil(payment)

        browser = app.test_client()
        with pytest.raises(TypeError, match="did not return a valid response"):
            browser.get(f"{PATH}?reference={REFERENCE}")
        retry = browser.get(f"{PATH}?reference={REFERENCE}")
        row = ledger.row(REFERENCE)
    assert (retry.status_code, retry.get_json()) == (200, {"status": "already_fulfilled"})
    assert (shop.fulfilled, shop.deliveries) == ([REFERENCE], 1)
    assert row is not None and row.state == "fulfilled"


def test_a_refusal_whose_body_is_all_escapes_is_recorded_with_a_short_reason(
    client: paysdk.Client, shop: Shop, tmp_path: Path
) -> None:
    """A 4xx body of invisible characters, each quoted as a six-character escape: the reason
    stays short enough for the ledger to record it."""
    app = flask.Flask(__name__)
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:

        @app.get(PATH)
        @verified_callback(client, lookup=shop.lookup, ledger=ledger)
        def payment_callback(payment: paysdk.VerifiedPayment) -> tuple[str, int]:
            return "sold out" + "\u200b" * 300, 409

        answer = app.test_client().get(f"{PATH}?reference={REFERENCE}")
        row = ledger.row(REFERENCE)
    assert answer.status_code == 409
    assert row is not None and row.state == "refused" and row.reason is not None
    assert row.reason.startswith("the callback view answered 409: sold out\\u200b")
    assert len(row.reason) < 300


@pytest.mark.parametrize("case", CALLBACK_CASES, ids=[case.id for case in CALLBACK_CASES])
def test_with_a_ledger_refusals_of_confirmed_payments_are_recorded(
    client: paysdk.Client, shop: Shop, tmp_path: Path, case: CallbackCase
) -> None:
    views = Views()
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        ledger.create_table()
        app = ledger_app(client, shop, ledger, views)
        response = app.test_client().get(f"{PATH}?{case.query}")
    assert (response.status_code, response.get_json()) == (
        case.status_code,
        {"status": case.status},
    )
    rows = [row for row in ledger_rows(tmp_path / "ledger.db") if row[1] != "fulfilled"]
    assert_refusal_recorded(case, rows)


def test_a_refusal_the_ledger_cannot_record_is_answered_as_usual(
    client: paysdk.Client, shop: Shop, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    unreachable = paysdk.Ledger(tmp_path / "no-such-directory" / "ledger.db", timeout=1)
    browser = ledger_app(client, shop, unreachable, Views()).test_client()
    with caplog.at_level(logging.ERROR, logger="paysdk.callbacks"):
        failed = browser.get(f"{PATH}?reference=order-1043")
        mismatch = browser.get(f"{PATH}?reference=order-2001")
    assert (failed.status_code, failed.get_json()) == (200, {"status": "failed"})
    assert (mismatch.status_code, mismatch.get_json()) == (409, {"status": "mismatch"})
    unrecorded = [r.getMessage() for r in caplog.records if "could not record" in r.getMessage()]
    assert len(unrecorded) == 2
    assert "order-1043" in unrecorded[0]


def test_a_fulfilment_that_ran_but_was_not_recorded_is_not_run_again(
    client: paysdk.Client, shop: Shop, tmp_path: Path
) -> None:
    """The view ran, then the ledger's database stayed locked: answered 200 ``unrecorded``
    (no retry is invited), and a later delivery does not run the view again."""
    path = tmp_path / "ledger.db"
    holders: list[sqlite3.Connection] = []
    app = flask.Flask(__name__)
    with paysdk.Ledger(path, timeout=0.2) as ledger:

        @app.get(PATH)
        @verified_callback(client, lookup=shop.lookup, ledger=ledger)
        def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
            shop.fulfil(payment)
            holder = sqlite3.connect(path, isolation_level=None)
            holder.execute("BEGIN EXCLUSIVE")  # the ledger cannot record the fulfilment
            holders.append(holder)
            return {"status": "ok"}

        browser = app.test_client()
        first = browser.get(f"{PATH}?reference={REFERENCE}")
        holders[0].rollback()
        holders[0].close()
        again = browser.get(f"{PATH}?reference={REFERENCE}")
        row = ledger.row(REFERENCE)
    assert (first.status_code, first.get_json()) == (200, {"status": "unrecorded"})
    assert (again.status_code, again.get_json()) == (503, {"status": "in_progress"})
    assert row is not None and row.state == "claimed"
    assert shop.deliveries == 1


# --- only GET is a callback ----------------------------------------------------------------------

NOT_GET = ["HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"]


@pytest.mark.parametrize("routed", ["for every method", "with app.get"])
def test_only_get_verifies_runs_the_view_and_fulfils(
    client: paysdk.Client, shop: Shop, callback_sandbox: Sandbox, tmp_path: Path, routed: str
) -> None:
    """Flask routes HEAD to a GET view; a route may take other methods too. Each is answered
    405 with ``Allow: GET`` before anything is verified, run or recorded."""
    app = flask.Flask(__name__)
    ledger = paysdk.Ledger(tmp_path / "ledger.db")
    runs: list[str] = []
    every = routed == "for every method"
    route = app.route(PATH, methods=["GET", *NOT_GET]) if every else app.get(PATH)

    @route
    @verified_callback(client, lookup=shop.lookup, ledger=ledger)
    def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        runs.append(payment.reference)
        shop.fulfil(payment)
        return {"status": "ok"}

    browser = app.test_client()
    with ledger:
        ledger.create_table()
        for method in NOT_GET:
            response = browser.open(f"{PATH}?reference=order-1042", method=method)
            assert response.status_code == 405, method
            if every or method == "HEAD":  # else Flask's router refuses it first, as it would
                assert response.headers["Allow"] == "GET", method
        assert (runs, shop.fulfilled, ledger.row("order-1042")) == ([], [], None)
        assert verify_requests(callback_sandbox) == []
        assert browser.post(f"{PATH}?reference=order-1042").get_json() == (
            {"status": "method_not_allowed"} if every else None
        )
        fulfilled = browser.get(f"{PATH}?reference=order-1042")
        row = ledger.row("order-1042")
    assert (fulfilled.status_code, fulfilled.get_json()) == (200, {"status": "ok"})
    assert runs == ["order-1042"]
    assert row is not None and row.state == "fulfilled"


def test_an_order_amount_of_thousands_of_digits_is_a_mismatch_recorded_in_a_short_reason(
    client: paysdk.Client, callback_sandbox: Sandbox, ledger_url: str
) -> None:
    """An order's amount is the merchant's int, of any size: one Python will not write as text
    is answered 409 ``mismatch`` (not Flask's HTML 500) and recorded refused, saying so."""
    callback_sandbox.add_payment("order-huge-order", amount=500, currency="NGN")
    shop = Shop(Order("order-huge-order", -(10**5000), "NGN"))
    app = flask.Flask(__name__)
    with paysdk.Ledger(ledger_url) as ledger:

        @app.get(PATH)
        @verified_callback(client, lookup=shop.lookup, ledger=ledger)
        def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
            shop.fulfil(payment)
            return {"status": "ok"}

        answer = app.test_client().get(f"{PATH}?reference=order-huge-order")
        row = ledger.row("order-huge-order")

    assert (answer.status_code, answer.get_json()) == (409, {"status": "mismatch"})
    assert shop.fulfilled == []
    assert row is not None and row.state == "refused"
    assert row.reason == (
        "paid, but not for this order: amount 500 instead of an integer of over 4,300 digits"
    )


def test_an_order_decimal_longer_than_any_answer_is_an_error_to_fix_in_the_order(
    client: paysdk.Client, callback_sandbox: Sandbox
) -> None:
    """An order amount read from a numeric column is a ``Decimal``, of any exponent: one longer
    than any amount an answer carries is a 500 ``error`` to fix in the order (``int()`` of
    ``Decimal("1E+99999999")`` would take many minutes)."""
    callback_sandbox.add_payment("order-decimal", amount=500, currency="NGN")
    orders = {"order-decimal": {"amount": decimal.Decimal("1E+4300"), "currency": "NGN"}}
    app = flask.Flask(__name__)
    ran: list[str] = []

    @app.get(PATH)
    @verified_callback(client, lookup=orders.get)
    def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        ran.append(payment.reference)
        return {"status": "ok"}

    answer = app.test_client().get(f"{PATH}?reference=order-decimal")
    assert (answer.status_code, answer.get_json()) == (500, {"status": "error"})
    assert ran == []


def test_an_order_decimal_with_decimal_places_is_never_matched_to_a_hundredth_of_it(
    client: paysdk.Client, callback_sandbox: Sandbox, caplog: pytest.LogCaptureFixture
) -> None:
    """An order of 2500.00 naira read from a ``DecimalField(decimal_places=2)`` and a payment of
    2500 kobo: the order's amount is refused as whole units, a 500 ``error`` to fix in the
    order whose log names minor units, and the hundredth paid is never fulfilled."""
    callback_sandbox.add_payment("order-major", amount=2500, currency="NGN")
    orders = {"order-major": {"amount": decimal.Decimal("2500.00"), "currency": "NGN"}}
    app = flask.Flask(__name__)
    ran: list[str] = []

    @app.get(PATH)
    @verified_callback(client, lookup=orders.get)
    def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        ran.append(payment.reference)
        return {"status": "ok"}

    with caplog.at_level(logging.ERROR, logger="paysdk.callbacks"):
        answer = app.test_client().get(f"{PATH}?reference=order-major")
    assert (answer.status_code, answer.get_json()) == (500, {"status": "error"})
    assert ran == []
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert "Decimal('2500.00'): written with decimal places" in logged
    assert "minor units (kobo, cents)" in logged


def test_an_order_read_as_a_sqlite3_row_is_checked_by_its_columns(
    client: paysdk.Client, callback_sandbox: Sandbox, tmp_path: Path
) -> None:
    """A lookup over the standard library's SQLite, ``row_factory = sqlite3.Row``: the row's
    ``amount`` and ``currency`` columns (named in any case, as SQLite reads them) are the
    order's, so a match is fulfilled and a short payment answered 409 ``mismatch``, not 500
    ``error`` for a row said to have neither."""
    callback_sandbox.add_payment("order-row", amount=2500, currency="NGN")
    callback_sandbox.add_payment("order-row-short", amount=25, currency="NGN")
    with contextlib.closing(sqlite3.connect(tmp_path / "shop.db")) as db:
        db.row_factory = sqlite3.Row
        db.execute(
            "CREATE TABLE orders (reference TEXT PRIMARY KEY, Amount INTEGER, CURRENCY TEXT)"
        )
        db.executemany(
            "INSERT INTO orders VALUES (?, ?, ?)",
            [("order-row", 2500, "NGN"), ("order-row-short", 2500, "NGN")],
        )

        def find_order(reference: str) -> sqlite3.Row | None:
            query = "SELECT * FROM orders WHERE reference = ?"
            row: sqlite3.Row | None = db.execute(query, (reference,)).fetchone()
            return row

        app = flask.Flask(__name__)
        ran: list[str] = []

        @app.get(PATH)
        @verified_callback(client, lookup=find_order)
        def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
            ran.append(payment.reference)
            return {"status": "ok"}

        browser = app.test_client()
        paid = browser.get(f"{PATH}?reference=order-row")
        short = browser.get(f"{PATH}?reference=order-row-short")
    assert (paid.status_code, paid.get_json()) == (200, {"status": "ok"})
    assert (short.status_code, short.get_json()) == (409, {"status": "mismatch"})
    assert ran == ["order-row"]


def test_an_amount_beyond_64_bits_is_refused_for_good_and_never_asked_to_retry(
    client: paysdk.Client, callback_sandbox: Sandbox, ledger_url: str
) -> None:
    """The service's integers are unbounded: a payment the ledger cannot record is answered 200
    ``amount_out_of_range`` (not Flask's HTML 500, nor 503 ``retry_later``) on SQLite and
    PostgreSQL alike, and recorded refused; one that mismatches its order is refused as usual."""
    huge = 2**64 + 1
    for reference in ("order-huge", "order-huge-mismatched"):
        callback_sandbox.add_payment(reference, amount=huge, currency="NGN", status="COMPLETED")
    shop = Shop(Order("order-huge", huge, "NGN"), Order("order-huge-mismatched", 2500, "NGN"))
    app = flask.Flask(__name__)
    with paysdk.Ledger(ledger_url) as ledger:

        @app.get(PATH)
        @verified_callback(client, lookup=shop.lookup, ledger=ledger)
        def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
            shop.fulfil(payment)
            return {"status": "ok"}

        browser = app.test_client()
        matched = [browser.get(f"{PATH}?reference=order-huge") for _ in range(2)]
        mismatched = browser.get(f"{PATH}?reference=order-huge-mismatched")
        rows = ledger.rows(["order-huge", "order-huge-mismatched"])

    assert [(r.status_code, r.get_json()) for r in matched] == [
        (200, {"status": "amount_out_of_range"})
    ] * 2
    assert (mismatched.status_code, mismatched.get_json()) == (409, {"status": "mismatch"})
    assert shop.fulfilled == []
    assert {reference: (row.state, row.amount) for reference, row in rows.items()} == {
        "order-huge": ("refused", 0),
        "order-huge-mismatched": ("refused", 0),
    }
    for row in rows.values():
        assert row.reason is not None and f"its amount, {huge}, is beyond" in row.reason


def test_a_currency_of_a_look_alike_letter_is_refused_with_a_reason_that_tells_it_apart(
    client: paysdk.Client, callback_sandbox: Sandbox, tmp_path: Path
) -> None:
    """A payment in ``KES`` spelt with a Kelvin sign (U+212A) for an order in ``KES`` is a
    mismatch, and the reason the ledger records (what ``paysdk ledger list`` shows a person)
    shows the sign as an escape, never ``currency 'KES' instead of 'KES'``."""
    callback_sandbox.add_payment("order-kelvin", amount=700, currency="\u212aES")
    shop = Shop(Order("order-kelvin", 700, "KES"))
    with paysdk.Ledger(tmp_path / "ledger.db") as ledger:
        ledger.create_table()
        app = flask.Flask(__name__)

        @app.get(PATH)
        @verified_callback(client, lookup=shop.lookup, ledger=ledger)
        def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
            shop.fulfil(payment)
            return {"status": "ok"}

        response = app.test_client().get(f"{PATH}?reference=order-kelvin")
        row = ledger.row("order-kelvin")
    assert (response.status_code, response.get_json()) == (409, {"status": "mismatch"})
    assert shop.fulfilled == []
    assert row is not None and row.state == "refused"
    assert row.reason == "paid, but not for this order: currency '\\u212aES' instead of 'KES'"


def test_two_accounts_callbacks_of_one_reference_through_one_ledger_each_fulfil_once(
    tmp_path: Path,
) -> None:
    """A platform: each account's callback view verifies with its labelled client, and both
    share one ledger; each account's ``order-1`` is fulfilled, once."""
    shipped: list[tuple[str, str, int]] = []
    with (
        contextlib.ExitStack() as clients,
        Sandbox() as lagos,
        Sandbox() as abuja,
        paysdk.Ledger(tmp_path / "ledger.db") as ledger,
    ):
        app = flask.Flask(__name__)
        for account, service, amount in (("lagos-1", lagos, 700), ("abuja-2", abuja, 500)):
            service.add_payment("order-1", amount=amount, currency="NGN", status="COMPLETED")
            client = paysdk.Client(
                secret_key=service.secret_key,
                base_url=service.base_url,
                max_retries=0,
                account=account,
            )
            clients.enter_context(client)
            shop = Shop(Order("order-1", amount, "NGN"))

            def ship(payment: paysdk.VerifiedPayment) -> dict[str, str]:
                shipped.append((payment.account, payment.reference, payment.amount))
                return {"status": "ok"}

            view = verified_callback(client, lookup=shop.lookup, ledger=ledger)(ship)
            app.add_url_rule(f"/{account}/callback", endpoint=account, view_func=view)
        browser = app.test_client()
        for _ in range(2):  # each callback comes twice
            for account in ("lagos-1", "abuja-2"):
                answer = browser.get(f"/{account}/callback?reference=order-1")
                assert answer.status_code == 200, (account, answer.get_json())
        rows = [ledger.row("order-1", account=account) for account in ("lagos-1", "abuja-2")]
    assert shipped == [("lagos-1", "order-1", 700), ("abuja-2", "order-1", 500)]
    assert all(row is not None and row.fulfilled for row in rows)


def test_a_key_echoed_by_the_service_is_blotted_out_of_the_reasons_the_ledger_records(
    client: paysdk.Client, callback_sandbox: Sandbox, ledger_url: str
) -> None:
    """A server or proxy echoing the ``Authorization`` header's key into a currency, a reference
    or what the view's refusal quotes never writes the key into the ledger (whose rows
    ``paysdk ledger list``, the Django admin and reconcile reports show): a reason reads
    ``<secret key>``, blotted before the excerpt is cut, so no part of it is left either; a
    payment of another reference than the one asked for is recorded under none."""
    key = callback_sandbox.secret_key
    callback_sandbox.add_payment("order-echo-currency", amount=700, currency=key)
    callback_sandbox.add_payment("order-echo-reference", amount=700, currency="KES")
    callback_sandbox.add_payment("order-echo-body", amount=700, currency="KES")
    record = callback_sandbox.get_payment("order-echo-reference")
    assert record is not None
    answered = {**record.verify_shape(), "reference": f"order-{key}"}
    callback_sandbox.inject(
        Fault.json(200, {"status": True, "message": "ok", "data": answered}),
        path="/payment/order-echo-reference",
    )
    references = ["order-echo-currency", "order-echo-reference", "order-echo-body"]
    shop = Shop(*(Order(reference, 700, "KES") for reference in references))
    with paysdk.Ledger(ledger_url) as ledger:
        ledger.create_table()
        app = flask.Flask(__name__)

        @app.get(PATH)
        @verified_callback(client, lookup=shop.lookup, ledger=ledger)
        def payment_callback(payment: paysdk.VerifiedPayment) -> tuple[str, int]:
            return "x" * 180 + key, 422  # the key straddles where the excerpt is cut

        browser = app.test_client()
        statuses = [browser.get(f"{PATH}?reference={ref}").status_code for ref in references]
        rows = ledger.rows([*references, f"order-{key}"])
    assert statuses == [409, 409, 422]
    assert sorted((r.reference, r.state, r.reason) for r in rows.values()) == [  # none echoed
        (
            "order-echo-body",
            "refused",
            "the callback view answered 422: " + "x" * 180 + "<secret key>",
        ),
        (
            "order-echo-currency",
            "refused",
            "paid, but not for this order: currency '<secret key>' instead of 'KES'",
        ),
    ]


@pytest.mark.parametrize(
    ("method", "query", "reference", "outcome"),
    [
        ("GET", "reference=order-0000", "order-0000", "UnknownOrderError"),
        ("GET", "reference=order-2001", "order-2001", "PaymentMismatchError"),
        ("GET", "reference=order-3000", "order-3000", "PaymentNotFoundError"),
        ("GET", "ref=order-1042", None, "InvalidCallbackError"),
        ("HEAD", "reference=order-1042", None, None),
    ],
)
def test_a_refused_callbacks_line_has_the_fields_of_every_paysdk_line(
    browser: FlaskClient, method: str, query: str, reference: str | None, outcome: str | None
) -> None:
    # a formatter naming a field, as the docs invite, formats the line instead of dropping it
    handler = logging.StreamHandler(io.StringIO())
    handler.setFormatter(logging.Formatter("%(paysdk_reference)s %(paysdk_outcome)s|%(message)s"))
    logger = logging.getLogger("paysdk")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)  # setLevel, not the attribute: it clears the loggers' caches
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(logging, "raiseExceptions", False)  # a lost line is not printed
            browser.open(f"{PATH}?{query}", method=method)
    finally:
        logger.setLevel(level)
        logger.removeHandler(handler)
    (line,) = handler.stream.getvalue().splitlines()
    assert line.startswith(f"{reference} {outcome}|callback answered ")

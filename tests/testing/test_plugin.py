"""The pytest plugin as a merchant meets it: their own Flask and FastAPI apps, tested with the kit.

Each test writes a merchant project (an app with a callback handler built on paysdk's
integration helpers, and its test file using only the kit's fixtures) and runs pytest on it
with pytester. The plugin is found through the ``pytest11`` entry point of the installed paysdk,
exactly as in a merchant's virtualenv; nothing is registered by hand.
"""

from __future__ import annotations

import importlib.metadata
import textwrap

import pytest

from tests.support.pytester import import_all_of_paysdk, run_inprocess

pytest_plugins = ["pytester"]
import_all_of_paysdk()  # before any in-process run: tests/support/pytester.py says why

ORDERS = """
ORDERS = {
    "order-1": {"amount": 5000, "currency": "NGN"},
    "order-1042": {"amount": 2500000, "currency": "NGN"},
}
"""

FLASK_SHOP = (
    '''
"""A Flask shop: fulfils an order once its payment callback is verified."""
import flask

import paysdk
from paysdk.integrations.flask import verified_callback
'''
    + ORDERS
    + """

def create_app(client: paysdk.Client) -> flask.Flask:
    app = flask.Flask(__name__)
    app.config.update(FULFILLED=[], FAILED=[])

    def record_failure(error: paysdk.PaymentFailedError) -> None:
        app.config["FAILED"].append(error.reference)

    @app.get("/payments/callback")
    @verified_callback(client, lookup=ORDERS.get, on_failed=record_failure)
    def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        if payment.reference not in app.config["FULFILLED"]:  # callbacks may come twice
            app.config["FULFILLED"].append(payment.reference)
        return {"status": "ok"}

    return app
"""
)

FLASK_TESTS = """
import paysdk
import pytest
from paysdk.sandbox import COMPLETED_REFERENCE
from paysdk.testing import Fault

from flask_shop import create_app

CALLBACK = "/payments/callback"


@pytest.fixture
def app(paysdk_client):
    return create_app(paysdk_client)


def test_paid(app, paysdk_api, paysdk_callback):
    paysdk_api.add_payment("order-1", amount=5000, currency="NGN")
    response = paysdk_callback.send(app, CALLBACK, "order-1")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})
    assert app.config["FULFILLED"] == ["order-1"]


def test_failed(app, paysdk_api, paysdk_callback):
    paysdk_api.add_payment("order-1", amount=5000, currency="NGN", success=False)
    response = paysdk_callback.send(app, CALLBACK, "order-1")
    assert (response.status_code, response.json()) == (200, {"status": "failed"})
    assert (app.config["FULFILLED"], app.config["FAILED"]) == ([], ["order-1"])


def test_amount_mismatch(app, paysdk_api, paysdk_callback):
    paysdk_api.add_payment("order-1", amount=100, currency="NGN")
    response = paysdk_callback.send(app, CALLBACK, "order-1")
    assert (response.status_code, response.json()) == (409, {"status": "mismatch"})
    assert app.config["FULFILLED"] == []


def test_unknown_order_never_reaches_the_service(app, paysdk_api, paysdk_callback):
    response = paysdk_callback.send(app, CALLBACK, "order-999")
    assert (response.status_code, response.json()) == (404, {"status": "unknown_order"})
    assert paysdk_api.calls == []


def test_duplicate_callback_fulfils_once(app, paysdk_api, paysdk_callback):
    paysdk_api.add_payment("order-1", amount=5000, currency="NGN")
    answers = [paysdk_callback.send(app, CALLBACK, "order-1").status_code for _ in range(2)]
    assert answers == [200, 200]
    assert app.config["FULFILLED"] == ["order-1"]
    assert paysdk_api.verified_references() == ["order-1", "order-1"]


def test_service_down_asks_for_a_retry(app, paysdk_api, paysdk_callback):
    paysdk_api.add_payment("order-1", amount=5000, currency="NGN")
    paysdk_api.inject(Fault.server_error(503), times=None)
    response = paysdk_callback.send(app, CALLBACK, "order-1")
    assert (response.status_code, response.json()) == (503, {"status": "retry_later"})
    assert app.config["FULFILLED"] == []
    assert len(paysdk_api.calls) == 3 and len(paysdk_api.waits) == 2  # retried, never slept


def test_against_the_real_sandbox(paysdk_sandbox, paysdk_callback):
    with paysdk.Client() as client:  # PAYSDK_BASE_URL and PAYSDK_SECRET_KEY name the sandbox
        app = create_app(client)
        response = paysdk_callback.send(app, CALLBACK, COMPLETED_REFERENCE)
    assert (response.status_code, app.config["FULFILLED"]) == (200, [COMPLETED_REFERENCE])
    assert [r.path for r in paysdk_sandbox.requests] == ["/payment/" + COMPLETED_REFERENCE]
"""

FASTAPI_SHOP = (
    '''
"""A FastAPI shop on paysdk.AsyncClient: fulfils an order once its callback is verified."""
from fastapi import FastAPI

import paysdk
from paysdk.integrations.fastapi import verified_callback
'''
    + ORDERS
    + """

def create_app(client: paysdk.AsyncClient) -> FastAPI:
    app = FastAPI()
    app.state.fulfilled, app.state.failed = [], []

    async def find_order(reference: str) -> dict | None:
        return ORDERS.get(reference)

    async def record_failure(error: paysdk.PaymentFailedError) -> None:
        app.state.failed.append(error.reference)

    @app.get("/payments/callback")
    @verified_callback(client, lookup=find_order, on_failed=record_failure)
    async def payment_callback(payment: paysdk.VerifiedPayment) -> dict:
        if payment.reference not in app.state.fulfilled:
            app.state.fulfilled.append(payment.reference)
        return {"status": "ok"}

    return app
"""
)

FASTAPI_TESTS = """
import pytest
from paysdk.testing import Fault

from fastapi_shop import create_app

CALLBACK = "/payments/callback"


@pytest.fixture
def app(paysdk_api):
    return create_app(paysdk_api.async_client())


def test_paid(app, paysdk_api, paysdk_callback):
    paysdk_api.add_payment("order-1", amount=5000, currency="NGN")
    response = paysdk_callback.send(app, CALLBACK, "order-1")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})
    assert app.state.fulfilled == ["order-1"]


def test_failed(app, paysdk_api, paysdk_callback):
    paysdk_api.add_payment("order-1", amount=5000, currency="NGN", success=False)
    response = paysdk_callback.send(app, CALLBACK, "order-1")
    assert (response.status_code, response.json()) == (200, {"status": "failed"})
    assert (app.state.fulfilled, app.state.failed) == ([], ["order-1"])


def test_currency_mismatch(app, paysdk_api, paysdk_callback):
    paysdk_api.add_payment("order-1", amount=5000, currency="USD")
    response = paysdk_callback.send(app, CALLBACK, "order-1")
    assert (response.status_code, response.json()) == (409, {"status": "mismatch"})


def test_unknown_order(app, paysdk_api, paysdk_callback):
    response = paysdk_callback.send(app, CALLBACK, "order-999")
    assert (response.status_code, response.json()) == (404, {"status": "unknown_order"})
    assert paysdk_api.calls == []


def test_duplicate_callback(app, paysdk_api, paysdk_callback):
    paysdk_api.add_payment("order-1", amount=5000, currency="NGN")
    for _ in range(2):
        assert paysdk_callback.send(app, CALLBACK, "order-1").status_code == 200
    assert app.state.fulfilled == ["order-1"]


def test_service_down(app, paysdk_api, paysdk_callback):
    paysdk_api.add_payment("order-1", amount=5000, currency="NGN")
    paysdk_api.inject(Fault.timeout(), times=None)
    response = paysdk_callback.send(app, CALLBACK, "order-1")
    assert (response.status_code, response.json()) == (503, {"status": "retry_later"})
    assert app.state.fulfilled == []


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_from_an_async_test(app, paysdk_api, paysdk_callback):
    paysdk_api.add_payment("order-1", amount=5000, currency="NGN")
    response = await paysdk_callback.asend(app, CALLBACK, "order-1")
    assert response.json() == {"status": "ok"}
"""


def test_the_plugin_is_registered_by_the_pytest11_entry_point() -> None:
    (entry,) = [e for e in importlib.metadata.entry_points(group="pytest11") if e.name == "paysdk"]
    assert entry.value == "paysdk.testing.plugin"


@pytest.mark.parametrize(
    ("how", "args"),
    [
        ("conftest", ()),
        ("option", ("-p", "paysdk.testing.plugin")),
        ("environment", ()),
        ("option and conftest", ("-p", "paysdk.testing.plugin")),
    ],
)
def test_naming_the_plugin_by_its_module_as_well_loads_it_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, how: str, args: tuple[str, ...]
) -> None:
    """pytest's docs name a plugin in ``conftest.py`` by its module; the entry point has loaded
    that module already, as ``paysdk``."""
    if "conftest" in how:
        pytester.makeconftest('pytest_plugins = ["paysdk.testing.plugin"]')
    if how == "environment":
        monkeypatch.setenv("PYTEST_PLUGINS", "paysdk.testing.plugin")
    pytester.makepyfile(
        test_named="""
        def test_the_fake_answers(paysdk_api, paysdk_client):
            paysdk_api.add_payment("order-7")
            assert paysdk_client.verify("order-7").succeeded
        """
    )
    run_inprocess(pytester, "-p", "no:cacheprovider", *args).assert_outcomes(passed=1)


def test_a_conftest_naming_the_plugin_loads_it_when_the_entry_point_is_turned_off(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest('pytest_plugins = ["paysdk.testing.plugin"]')
    pytester.makepyfile(
        test_named="def test_the_fake(paysdk_api):\n    assert paysdk_api.running\n"
    )
    run_inprocess(pytester, "-p", "no:cacheprovider", "-p", "no:paysdk").assert_outcomes(passed=1)


def test_a_flask_merchant_tests_every_callback_outcome_with_the_kit(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(flask_shop=FLASK_SHOP, test_flask_shop=FLASK_TESTS)
    result = run_inprocess(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=7)


def test_a_fastapi_merchant_tests_every_callback_outcome_with_the_kit(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(fastapi_shop=FASTAPI_SHOP, test_fastapi_shop=FASTAPI_TESTS)
    result = run_inprocess(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=7)


def test_the_fixtures_are_listed_for_a_merchant(pytester: pytest.Pytester) -> None:
    result = run_inprocess(pytester, "--fixtures", "-p", "no:cacheprovider")
    listed = result.stdout.str()
    for name in ("paysdk_api", "paysdk_client", "paysdk_sandbox", "paysdk_callback"):
        assert f"{name} -- " in listed or f"{name} [" in listed


def test_the_sandbox_is_shared_by_the_session_and_reset_for_each_test(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_shared=textwrap.dedent(
            """
            import paysdk
            from paysdk.testing import Fault

            PORTS = set()

            def test_first_changes_it(paysdk_sandbox):
                PORTS.add(paysdk_sandbox.port)
                paysdk_sandbox.add_payment("order-new")
                paysdk_sandbox.inject(Fault.server_error(), times=None)

            def test_second_sees_it_fresh(paysdk_sandbox):
                PORTS.add(paysdk_sandbox.port)
                assert len(PORTS) == 1
                assert paysdk_sandbox.get_payment("order-new") is None
                with paysdk.Client(max_retries=0) as client:
                    assert client.verify("order-1042").succeeded
            """
        )
    )
    run_inprocess(pytester, "-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_a_test_asking_for_the_fake_and_the_sandbox_is_told_to_choose(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_both=textwrap.dedent(
            """
            import paysdk

            def test_fake_first(paysdk_api, paysdk_sandbox):
                paysdk.Client(max_retries=0).verify("order-1042")

            def test_sandbox_first(paysdk_sandbox, paysdk_client):
                paysdk.Client(max_retries=0).verify("order-1042")
            """
        )
    )
    result = run_inprocess(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(errors=2)
    result.stdout.re_match_lines(
        [r".*ConfigurationError: test_fake_first uses both paysdk_api .* and paysdk_sandbox"]
    )
    result.stdout.no_fnmatch_line("*not mocked*")


HEAVY = [
    "respx",
    "paysdk.sandbox",
    "paysdk.testing._mock_api",
    "paysdk.testing._mock_clients",
    "paysdk.testing._mock_requests",
    "paysdk.testing._callbacks",
]


def test_the_plugin_imports_nothing_heavy_until_a_fixture_is_used(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_startup=textwrap.dedent(
            f"""
            import sys

            HEAVY = {HEAVY!r}

            def test_collected_and_run_without_the_kit(request):
                assert request.config.pluginmanager.hasplugin("paysdk")
                assert [name for name in HEAVY if name in sys.modules] == []

            def test_then_a_fixture_loads_it(paysdk_api):
                assert "respx" in sys.modules and paysdk_api.running
            """
        )
    )
    # A fresh interpreter, so this process's imports do not count; respx's own plugin is off
    # because it imports respx itself.
    result = pytester.runpytest_subprocess("-p", "no:respx", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_without_respx_the_plugin_loads_and_paysdk_api_names_the_extra(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest("import sys\nsys.modules['respx'] = None  # as if not installed\n")
    pytester.makepyfile(
        test_no_respx=textwrap.dedent(
            """
            from paysdk.testing import verified_payment

            def test_factories_work(paysdk_callback):
                assert verified_payment().succeeded

            def test_the_fake_explains(paysdk_api):
                pass
            """
        )
    )
    result = pytester.runpytest_subprocess("-p", "no:respx", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.re_match_lines(
        [r".*ConfigurationError: .* pip install 'python-paysdk\[testing\]'"]
    )


def test_paysdk_log_writes_each_line_to_the_stderr_of_the_test_that_logs_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAYSDK_LOG", "debug")
    pytester.makepyfile(
        test_logged=textwrap.dedent(
            """
            import paysdk

            def call(paysdk_api, reference):
                paysdk_api.add_payment(reference)
                with paysdk.Client() as client:
                    client.verify(reference)

            def test_the_first_client_turns_the_log_on(paysdk_api, capsys):
                call(paysdk_api, "order-1")
                assert "paysdk: GET https://api.paysdk.test/payment/order-1 -> 200" in (
                    capsys.readouterr().err
                )

            def test_a_later_test_sees_its_own_lines(paysdk_api, capsys):
                call(paysdk_api, "order-2")
                err = capsys.readouterr().err
                assert "Logging error" not in err
                assert "paysdk: GET https://api.paysdk.test/payment/order-2 -> 200" in err
            """
        )
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=2)


def test_a_merchants_lenient_respx_router_started_first_leaves_the_fakes_host_to_the_fake(
    pytester: pytest.Pytester,
) -> None:
    """respx asks its routers in the order they started; one with ``assert_all_mocked=False``
    answers every request it has no route for (an empty 200), the fake's too."""
    pytester.makepyfile(
        test_respx_too=textwrap.dedent(
            """
            import httpx
            import pytest

            import paysdk

            @pytest.fixture(autouse=True)
            def no_real_http(respx_mock):
                respx_mock.get("https://geo.example/ip").respond(json={"ip": "127.0.0.1"})

            @pytest.mark.respx(assert_all_mocked=False, assert_all_called=False)
            def test_both_answer(paysdk_api):
                paysdk_api.add_payment("order-1")
                with paysdk.Client() as client:
                    assert client.verify("order-1").succeeded
                assert httpx.get("https://geo.example/ip").json() == {"ip": "127.0.0.1"}
                assert paysdk_api.verified_references() == ["order-1"]
            """
        )
    )
    run_inprocess(pytester, "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_request_the_fake_refuses_says_why_and_what_to_do(pytester: pytest.Pytester) -> None:
    """The fake refuses other hosts so that no test reaches a network; a merchant who never
    used respx is told that the refusal is the fake's, and how to get an answer."""
    pytester.makepyfile(
        test_refused=textwrap.dedent(
            """
            import httpx

            import paysdk
            from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox

            def test_another_service(paysdk_api):
                httpx.get("https://shipping.example/rates")

            def test_a_sandbox_too(paysdk_api):
                with (
                    Sandbox() as sandbox,
                    paysdk.Client(
                        base_url=sandbox.base_url, secret_key=sandbox.secret_key, max_retries=0
                    ) as client,
                ):
                    client.verify(COMPLETED_REFERENCE)
            """
        )
    )
    result = run_inprocess(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    for host in ("https://shipping.example/rates", "http://127.0.0.1:*/payment/order-1042"):
        result.stdout.fnmatch_lines(
            [
                f"E * RESPX: *{host}* not mocked! paysdk_api*answers only https://api.paysdk.test*"
                "respx_mock*paysdk_sandbox in a test without paysdk_api*"
            ]
        )


DJANGO_CONFTEST = """
import django
from django.conf import settings
from django.core.management import call_command

settings.configure(
    SECRET_KEY="not-secret",
    INSTALLED_APPS=["paysdk.integrations.django"],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
    ROOT_URLCONF="django_shop",
    ALLOWED_HOSTS=["testserver"],
)
django.setup()
call_command("migrate", verbosity=0)
"""

DJANGO_SHOP = """
import paysdk
from django.http import JsonResponse
from django.urls import path
from paysdk.integrations.django import DjangoLedger, verified_callback

client = paysdk.Client()


@verified_callback(client, lookup={"order-1": {"amount": 5000, "currency": "NGN"}}.get,
                   ledger=DjangoLedger())
def payment_callback(request, payment):
    return JsonResponse({"status": "ok"})


urlpatterns = [path("payments/callback", payment_callback)]
"""

DJANGO_TESTS = """
import pytest
from django.test import TestCase


class CallbackTests(TestCase):
    @pytest.fixture(autouse=True)
    def fake(self, paysdk_api):
        self.api = paysdk_api

    def test_paid(self):
        self.api.add_payment("order-1", amount=5000, currency="NGN")
        response = self.client.get("/payments/callback", {"reference": "order-1"})
        assert response.status_code == 200
"""


def test_a_django_testcase_whose_callback_uses_a_ledger_is_told_to_use_transactiontestcase(
    pytester: pytest.Pytester,
) -> None:
    """``django.test.TestCase`` runs each test inside ``transaction.atomic``, where a
    ``DjangoLedger`` refuses to run: the callback answers 500, and the log says why."""
    pytest.importorskip("django")
    pytester.makeconftest(DJANGO_CONFTEST)
    pytester.makepyfile(django_shop=DJANGO_SHOP, test_django_shop=DJANGO_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*DjangoLedger cannot run inside transaction.atomic*django.test.TestCase*"
            "TransactionTestCase*"
        ]
    )


ORM_SHOP = """
import paysdk
from django.http import JsonResponse
from django.urls import path
from paysdk.integrations.django import verified_callback
from paysdk.integrations.django.models import Fulfilment

client = paysdk.Client()


def lookup(reference):  # the shop's order table, here rows the test makes
    row = Fulfilment.objects.filter(reference=reference).first()
    return None if row is None else {"amount": row.amount, "currency": row.currency}


@verified_callback(client, lookup=lookup)
def payment_callback(request, payment):
    return JsonResponse({"status": "ok"})


urlpatterns = [path("payments/callback", payment_callback)]
"""

ORM_TESTS = """
import pytest
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.wsgi import WSGIHandler
from django.test import TestCase
from paysdk.integrations.django.models import Fulfilment


class CallbackTests(TestCase):
    @pytest.fixture(autouse=True)
    def kit(self, paysdk_api, paysdk_callback):
        self.api, self.callback = paysdk_api, paysdk_callback

    def pay(self, handler):
        Fulfilment.objects.create(reference="order-1", state="ignored", attempts=0, amount=5000,
                                  currency="NGN", claimed_at="2026-01-01T00:00:00Z")
        self.api.add_payment("order-1", amount=5000, currency="NGN")
        response = self.callback.send(handler(), "/payments/callback", "order-1")
        assert (response.status_code, response.json()) == (200, {"status": "ok"})
        assert Fulfilment.objects.count() == 1  # and the test's connection goes on

    def test_wsgi(self):
        self.pay(WSGIHandler)

    def test_asgi(self):
        self.pay(ASGIHandler)
"""


def test_a_django_testcases_rows_are_read_by_a_sync_view_under_asgi_as_under_wsgi(
    pytester: pytest.Pytester,
) -> None:
    """Django's ``ASGIHandler`` runs a sync view in a thread of its own: the view read the
    ``TestCase``'s rows on that thread's own connection, which cannot see them (an in-memory
    SQLite database of its own: "no such table"; a file: "database table is locked")."""
    pytest.importorskip("django")
    pytester.makeconftest(DJANGO_CONFTEST.replace("django_shop", "orm_shop"))
    pytester.makepyfile(orm_shop=ORM_SHOP, test_orm_shop=ORM_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


STARTPROJECT_CONFTEST = """
import django
from django.conf import settings
from django.core.management import call_command

settings.configure(  # what `django-admin startproject` writes: DEBUG on, no ALLOWED_HOSTS
    DEBUG=True,
    ALLOWED_HOSTS=[],
    SECRET_KEY="not-secret",
    INSTALLED_APPS=["paysdk.integrations.django"],
    MIDDLEWARE=["django.middleware.common.CommonMiddleware"],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
    ROOT_URLCONF="django_shop",
)
django.setup()
call_command("migrate", verbosity=0)
"""

STARTPROJECT_TESTS = """
from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler


def test_paid(paysdk_api, paysdk_callback):
    paysdk_api.add_payment("order-1", amount=5000, currency="NGN")
    answer = paysdk_callback.send(WSGIHandler(), "/payments/callback", "order-1")
    assert (answer.status_code, answer.json()) == (200, {"status": "ok"})
    assert settings.ALLOWED_HOSTS == []  # the project's own setting, as it was
"""


def test_a_new_django_projects_plain_pytest_suite_sends_callbacks_with_the_kit(
    pytester: pytest.Pytester,
) -> None:
    """A ``startproject`` project tested with plain pytest (no ``manage.py test``, which allows
    the test host): ``paysdk_callback`` reaches the view rather than Django's 400 for the host."""
    pytest.importorskip("django")
    pytester.makeconftest(STARTPROJECT_CONFTEST)
    pytester.makepyfile(django_shop=DJANGO_SHOP, test_django_shop=STARTPROJECT_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_paysdk_api_answers_inside_a_fake_the_merchant_started_for_the_session(
    pytester: pytest.Pytester,
) -> None:
    """Two fakes on one host: the one started last (the test's) answers while it runs."""
    pytester.makepyfile(
        test_nested=textwrap.dedent(
            """
            import pytest

            import paysdk
            from paysdk.testing import MockPaymentAPI

            @pytest.fixture(scope="session", autouse=True)
            def session_fake():
                with MockPaymentAPI() as api:
                    api.add_payment("order-seed")
                    yield api

            def test_the_tests_own_fake_answers(paysdk_api, session_fake):
                paysdk_api.add_payment("order-1")
                with paysdk.Client() as client:
                    assert client.verify("order-1").succeeded
                assert paysdk_api.verified_references() == ["order-1"]
                assert session_fake.calls == []

            def test_then_the_sessions_again(session_fake):
                with paysdk.Client() as client:
                    assert client.verify("order-seed").succeeded
            """
        )
    )
    run_inprocess(pytester, "-p", "no:cacheprovider", "-p", "no:randomly").assert_outcomes(passed=2)


def test_a_merchants_callback_test_with_a_bad_argument_fails_with_a_paysdk_error(
    pytester: pytest.Pytester,
) -> None:
    """``paysdk_callback.send`` refuses what it cannot send with ``paysdk.ConfigurationError``
    naming the argument, as ``paysdk_api``'s helpers do, so the merchant's failure says which."""
    pytester.makepyfile(
        test_callback_arguments="""
        import paysdk, pytest

        def app(environ, start_response):
            start_response("200 OK", [])
            return [b"ok"]

        @pytest.mark.parametrize(
            ("args", "named"),
            [
                ((app, "payments/callback", "order-1"), "url"),
                ((app, "/cb", 1042), "reference"),
                ((None, "/cb", "order-1"), "app"),
            ],
        )
        def test_refused(paysdk_callback, args, named):
            with pytest.raises(paysdk.ConfigurationError, match=f"^{named} must be"):
                paysdk_callback.send(*args)
            with pytest.raises(paysdk.ConfigurationError, match="^interface must be"):
                paysdk_callback.send(app, "/cb", "order-1", interface="ASGI")
        """
    )
    run_inprocess(pytester, "-p", "no:cacheprovider").assert_outcomes(passed=3)


def test_a_merchants_client_made_before_its_fake_behind_a_ci_proxy_fails_with_a_paysdk_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CI machine names a proxy; the merchant makes its client before starting a
    ``MockPaymentAPI`` of its own URL (the plugin names only the default fake's host in
    ``NO_PROXY``): the test fails with ``paysdk.ConfigurationError`` saying what to do, not
    httpx's ``InvalidURL`` from inside respx."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name.lower(), raising=False)
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    pytester.makepyfile(
        test_early_client="""
        import paysdk, pytest
        from paysdk.testing import MockPaymentAPI

        def test_verify():
            api = MockPaymentAPI(base_url="https://pay.shop.test")
            with paysdk.Client(secret_key=api.secret_key, base_url=api.base_url) as client:
                with api:
                    api.add_payment("order-7")
                    client.verify("order-7")
        """
    )
    result = run_inprocess(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*paysdk*ConfigurationError: this client sends its requests*"])
    assert "InvalidURL" not in result.stdout.str()

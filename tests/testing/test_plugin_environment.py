"""An app that builds its client when imported, as most do, is importable by its tests.

The plugin sets PAYSDK_BASE_URL and PAYSDK_SECRET_KEY before pytest imports ``conftest.py`` or a
test module (``paysdk_environment``: the fake by default, the sandbox, or nothing), so
``client = paysdk.Client()`` at module level finds a service to name.
"""

from __future__ import annotations

import os
import socket
from typing import Any
from urllib.parse import urlsplit

import pytest

from paysdk._core.responses import FAKE_HOST
from paysdk.testing import MockPaymentAPI
from paysdk.testing.plugin import MOCK_BASE_URL, MOCK_HOST, MOCK_SECRET_KEY
from tests.support.pytester import import_all_of_paysdk, run_inprocess

pytest_plugins = ["pytester"]
import_all_of_paysdk()  # before any in-process run: tests/support/pytester.py says why

SHOP = '''
"""A shop whose client is made at import time, from the environment."""
import paysdk

client = paysdk.Client()


def order_paid(reference):
    return client.verify(reference).succeeded
'''

SHOP_TESTS_ON_THE_FAKE = """
from shop import client, order_paid


def test_the_module_level_client_talks_to_the_fake(paysdk_api):
    paysdk_api.add_payment("order-7", amount=5000)
    assert order_paid("order-7")
    assert paysdk_api.verified_references() == ["order-7"]
"""

SHOP_TESTS_ON_THE_SANDBOX = """
from paysdk.sandbox import COMPLETED_REFERENCE, FAILED_REFERENCE

from shop import client, order_paid


def teardown_module():
    client.close()  # its connection to the session's sandbox, which outlives this module


def test_the_module_level_client_talks_to_the_sandbox(paysdk_sandbox):
    assert order_paid(COMPLETED_REFERENCE)
    assert not order_paid(FAILED_REFERENCE)
    assert [request.path for request in paysdk_sandbox.requests] == [
        f"/payment/{COMPLETED_REFERENCE}", f"/payment/{FAILED_REFERENCE}"
    ]
"""

CONFTEST_IMPORTS_THE_SHOP = """
import shop  # imported before any test module, as a conftest that builds the app does
"""


def run_shop(pytester: pytest.Pytester, tests: str, setting: str | None) -> pytest.RunResult:
    """Run the shop's tests in-process, with ``paysdk_environment = setting`` if one is given."""
    pytester.makepyfile(shop=SHOP, test_shop=tests)
    if setting is not None:
        pytester.makeini(f"[pytest]\npaysdk_environment = {setting}\n")
    return run_inprocess(pytester, "-p", "no:cacheprovider")


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No PAYSDK_* variables, as on a merchant's machine."""
    for name in ("PAYSDK_BASE_URL", "PAYSDK_SECRET_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_the_plugin_repeats_the_fakes_defaults() -> None:
    api = MockPaymentAPI()
    assert (api.base_url, api.secret_key) == (MOCK_BASE_URL, MOCK_SECRET_KEY)
    assert urlsplit(api.base_url).hostname == FAKE_HOST  # the host whose failures say "paysdk_api"
    assert MOCK_HOST == FAKE_HOST  # the host the plugin keeps from DNS


@pytest.mark.usefixtures("clean_environment")
def test_with_no_configuration_a_module_level_client_uses_the_fake(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(CONFTEST_IMPORTS_THE_SHOP)
    run_shop(pytester, SHOP_TESTS_ON_THE_FAKE, None).assert_outcomes(passed=1)
    assert "PAYSDK_BASE_URL" not in os.environ  # put back as the run found it


@pytest.mark.usefixtures("clean_environment")
def test_the_sandbox_setting_points_module_level_clients_at_the_sessions_sandbox(
    pytester: pytest.Pytester,
) -> None:
    run_shop(pytester, SHOP_TESTS_ON_THE_SANDBOX, "sandbox").assert_outcomes(passed=1)
    assert "PAYSDK_SECRET_KEY" not in os.environ


def test_no_proxy_a_test_sets_beside_the_fake_is_undone_to_the_runs(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the environment left as it is (``none``), the fixture's change of ``NO_PROXY`` and
    the test's own are both undone when the test ends."""
    monkeypatch.setenv("NO_PROXY", "internal.example")
    monkeypatch.delenv("no_proxy", raising=False)
    pytester.makeini("[pytest]\npaysdk_environment = none\n")
    pytester.makepyfile(
        test_no_proxy="""
import os

def test_one_that_sets_no_proxy_itself(paysdk_api, monkeypatch):
    monkeypatch.setenv("NO_PROXY", "payments.internal")

def test_then_one_without_the_fake():
    assert os.environ["NO_PROXY"] == "internal.example"
    assert "no_proxy" not in os.environ
"""
    )
    run_inprocess(pytester, "-p", "no:cacheprovider").assert_outcomes(passed=2)


@pytest.mark.usefixtures("clean_environment")
def test_with_xdist_only_the_workers_start_a_sandbox(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """xdist's controller imports ``conftest.py`` but runs no test: it names the fake (no
    sandbox started for nobody), while the worker's module-level client talks to its own."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)  # this test may itself run in a worker
    pytester.makeconftest(
        CONFTEST_IMPORTS_THE_SHOP
        + """
import os

def pytest_configure(config):
    role = os.environ.get("PYTEST_XDIST_WORKER", "controller")
    with open(f"{role}.url", "w") as seen:
        seen.write(shop.client.base_url)
"""
    )
    pytester.makepyfile(shop=SHOP, test_shop=SHOP_TESTS_ON_THE_SANDBOX)
    pytester.makeini("[pytest]\npaysdk_environment = sandbox\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "1")
    result.assert_outcomes(passed=1)
    assert (pytester.path / "controller.url").read_text() == MOCK_BASE_URL
    assert (pytester.path / "gw0.url").read_text().startswith("http://127.0.0.1:")


def test_a_service_named_in_the_environment_is_left_alone(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAYSDK_BASE_URL", "https://pay.example.com")
    monkeypatch.setenv("PAYSDK_SECRET_KEY", "sk_test_merchants_own")
    pytester.makepyfile(
        test_env="""
import os

def test_env():
    assert os.environ["PAYSDK_BASE_URL"] == "https://pay.example.com"
    assert os.environ["PAYSDK_SECRET_KEY"] == "sk_test_merchants_own"
"""
    )
    # In a process of its own: the variables it sees are the ones it inherited, and garbage that
    # earlier tests left in this process (a socket collected mid-run) cannot fail it.
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


@pytest.mark.usefixtures("clean_environment")
def test_none_leaves_the_environment_alone_and_the_first_call_fails_as_without_the_plugin(
    pytester: pytest.Pytester,
) -> None:
    """The module-level client is made (it would be in ``manage.py migrate`` too), and its
    first call says what is missing."""
    result = run_shop(pytester, SHOP_TESTS_ON_THE_FAKE, "none")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ConfigurationError*PAYSDK_SECRET_KEY*"])


def test_an_unknown_setting_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\npaysdk_environment = production\n")
    result = run_inprocess(pytester, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*paysdk_environment = 'production'*mock, sandbox, none*"])


@pytest.mark.parametrize(
    ("setting", "shown"),
    [
        ("MOC\u212a", "'MOC\\u212a'"),  # a Kelvin sign, which str.lower() makes an ASCII k
        ("\u0130NONE", "'\\u0130NONE'"),  # a dotted capital I
        ("mock\u00a0", "'mock\\xa0'"),  # a no-break space, which str.strip() takes
    ],
)
def test_a_setting_of_a_look_alike_letter_is_a_usage_error_that_shows_it(
    pytester: pytest.Pytester, setting: str, shown: str
) -> None:
    result = run_inprocess(
        pytester, "-p", "no:cacheprovider", "-o", f"paysdk_environment={setting}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*paysdk_environment = {shown}: expected one of*"])


@pytest.mark.usefixtures("clean_environment")
def test_a_call_to_the_fakes_host_without_the_fake_says_to_ask_for_paysdk_api(
    pytester: pytest.Pytester,
) -> None:
    """The default environment names the fake, so a test that forgot ``paysdk_api`` (or calls
    from a process of its own, where the fake does not run) is told why nothing answers."""
    pytester.makepyfile(
        test_forgot="""
import paysdk

def test_without_the_fixture():
    with paysdk.Client(max_retries=0) as client:
        client.verify("order-7")
"""
    )
    result = run_inprocess(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["E   *APIConnectionError: could not reach the service: *api.paysdk.test is *paysdk_api*"]
    )


@pytest.mark.usefixtures("clean_environment")
def test_a_call_to_the_fakes_host_without_the_fake_asks_no_dns_server(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test's traffic stays on this machine: the fake's host fails to resolve before the
    resolver is asked (here a recorder in its place), from sync and async clients alike."""
    asked: list[object] = []

    def resolver(host: object, *args: Any, **kwargs: Any) -> Any:
        asked.append(host)
        raise socket.gaierror(socket.EAI_NONAME, "the recorder resolves nothing")

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    pytester.makepyfile(
        test_forgot="""
import asyncio

import paysdk

def test_sync():
    with paysdk.Client(max_retries=0) as client:
        client.verify("order-7")

def test_async():
    async def verify():
        async with paysdk.AsyncClient(max_retries=0) as client:
            await client.verify("order-7")

    asyncio.run(verify())
"""
    )
    result = run_inprocess(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        ["E   *APIConnectionError: could not reach the service: *api.paysdk.test is *paysdk_api*"]
        * 2
    )
    assert asked == []
    assert socket.getaddrinfo is resolver  # the run's end put it back


@pytest.mark.usefixtures("clean_environment")
def test_a_proxy_in_the_environment_never_carries_the_kits_requests(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI machines often name a proxy; the fake's and the sandbox's requests stay on this
    machine all the same (the proxy here is a closed port on loopback: used, it would refuse)."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "internal.example")
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(CONFTEST_IMPORTS_THE_SHOP)
    pytester.makepyfile(
        shop=SHOP,
        test_behind_a_proxy="""
import os

import paysdk
from paysdk.sandbox import COMPLETED_REFERENCE

from shop import order_paid


def test_the_module_level_client(paysdk_api):
    paysdk_api.add_payment("order-7")
    assert order_paid("order-7")


def test_a_client_made_in_the_test(paysdk_client, paysdk_api):
    paysdk_api.add_payment("order-7")
    assert paysdk_client.verify("order-7").succeeded


def test_the_sandbox(paysdk_sandbox):
    with paysdk.Client(max_retries=0) as client:
        assert client.verify(COMPLETED_REFERENCE).succeeded
    assert "internal.example" in os.environ["NO_PROXY"]  # the merchant's own entry kept
""",
    )
    run_inprocess(pytester, "-p", "no:cacheprovider").assert_outcomes(passed=3)
    assert os.environ["NO_PROXY"] == "internal.example"  # put back as the run found it

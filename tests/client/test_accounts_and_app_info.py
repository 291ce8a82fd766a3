"""Many merchant accounts over one client's connections, and the User-Agent an application
extends with its own name: on every backend, against real sandboxes on loopback."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator

import httpx
import pytest

import paysdk
from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox
from tests.conftest import MakeClient
from tests.support.clients import backend_of, sender_of

HTTPX = "httpx2" if httpx.__name__ == "httpx2" else "httpx"
"""How the User-Agent names httpx: as httpx2 where httpx2 stands in for it (alias_httpx())."""

pytestmark = pytest.mark.anyio


@pytest.fixture
def second_account() -> Iterator[Sandbox]:
    """Another merchant account: a sandbox of its own, with its own key and base URL."""
    with Sandbox() as running:
        yield running


async def test_with_options_gives_a_client_for_another_account_over_the_same_connections(
    sandbox: Sandbox,
    second_account: Sandbox,
    make_loopback_client: MakeClient,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="paysdk")
    platform = make_loopback_client(secret_key=sandbox.secret_key, base_url=sandbox.base_url)
    other = platform.client.with_options(
        secret_key=second_account.secret_key, base_url=second_account.base_url
    )
    assert sender_of(other) is sender_of(platform.client)  # one pool for every account
    assert (await platform.verify(COMPLETED_REFERENCE)).reference == COMPLETED_REFERENCE
    payment = other.verify(COMPLETED_REFERENCE)
    payment = await payment if not isinstance(payment, paysdk.VerifiedPayment) else payment
    assert payment.reference == COMPLETED_REFERENCE
    assert [r.path for r in sandbox.requests] == [f"/payment/{COMPLETED_REFERENCE}"]
    assert [r.path for r in second_account.requests] == [f"/payment/{COMPLETED_REFERENCE}"]
    shown = repr(other) + repr(platform.client) + caplog.text
    assert second_account.secret_key not in shown
    assert sandbox.secret_key not in shown
    assert second_account.base_url in repr(other)


async def test_a_single_call_can_be_made_for_another_account(
    sandbox: Sandbox, second_account: Sandbox, make_loopback_client: MakeClient
) -> None:
    platform = make_loopback_client(secret_key=sandbox.secret_key, base_url=sandbox.base_url)
    payments = await platform.list_payments(
        secret_key=second_account.secret_key, base_url=second_account.base_url
    )
    assert len(payments) == len(second_account.payments)
    assert sandbox.requests == []
    with pytest.raises(paysdk.AuthenticationError):  # the other account's key on this one
        await platform.verify(COMPLETED_REFERENCE, secret_key=second_account.secret_key)


async def test_another_accounts_key_and_url_are_checked_like_the_clients_own(
    make_client: MakeClient,
) -> None:
    client = make_client()
    with pytest.raises(paysdk.ConfigurationError, match="whitespace"):
        client.client.with_options(secret_key=" sk_test_padded ")
    with pytest.raises(paysdk.ConfigurationError, match="plain http"):
        client.client.with_options(base_url="http://api.pay.test/v1")
    with pytest.raises(paysdk.ConfigurationError, match="http:// or https://"):
        await client.verify(COMPLETED_REFERENCE, base_url="ftp://api.pay.test")


def test_an_unverified_loopback_client_cannot_be_pointed_elsewhere(sandbox: Sandbox) -> None:
    with paysdk.Client(
        secret_key=sandbox.secret_key, base_url=sandbox.base_url, verify=False
    ) as client:
        client.with_options(base_url="http://localhost:1")  # loopback: still allowed
        with pytest.raises(paysdk.ConfigurationError, match="verify=False"):
            client.with_options(base_url="https://api.pay.test/v1")


async def test_the_user_agent_names_paysdk_python_the_backend_in_use_and_the_app(
    sandbox: Sandbox, make_loopback_client: MakeClient
) -> None:
    client = make_loopback_client(  # as read from a file: the whitespace around it is dropped
        secret_key=sandbox.secret_key, base_url=sandbox.base_url, app_info="myshop/1.4 (+ops)\n"
    )
    await client.verify(COMPLETED_REFERENCE)
    (request,) = sandbox.requests
    agent = {name.lower(): value for name, value in request.headers.items()}["user-agent"]
    python = ".".join(map(str, sys.version_info[:3]))
    if backend_of(client.client) == "aiohttp":
        import aiohttp

        backend = f"aiohttp/{aiohttp.__version__}"
    else:
        backend = f"{HTTPX}/{httpx.__version__}"
    assert agent == f"paysdk/{paysdk.__version__} Python/{python} {backend} myshop/1.4 (+ops)"


def test_without_app_info_the_user_agent_ends_with_the_backend() -> None:
    with paysdk.Client(secret_key="sk_test_123456", base_url="https://api.pay.test") as client:
        assert client._config.headers["User-Agent"].endswith(f" {HTTPX}/{httpx.__version__}")


@pytest.mark.parametrize(
    "app_info", ["myshop/1.4\r\nX-Injected: 1", "boutique-é/2", "\x00", "", "   ", b"shop/1"]
)
def test_app_info_that_cannot_be_sent_in_a_header_is_refused(app_info: object) -> None:
    with pytest.raises(paysdk.ConfigurationError, match="app_info"):
        paysdk.Client(
            secret_key="sk_test_123456",
            base_url="https://api.pay.test",
            app_info=app_info,  # type: ignore[arg-type]
        )

"""paysdk's pytest plugin, registered by the ``pytest11`` entry point when paysdk is installed.

Fixtures: ``paysdk_api`` (the in-memory fake, [`MockPaymentAPI`][paysdk.testing.MockPaymentAPI]),
``paysdk_client`` (a ``paysdk.Client`` wired to it), ``paysdk_sandbox`` (the real loopback
sandbox, one per session, reset before each test) and ``paysdk_callback`` (sends the service's
callback to your WSGI or ASGI app in-process). This module imports only pytest: respx, the fake
and the sandbox are imported when a test first asks for a fixture, so a test run that uses none
of them pays nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .._client.clients import Client
    from ..sandbox import Sandbox
    from ._callbacks import CallbackSender
    from ._mock_api import MockPaymentAPI

ENV_SECRET_KEY = "PAYSDK_SECRET_KEY"  # noqa: S105 - the variable's name (as in paysdk._client.configure)
ENV_BASE_URL = "PAYSDK_BASE_URL"


@pytest.fixture
def paysdk_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[MockPaymentAPI]:
    """The payment service in memory (no payments yet); ``paysdk.Client()`` finds it.

    PAYSDK_BASE_URL and PAYSDK_SECRET_KEY point at it for the test, so clients your code
    builds from the environment talk to it too. Needs ``python-paysdk[testing]`` (respx).
    """
    from . import MockPaymentAPI

    with MockPaymentAPI() as api:
        monkeypatch.setenv(ENV_BASE_URL, api.base_url)
        monkeypatch.setenv(ENV_SECRET_KEY, api.secret_key)
        yield api


@pytest.fixture
def paysdk_client(paysdk_api: MockPaymentAPI) -> Iterator[Client]:
    """``paysdk_api.client()``: a Client on the fake whose retries record their waits."""
    with paysdk_api.client() as client:
        yield client


@pytest.fixture(scope="session")
def paysdk_sandbox_server() -> Iterator[Sandbox]:
    """The sandbox process-wide: started on first use, stopped at the end of the session."""
    from ..sandbox import Sandbox

    with Sandbox() as sandbox:
        yield sandbox


@pytest.fixture
def paysdk_sandbox(paysdk_sandbox_server: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    """The real sandbox on 127.0.0.1, reset (seed payments, no faults, empty log) for this test.

    PAYSDK_BASE_URL and PAYSDK_SECRET_KEY point at it for the test.
    """
    paysdk_sandbox_server.reset()
    monkeypatch.setenv(ENV_BASE_URL, paysdk_sandbox_server.base_url)
    monkeypatch.setenv(ENV_SECRET_KEY, paysdk_sandbox_server.secret_key)
    return paysdk_sandbox_server


@pytest.fixture
def paysdk_callback() -> Iterator[CallbackSender]:
    """Sends callbacks to your app in-process: ``paysdk_callback.send(app, path, reference)``."""
    from ._callbacks import CallbackSender

    with CallbackSender() as sender:
        yield sender

"""paysdk's pytest plugin (the ``pytest11`` entry point), importing only pytest until a fixture is
used: ``paysdk_api`` (the in-memory fake), ``paysdk_client`` (a Client on it), ``paysdk_sandbox``
(the session's loopback sandbox, reset before each test) and ``paysdk_callback`` (callbacks sent to
your WSGI or ASGI app in-process).

Before ``conftest.py`` and test modules are imported, it points ``PAYSDK_BASE_URL`` and
``PAYSDK_SECRET_KEY`` at the fake unless either is set, so an app that builds ``paysdk.Client()``
at import time can be imported; the ``paysdk_environment`` ini setting chooses ``mock`` (the
default), ``sandbox`` (the session's sandbox, started then) or ``none`` (the environment as is).
For the whole run, the fake's host fails to resolve without a DNS query leaving the machine.
"""

from __future__ import annotations

import functools
import os
import socket
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from ._no_proxy import NAMES as NO_PROXY_NAMES
from ._no_proxy import bypassing

if TYPE_CHECKING:
    from .._client._sync.client import Client
    from ..sandbox import Sandbox
    from ._callbacks import CallbackSender
    from ._mock_api import MockPaymentAPI

ENV_SECRET_KEY = "PAYSDK_SECRET_KEY"  # noqa: S105 - the variable's name (as in paysdk._core.environment)
ENV_BASE_URL = "PAYSDK_BASE_URL"
ENVIRONMENT_INI = "paysdk_environment"
ENVIRONMENTS = ("mock", "sandbox", "none")
# The fake's defaults (paysdk.testing._mock_api), repeated so that this module imports only pytest.
MOCK_BASE_URL = "https://api.paysdk.test"
MOCK_HOST = "api.paysdk.test"
MOCK_SECRET_KEY = "sk_test_paysdk_mock"  # noqa: S105 - MockPaymentAPI's fixed test key
EARLY_SANDBOX = pytest.StashKey["Sandbox"]()
SANDBOX_DEFERRED = pytest.StashKey[bool]()
ENTRY_POINT_NAME = "paysdk"
"""The plugin's name as the ``pytest11`` entry point registers it (``-p no:paysdk``)."""


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    _answer_to_one_name(pluginmanager)
    parser.addini(
        ENVIRONMENT_INI,
        "What PAYSDK_BASE_URL and PAYSDK_SECRET_KEY name while tests are imported: 'mock' (the "
        "paysdk_api fake, unless either is set already), 'sandbox' (the session's sandbox) or "
        "'none' (the environment as it is).",
        default="mock",
    )


def _answer_to_one_name(pluginmanager: pytest.PytestPluginManager) -> None:
    """Make a second registration of this module (``pytest_plugins = ["paysdk.testing.plugin"]``
    in a ``conftest.py``, ``-p paysdk.testing.plugin``, ``PYTEST_PLUGINS``) a no-op: the entry
    point registers it as ``paysdk`` too, and pluggy refuses one module under two names. Runs as
    the module is registered (``pytest_addoption`` is replayed for each new plugin)."""
    registered_as = pluginmanager.get_name(sys.modules[__name__])
    for name in (ENTRY_POINT_NAME, __name__):
        if name != registered_as and pluginmanager.get_plugin(name) is None:
            pluginmanager.set_blocked(name)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Set the PAYSDK_* variables before conftest.py and test modules import the app."""
    given = str(early_config.getini(ENVIRONMENT_INI))
    # ASCII alone is folded: Unicode's lower() reads MOC\u212a (a Kelvin sign) as "mock"
    choice = given.strip(" \t\r\n").lower() if given.isascii() else given
    if choice not in ENVIRONMENTS:
        raise pytest.UsageError(
            f"{ENVIRONMENT_INI} = {given!a}: expected one of {', '.join(ENVIRONMENTS)}"
        )
    if choice == "none":
        return
    if choice == "mock":
        if ENV_BASE_URL in os.environ or ENV_SECRET_KEY in os.environ:
            return  # the environment names a service already: yours to choose
        _set_environment(early_config, MOCK_BASE_URL, MOCK_SECRET_KEY)
        return
    if _xdist_controller(early_config):
        # each worker starts its own sandbox; this process imports conftest.py and runs no test
        _set_environment(early_config, MOCK_BASE_URL, MOCK_SECRET_KEY)
        early_config.stash[SANDBOX_DEFERRED] = True
        return
    _start_sandbox(early_config)


def _start_sandbox(config: pytest.Config) -> None:
    """Start the session's sandbox and point the PAYSDK_* variables at it for the run."""
    from ..sandbox import Sandbox

    sandbox = Sandbox().start()
    config.add_cleanup(sandbox.stop)
    config.stash[EARLY_SANDBOX] = sandbox
    _set_environment(config, sandbox.base_url, sandbox.secret_key)


def _xdist_controller(config: pytest.Config) -> bool:
    """Whether pytest-xdist's workers will run the tests (``-n 2``, ``-n auto``), not this
    process; ``pytest_configure`` checks once xdist has settled how many it starts."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        return False
    options = config.known_args_namespace
    workers = getattr(options, "numprocesses", None)
    if workers in ("auto", "logical"):  # none under --pdb, or where xdist's variable says 0
        return not getattr(options, "usepdb", False) and _auto_workers() != 0
    return isinstance(workers, int) and workers > 0


def _auto_workers() -> int | None:
    """How many workers ``-n auto`` starts by ``PYTEST_XDIST_AUTO_NUM_WORKERS``, as xdist reads
    it; ``None`` where it does not say."""
    try:
        return int(os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", ""))
    except ValueError:
        return None


def pytest_configure(config: pytest.Config) -> None:
    """Make the fake's host fail to resolve without asking DNS, for the whole run; and start
    the sandbox deferred for xdist's workers if this process runs the tests after all
    (``-n auto`` that settled on none)."""
    if config.stash.get(SANDBOX_DEFERRED, False) and getattr(config.option, "dist", "no") == "no":
        _start_sandbox(config)
    unguarded = socket.getaddrinfo
    socket.getaddrinfo = _fake_host_unresolved(unguarded)

    def unguard() -> None:
        if getattr(socket.getaddrinfo, "__wrapped__", None) is unguarded:
            socket.getaddrinfo = unguarded  # unless something has wrapped it since: then its own

    config.add_cleanup(unguard)


def _fake_host_unresolved(getaddrinfo: Callable[..., Any]) -> Callable[..., Any]:
    """``getaddrinfo`` (wrapped, as ``__wrapped__``) refusing the fake's host itself, so that a
    test that calls the fake where none runs (it forgot ``paysdk_api``) fails as the host's lookup
    would, but with no query leaving the machine. Where a fake runs, its requests never reach a
    lookup."""

    @functools.wraps(getaddrinfo)
    def guarded(host: object, *args: Any, **kwargs: Any) -> Any:
        name = host.decode("ascii", "replace") if isinstance(host, bytes) else host
        if isinstance(name, str) and name.rstrip(".").lower() == MOCK_HOST:
            raise socket.gaierror(socket.EAI_NONAME, f"{MOCK_HOST} is not looked up in DNS")
        return getaddrinfo(host, *args, **kwargs)

    return guarded


def _set_environment(config: pytest.Config, base_url: str, secret_key: str) -> None:
    """Set both variables for the run; the run's end puts back what was there."""
    patch = pytest.MonkeyPatch()
    config.add_cleanup(patch.undo)
    _point_at(patch, base_url, secret_key)


def _point_at(patch: pytest.MonkeyPatch, base_url: str, secret_key: str) -> None:
    """Point the PAYSDK_* variables at the fake's or the sandbox's ``base_url`` and ``secret_key``
    and add its host to ``NO_PROXY`` (``_no_proxy`` says why), through ``patch``, which puts the
    variables back."""
    patch.setenv(ENV_BASE_URL, base_url)
    patch.setenv(ENV_SECRET_KEY, secret_key)
    value = bypassing(urlsplit(base_url).hostname or "")
    if value is not None:
        for name in NO_PROXY_NAMES:
            patch.setenv(name, value)


def _one_service(request: pytest.FixtureRequest) -> None:
    """Refuse a test (``request`` names every fixture it uses) that asks for both the fake and
    the sandbox: each points the PAYSDK_* variables at itself, and the fake's router refuses the
    sandbox's real HTTP requests."""
    if {"paysdk_api", "paysdk_sandbox"} <= set(request.fixturenames):
        from .._errors import ConfigurationError

        raise ConfigurationError(
            f"{request.node.name} uses both paysdk_api (the service in memory) and "
            "paysdk_sandbox (the service over HTTP), which cannot serve one test: the fake "
            "refuses every HTTP request it does not answer itself, the sandbox's included. "
            "Use each in a test of its own."
        )


@pytest.fixture
def paysdk_api(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[MockPaymentAPI]:
    """The payment service in memory (no payments yet); ``paysdk.Client()`` finds it.

    PAYSDK_BASE_URL and PAYSDK_SECRET_KEY point at it for the test, so clients your code
    builds from the environment talk to it too. Needs ``python-paysdk[testing]`` (respx).
    """
    _one_service(request)
    from . import MockPaymentAPI

    api = MockPaymentAPI()
    # NO_PROXY through monkeypatch, before the fake's own: the test's
    # monkeypatch.setenv("NO_PROXY", ...) is then undone back to the value before the test
    _point_at(monkeypatch, api.base_url, api.secret_key)
    with api:
        yield api


@pytest.fixture
def paysdk_client(paysdk_api: MockPaymentAPI) -> Iterator[Client]:
    """``paysdk_api.client()``: a Client on the fake whose retries record their waits."""
    with paysdk_api.client() as client:
        yield client


@pytest.fixture(scope="session")
def paysdk_sandbox_server(pytestconfig: pytest.Config) -> Iterator[Sandbox]:
    """The sandbox process-wide: started on first use, stopped at the end of the session.

    With ``paysdk_environment = sandbox`` it is the one started before the tests were imported.
    """
    early = pytestconfig.stash.get(EARLY_SANDBOX, None)
    if early is not None:
        yield early
        return
    from ..sandbox import Sandbox

    with Sandbox() as sandbox:
        yield sandbox


@pytest.fixture
def paysdk_sandbox(paysdk_sandbox_server: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    """The real sandbox on 127.0.0.1, reset (seed payments, no faults, empty log) for this test.

    PAYSDK_BASE_URL and PAYSDK_SECRET_KEY point at it for the test.
    """
    paysdk_sandbox_server.reset()
    _point_at(monkeypatch, paysdk_sandbox_server.base_url, paysdk_sandbox_server.secret_key)
    return paysdk_sandbox_server


@pytest.fixture
def paysdk_callback() -> Iterator[CallbackSender]:
    """Sends callbacks to your app in-process: ``paysdk_callback.send(app, path, reference)``."""
    from ._callbacks import CallbackSender

    with CallbackSender() as sender:
        yield sender

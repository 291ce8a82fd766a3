"""Shared fixtures: realistic bodies, and one client fixture that runs each test sync and async."""

from __future__ import annotations

import inspect
import os
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import respx

import paysdk
from paysdk._client.configure import create_config
from paysdk._core import Answer, Config, Failure
from paysdk._service.api import verify_envelope
from paysdk._transport.httpx_common import failure_from_httpx
from paysdk.sandbox import COMPLETED_REFERENCE, PaymentRecord, Sandbox, default_payments
from paysdk.sandbox import NOT_FOUND_BODY as SERVICE_NOT_FOUND_BODY
from paysdk.testing import payment_record
from tests.support.hostile import HostileServer
from tests.support.merchant import SHOP_ORDERS, Shop, add_service_payments
from tests.support.proxy import PROXY_VARIABLES, ForwardProxy
from tests.support.scheduling import longest_first, scheduler_by
from tests.support.wheels import shared_dist
from tests.tiers import tiers_of

if TYPE_CHECKING:
    import trustme

BASE_URL = "https://api.pay.test/v1"
SECRET = "sk_test_Zq3Jv9WmX4pL7tR2"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its tiers (tests/tiers.py), which ``scripts/suite.py`` selects by;
    the serial tier first, the longest chain of tests, then the longest files (see
    ``pytest_xdist_make_scheduler``), each kept in its order."""
    for item in items:
        for tier in tiers_of(item.nodeid):
            item.add_marker(tier)
    items.sort(
        key=lambda item: (item.get_closest_marker("serial") is None, longest_first(item.nodeid))
    )


def worker_group(nodeid: str) -> str:
    """Which tests share a worker: the serial tier, one test at a time, and each other file."""
    return "serial" if "serial" in tiers_of(nodeid) else nodeid.partition("::")[0]


pytest_xdist_make_scheduler = scheduler_by(worker_group)
"""Under ``--dist loadfile``, as ``scripts/suite.py`` runs the suite: each file on one worker
(its module fixtures set up once), the serial tier on one of its own while the others take the
files."""


@pytest.fixture(scope="session")
def paysdk_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel built from this checkout, once per run (all workers share them):
    what PyPI would get, for the tests that read them or install the wheel into fresh venvs."""
    base = tmp_path_factory.getbasetemp()
    return shared_dist(base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base)


@pytest.fixture(scope="session")
def paysdk_wheel(paysdk_dist: Path) -> Path:
    """The wheel of ``paysdk_dist``: what ``pip install python-paysdk`` installs."""
    (wheel,) = paysdk_dist.glob("python_paysdk-*.whl")
    return wheel


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _no_routes_left_on_respx_global_router() -> Iterator[None]:
    """Fail the test that leaves routes on ``respx.mock``, not a later one that trips on them."""
    yield
    leaked = list(respx.mock.routes)
    respx.mock.clear()
    assert not leaked, f"routes left on respx's global router: {leaked}"


_SEEDED = next(r for r in default_payments() if r.reference == COMPLETED_REFERENCE)
SAMPLE: PaymentRecord = payment_record(reference=_SEEDED.reference, created_at=_SEEDED.created_at)
"""The payment behind the bodies below, so the suite keeps no payment of its own: the
testing kit's default card payment (250000 NGN; its customer and card are the seed's), under the
seed's completed reference and time."""


def verify_body(reference: str = COMPLETED_REFERENCE, **changes: Any) -> dict[str, Any]:
    """A 200 body of verify for a successful card payment (:data:`SAMPLE`), as the spec has it."""
    return verify_envelope({**SAMPLE.verify_shape(), "reference": reference, **changes})


def listed_body(reference: str = COMPLETED_REFERENCE, **changes: Any) -> dict[str, Any]:
    """One element of list's 200 body (:data:`SAMPLE`), as the spec describes it."""
    return {**SAMPLE.list_shape(), "reference": reference, **changes}


def make_config(**overrides: Any) -> Config:
    """A checked config for driving plans by hand: test key and URL, 10 s, 2 retries."""
    options: dict[str, Any] = {
        "secret_key": SECRET,
        "base_url": BASE_URL,
        "timeout": 10,
        "max_retries": 2,
        "default_headers": None,
        "allow_insecure_http": False,
    }
    return create_config(**(options | overrides))


def answered(response: httpx.Response) -> Answer:
    """What a shell reports back for ``response``: for driving a plan by hand."""
    return Answer(response.status_code, response.headers, response.content)


def failed(error: httpx.HTTPError) -> Failure:
    """What a shell reports back when httpx raises ``error``: for driving a plan by hand."""
    failure = failure_from_httpx(error)
    assert failure is not None, f"{error!r} is a network failure"
    return failure


NOT_FOUND_BODY: dict[str, Any] = dict(SERVICE_NOT_FOUND_BODY)
LIST_UNAVAILABLE_BODY = {"error": "Connection Error"}


class CutAfter(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body that sends ``head`` then fails as a dropped connection would; ``closed`` counts
    the times it was closed."""

    def __init__(self, head: bytes) -> None:
        self.head = head
        self.closed = 0

    def __iter__(self) -> Iterator[bytes]:
        yield self.head
        raise httpx.ReadError("connection reset by peer")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.head
        raise httpx.ReadError("connection reset by peer")

    def close(self) -> None:
        self.closed += 1

    async def aclose(self) -> None:
        self.closed += 1


class EitherClient:
    """A Client or an AsyncClient behind one awaitable surface, so a test is written once.

    ``sleeps`` records every backoff wait instead of sleeping.
    """

    def __init__(self, client: paysdk.Client | paysdk.AsyncClient) -> None:
        self.client = client
        self.sleeps: list[float] = []
        if isinstance(client, paysdk.AsyncClient):

            async def record(seconds: float) -> None:
                self.sleeps.append(seconds)

            client._sleep = record  # type: ignore[method-assign]
        else:

            def record_sync(seconds: float) -> None:
                self.sleeps.append(seconds)

            client._sleep = record_sync  # type: ignore[method-assign]

    @property
    def is_async(self) -> bool:
        return isinstance(self.client, paysdk.AsyncClient)

    async def drain(self, **options: Any) -> list[paysdk.ListedPayment]:
        """Every payment ``iter_payments(**options)`` yields, whichever the client."""
        if isinstance(self.client, paysdk.AsyncClient):
            return [payment async for payment in self.client.iter_payments(**options)]
        return list(self.client.iter_payments(**options))

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        method = getattr(self.client, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            return await result if inspect.isawaitable(result) else result

        return call


MakeClient = Callable[..., EitherClient]


async def _clients(kind: str) -> AsyncIterator[MakeClient]:
    made: list[EitherClient] = []

    def make(**kwargs: Any) -> EitherClient:
        kwargs.setdefault("secret_key", SECRET)
        kwargs.setdefault("base_url", BASE_URL)
        if kind == "aiohttp":
            kwargs.setdefault("http_backend", "aiohttp")
        cls = paysdk.Client if kind == "sync" else paysdk.AsyncClient
        either = EitherClient(cls(**kwargs))
        made.append(either)
        return either

    yield make
    for either in made:
        await either.close()


@pytest.fixture(params=["sync", "async"])
async def make_client(request: pytest.FixtureRequest) -> AsyncIterator[MakeClient]:
    """Build a sync or an async client (the test runs for both) with test defaults."""
    async for make in _clients(request.param):
        yield make


@pytest.fixture(params=["sync", "async", "aiohttp"])
async def make_loopback_client(request: pytest.FixtureRequest) -> AsyncIterator[MakeClient]:
    """Like ``make_client``, and also the aiohttp-backed AsyncClient: for tests over real
    sockets (respx cannot intercept aiohttp, so those tests never use it)."""
    async for make in _clients(request.param):
        yield make


@pytest.fixture
async def client(make_client: MakeClient) -> EitherClient:
    """A sync or an async client with the default options."""
    return make_client()


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    """A running ``paysdk.sandbox.Sandbox`` with the bundled seed on a free loopback port."""
    with Sandbox() as running:
        yield running


# --- callbacks: the merchant of tests/support/merchant.py and a sandbox to verify against ----


@pytest.fixture(scope="module")
def callback_service() -> Iterator[Sandbox]:
    """A sandbox holding the payments behind support.merchant.CALLBACK_CASES, one per module."""
    with Sandbox() as running:
        add_service_payments(running)
        yield running


@pytest.fixture
def callback_sandbox(callback_service: Sandbox) -> Sandbox:
    """The module's callback sandbox, with no faults and an empty request log."""
    callback_service.clear_faults()
    callback_service.clear_requests()
    return callback_service


@pytest.fixture
def shop() -> Shop:
    """The merchant's order table (tests.support.merchant.SHOP_ORDERS), nothing fulfilled yet."""
    return Shop(*SHOP_ORDERS)


# --- hostile servers: tests/support/hostile.py ------------------------------------------------


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    """A hostile HTTP server on a free loopback port; ``hostile.script(...)`` says what it does."""
    with HostileServer() as server:
        yield server


# --- TLS and proxies: tests/support/tls.py, tests/support/proxy.py ----------------------------


@pytest.fixture(scope="session")
def tls_ca() -> trustme.CA:
    """A throwaway certificate authority for the session (trustme): only these tests trust it."""
    import trustme

    return trustme.CA()


@pytest.fixture(scope="session")
def tls_server_context(tls_ca: trustme.CA) -> ssl.SSLContext:
    """A server-side context with ``tls_ca``'s certificate for 127.0.0.1, ::1 and localhost;
    shared by the session, so read it, never change it."""
    from tests.support.tls import server_context

    return server_context(tls_ca)


@pytest.fixture
def tls_client_context(tls_ca: trustme.CA) -> ssl.SSLContext:
    """A client context that trusts ``tls_ca`` and nothing else; each test's own to change."""
    from tests.support.tls import client_context

    return client_context(tls_ca)


@pytest.fixture(scope="session")
def tls_ca_bundle(tls_ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The path of a PEM file holding ``tls_ca``'s certificate: for ``verify="<path>"`` and
    ``SSL_CERT_FILE``."""
    from tests.support.tls import write_bundle

    return str(write_bundle(tls_ca, tmp_path_factory.mktemp("tls") / "ca.pem"))


@pytest.fixture
def tls_sandbox(tls_server_context: ssl.SSLContext) -> Iterator[Sandbox]:
    """A running sandbox serving HTTPS with ``tls_ca``'s certificate: ``base_url`` is
    ``https://127.0.0.1:PORT``."""
    with Sandbox(ssl_context=tls_server_context) as running:
        yield running


@pytest.fixture
def forward_proxy() -> Iterator[ForwardProxy]:
    """A running forward proxy on 127.0.0.1 that needs no credentials (tests/support/proxy.py);
    ``ForwardProxy(credentials=(user, password))`` makes one that does."""
    with ForwardProxy() as proxy:
        yield proxy


@pytest.fixture
def clean_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy variable in the environment (either case), so a test sets exactly the ones it
    means to."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


# --- the fulfilment ledger: a real PostgreSQL server and SQLite files -------------------------


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on 127.0.0.1 for the session (tests/support/postgres.py)."""
    from tests.support.postgres import throwaway_cluster

    with throwaway_cluster() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a test's ledger lives: a fresh SQLite file, or a fresh database on the server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.db'}"
    from tests.support.postgres import fresh_database

    url: str = request.getfixturevalue("postgres_url")
    return fresh_database(url)


@pytest.fixture(scope="session", params=["transaction", "session"])
def pgbouncer_url(request: pytest.FixtureRequest, postgres_url: str) -> Iterator[str]:
    """A throwaway PgBouncer in front of ``postgres_url``, with its default settings, in
    transaction pool mode (4 server connections, fewer than the race's workers) and in session
    mode: for each, its URL of the ``postgres`` database (tests/support/postgres.py)."""
    from tests.support.postgres import throwaway_pgbouncer

    mode: str = request.param
    settings = {"default_pool_size": 4} if mode == "transaction" else {}
    with throwaway_pgbouncer(postgres_url, mode, settings) as url:
        yield url


@pytest.fixture
def pooled_ledger_url(pgbouncer_url: str, postgres_url: str) -> str:
    """A fresh database on the server, reached through ``pgbouncer_url``."""
    from tests.support.postgres import fresh_database, through

    return through(pgbouncer_url, fresh_database(postgres_url))

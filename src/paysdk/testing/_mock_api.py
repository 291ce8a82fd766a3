"""``MockPaymentAPI``: the payment service in memory, on respx, answering by the sandbox's own rules
(``paysdk._service.api.answer_api``), so tests against either see the same bodies. It uses its own
``respx.MockRouter``, never respx's global one, so nothing it sets up outlives ``stop``."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from urllib.parse import quote, urlsplit

import httpx
import respx
from typing_extensions import Self, Unpack

from .._client import configure
from .._client._async.client import AsyncClient
from .._client._sync.client import Client
from .._client.configure import DEFAULT_MAX_RETRIES, check_base_url
from .._client.options import TimeoutTypes
from .._core import reference_problem
from .._core.config import check_secret_key
from .._errors import ConfigurationError
from .._errors.quoting import quoted
from .._service.api import api_route, authorized, new_request_id, redacted
from .._service.faults import MAX_TIMES, Fault, FaultBook, answer_request_id
from .._service.records import PaymentRecord, SeedError, records_of
from .._service.store import PaymentStore, StandIn
from .._transport import httpx_timeout
from . import _no_proxy as no_proxy
from ._factories import PaymentFields, payment_record
from ._mock_clients import MockAsyncClient, MockClient, MockClientT
from ._mock_requests import Endpoint, NotTheFakesRequest, RecordedCall, ask_first, transport_error

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_SECRET_KEY", "MockPaymentAPI"]

DEFAULT_BASE_URL = "https://api.paysdk.test"
"""A host that cannot exist (``.test`` is reserved), so a request the fake misses fails loudly."""
DEFAULT_SECRET_KEY = "sk_test_paysdk_mock"  # noqa: S105 - a fixed test key, on purpose
FAKE_DEFAULTS = {
    "secret_key": ("the fake's fixed test key", "the key its clients must send"),
    "base_url": (f"{DEFAULT_BASE_URL}, a host that never resolves", "the URL it answers at"),
}
"""What a message about an empty argument offers: the fake's default, and what to give instead."""
DEFAULT_TIMEOUT = httpx_timeout(configure.DEFAULT_TIMEOUT)
"""A client's default timeout, as the ``timeout`` argument takes it."""


class MockPaymentAPI(StandIn[PaymentStore]):
    """The service's verify and list endpoints in memory, for fast tests of code using paysdk.

    ```python
    with MockPaymentAPI() as api:
        api.add_payment(reference="order-7", amount=5000, currency="USD")
        with api.client() as client:
            assert client.verify("order-7").succeeded
    ```

    While running, every httpx request to ``base_url`` (from any ``paysdk.Client`` or
    ``AsyncClient``, also ones your code makes) is answered here. Requests to other hosts are
    left to other respx routers, and refused by respx if none answers them. Its host is added to
    ``NO_PROXY`` meanwhile, so that a client made then never sends its requests to a proxy the
    environment names (as CI machines often do): they could not reach the fake through it.

    Args:
        secret_key: the key clients must send (a fixed test key by default).
        base_url: the URL it answers at (a made-up host by default).
        payments: what it holds at the start.

    Raises:
        ConfigurationError: a malformed ``secret_key`` or ``base_url``.
    """

    def __init__(
        self,
        *,
        secret_key: str = DEFAULT_SECRET_KEY,
        base_url: str = DEFAULT_BASE_URL,
        payments: Iterable[PaymentRecord] = (),
    ) -> None:
        given: dict[str, object] = {"secret_key": secret_key, "base_url": base_url}
        for name, value in given.items():
            if value is None or (isinstance(value, str) and not value.strip()):
                default, wanted = FAKE_DEFAULTS[name]
                raise ConfigurationError(
                    f"MockPaymentAPI({name}={value!r}): leave {name} out for {default}, or give "
                    f"{wanted}"
                )
        self.secret_key: str = check_secret_key(secret_key)
        self.base_url: str = check_base_url(base_url, allow_insecure_http=True)
        parts = urlsplit(self.base_url)
        self._host = parts.hostname or ""
        self._base_path = parts.path.rstrip("/")
        self._lock = threading.Lock()
        self._payments = PaymentStore()
        self._faults = FaultBook()
        self._calls: list[RecordedCall] = []
        self._waits: list[float] = []
        self._clients: list[Client] = []
        self._router = respx.MockRouter(assert_all_called=False, assert_all_mocked=True)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        self._router.route(scheme=parts.scheme, host=parts.hostname, port=port).mock(
            side_effect=self._answer
        )
        self._router.route().mock(side_effect=self._refuse)
        self._running = False
        self._no_proxy_before: no_proxy.Changed | None = None
        for record in records_of(payments):
            self.add_payment(record)

    def __repr__(self) -> str:
        return f"<MockPaymentAPI base_url={self.base_url!r} secret_key=<hidden>>"

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> Self:
        """Start answering requests to ``base_url`` (patches httpx's transports through respx)."""
        if not self._running:
            self._router.start()
            ask_first(self._router)
            self._no_proxy_before = no_proxy.bypass(self._host)
            self._running = True
        return self

    def stop(self) -> None:
        """Stop answering and close the sync clients ``client`` made. Safe to call twice."""
        for client in self._clients:
            client.close()
        self._clients.clear()
        if self._running:
            self._router.stop(clear=False, reset=False)
            no_proxy.restore(self._no_proxy_before)
            self._no_proxy_before = None
            self._running = False

    @property
    def running(self) -> bool:
        """Whether it is answering requests (between ``start`` and ``stop``)."""
        return self._running

    # --- clients ------------------------------------------------------------------------------

    def client(
        self,
        *,
        secret_key: str | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: TimeoutTypes = DEFAULT_TIMEOUT,
        default_headers: Mapping[str, str] | None = None,
    ) -> Client:
        """A ``paysdk.Client`` pointed at the fake with its key (or ``secret_key``).

        Its retries do not sleep: each wait is appended to ``waits`` instead, so a test of
        retry behaviour is instant and can still check the waits. Closed by ``stop``.

        Args:
            secret_key: the key the client sends; the fake's own by default (another one gets
                401s).
            max_retries: as for ``paysdk.Client``.
            timeout: as for ``paysdk.Client``.
            default_headers: headers sent with every request.

        Returns:
            The client, which ``stop`` closes.
        """
        client = self._made(MockClient, secret_key, max_retries, timeout, default_headers)
        self._clients.append(client)
        return client

    def async_client(
        self,
        *,
        secret_key: str | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: TimeoutTypes = DEFAULT_TIMEOUT,
        default_headers: Mapping[str, str] | None = None,
    ) -> AsyncClient:
        """A ``paysdk.AsyncClient`` like ``client``; close it yourself (``async with``).

        Args:
            secret_key: the key the client sends; the fake's own by default (another one gets
                401s).
            max_retries: as for ``paysdk.Client``.
            timeout: as for ``paysdk.Client``.
            default_headers: headers sent with every request.

        Returns:
            The client, which you close.
        """
        return self._made(MockAsyncClient, secret_key, max_retries, timeout, default_headers)

    def _made(
        self,
        kind: type[MockClientT],
        secret_key: str | None,
        max_retries: int,
        timeout: TimeoutTypes,
        default_headers: Mapping[str, str] | None,
    ) -> MockClientT:
        """A ``kind`` client on the fake, for ``client`` and ``async_client`` (their arguments)."""
        changed = no_proxy.bypass(self._host)  # the client reads proxies when it is made
        try:
            client = kind(
                secret_key=self.secret_key if secret_key is None else secret_key,
                base_url=self.base_url,
                max_retries=max_retries,
                timeout=timeout,
                default_headers=default_headers,
                allow_insecure_http=True,
            )
        finally:
            no_proxy.restore(changed)
        client._waits = self._waits
        return client

    @property
    def waits(self) -> list[float]:
        """Seconds the clients from ``client`` / ``async_client`` would have slept."""
        with self._lock:
            return list(self._waits)

    # --- payments -----------------------------------------------------------------------------

    def add_payment(
        self, payment: PaymentRecord | str | None = None, /, **fields: Unpack[PaymentFields]
    ) -> PaymentRecord:
        """Add (or replace) a payment: a record, or fields for ``payment_record``.

        ``api.add_payment("order-7", amount=500, success=False)``; a bare
        ``api.add_payment()`` adds a realistic successful card payment.

        Args:
            payment: a record, the reference of a new one, or ``None`` for a made-up one.
            **fields: [`PaymentFields`][paysdk.testing.PaymentFields] for the new record (not
                with a record).

        Returns:
            The record as stored.

        Raises:
            ConfigurationError: a record and fields both, the reference twice, fields out of
                range, or metadata that is not JSON.
        """
        if isinstance(payment, PaymentRecord):
            if fields:
                raise ConfigurationError("give a PaymentRecord or fields, not both")
            try:
                return self._payments.put(payment)
            except SeedError as exc:
                raise ConfigurationError(f"not a valid payment: {exc}") from None
        if isinstance(payment, str):
            if "reference" in fields:
                raise ConfigurationError("give the reference once")
            fields["reference"] = payment
        elif payment is not None:
            raise ConfigurationError(
                f"add_payment takes a PaymentRecord or a reference, not {type(payment).__name__}"
            )
        return self._payments.put(payment_record(**fields))

    # --- failures -----------------------------------------------------------------------------

    def inject(
        self,
        fault: Fault,
        *,
        times: int | None = 1,
        reference: str | None = None,
        endpoint: Endpoint | None = None,
    ) -> None:
        """Fail the next ``times`` calls (``None``: until cleared) with ``fault``.

        Only verify calls for ``reference``, or only calls to one ``endpoint``, if given. Any
        sandbox ``Fault``: ``Fault.timeout()``, ``Fault.connection_reset()``,
        ``Fault.server_error(503)``, ``Fault.rate_limited(retry_after=2)``, ``Fault.html_502()``.

        Args:
            fault: what goes wrong ([`Fault`][paysdk.sandbox.Fault]).
            times: how many calls it fails; ``None``: until cleared.
            reference: only verify calls for this reference.
            endpoint: only calls to ``"verify"`` or ``"list"``.

        Raises:
            ConfigurationError: ``times`` not an integer from 1 to 1,000,000 (nor ``None``), a
                reference with ``endpoint="list"``, an unknown endpoint, or a malformed reference.
            TypeError: ``fault`` is not a ``Fault`` (``Fault.timeout`` rather than
                ``Fault.timeout()``).
        """
        if times is not None and (type(times) is not int or not 1 <= times <= MAX_TIMES):
            raise ConfigurationError(
                f"inject(times={quoted(times)}): times is how many calls the fault fails, an "
                f"integer from 1 to {MAX_TIMES}, or None to fail every call until clear_faults()"
            )
        if reference is not None and endpoint not in (None, "verify"):
            raise ConfigurationError("a reference names a verify call; leave endpoint out")
        if endpoint not in (None, "verify", "list"):
            raise ConfigurationError(f"endpoint must be 'verify' or 'list', not {quoted(endpoint)}")
        if reference is not None:
            problem = reference_problem(reference)
            if problem is not None:
                raise ConfigurationError(f"reference: {problem}")
            path: str | None = "/payment/" + quote(reference, safe="")
        else:
            path = {None: None, "verify": "/payment/*", "list": "/payments"}[endpoint]
        self._faults.add(fault, path=path, times=times)

    def clear_faults(self) -> None:
        """Forget every fault waiting to happen."""
        self._faults.clear()

    # --- calls --------------------------------------------------------------------------------

    @property
    def calls(self) -> list[RecordedCall]:
        """Every request received, oldest first (also ones that were failed on purpose)."""
        with self._lock:
            return list(self._calls)

    def verified_references(self) -> list[str]:
        """The references verify was called with, in order (repeats included)."""
        return [call.reference for call in self.calls if call.reference is not None]

    def clear_calls(self) -> None:
        """Forget the calls and the waits recorded so far."""
        with self._lock:
            self._calls.clear()
            self._waits.clear()

    def reset(self) -> None:
        """No payments, no faults, no calls, no waits: as new (the clients stay usable)."""
        self.clear_faults()
        self.clear_calls()
        self._payments.reset()

    # --- answering ----------------------------------------------------------------------------

    def _refuse(self, request: httpx.Request) -> httpx.Response:
        raise NotTheFakesRequest(
            f"RESPX: {request!r} not mocked! paysdk_api "
            f"(paysdk.testing.MockPaymentAPI) answers only {self.base_url} and refuses every other "
            "host, so that no test reaches a network by accident; mock this one with respx "
            "(respx_mock), or, for the sandbox, use paysdk_sandbox in a test without paysdk_api"
        )

    def _answer(self, request: httpx.Request) -> httpx.Response:
        raw_path = request.url.raw_path.split(b"?", 1)[0].decode("ascii")
        path = raw_path[len(self._base_path) :] if raw_path.startswith(self._base_path) else ""
        route = api_route(path)
        authorization = request.headers.get("Authorization")
        fault = self._faults.take(path) if path else None
        failure = None if fault is None else transport_error(fault, request)
        request_id = new_request_id()
        call = RecordedCall(
            method=request.method,
            path=path or raw_path,
            endpoint=route.endpoint if route else None,
            reference=route.reference if route else None,
            headers={name: redacted(name, value) for name, value in request.headers.items()},
            authorized=authorized(authorization, self.secret_key),
            request_id=None if failure is not None else answer_request_id(fault, request_id),
        )
        with self._lock:
            self._calls.append(call)
        if failure is not None:
            raise failure
        reply = self._answer_api(request.method, path or raw_path, authorization, fault)
        reply = reply.with_request_id(request_id)
        return httpx.Response(reply.status, content=reply.body, headers=dict(reply.headers))

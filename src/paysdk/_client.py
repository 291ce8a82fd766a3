"""``Client`` and ``AsyncClient``: thin shells that send and sleep, and leave the rest to ``_core``.

Each public method builds a plan in :mod:`paysdk._core` and runs it; the shells differ only in
how they send a request and how they wait, so a behaviour fixed in the core is fixed for both.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Generic, TypeVar, cast

import httpx
from typing_extensions import Self, Unpack

from . import _core
from ._callbacks import parse_callback
from ._config import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, CallOptions, Config, TimeoutTypes
from ._core import Expected, Plan, Send, Sleep
from ._errors import ClientClosedError, ConfigurationError
from ._models import ListedPayment, VerifiedPayment

__all__ = ["AsyncClient", "Client"]

T = TypeVar("T")
HttpClientT = TypeVar("HttpClientT", httpx.Client, httpx.AsyncClient)

Lookup = Callable[[str], object]
"""Finds what the merchant expects for a reference: an ``Expected``, any object or mapping with
``amount`` and ``currency`` (such as the merchant's order), or ``None`` for an unknown order."""


class _BaseClient(Generic[HttpClientT]):
    """What both clients share: configuration, options and their presentation."""

    _config: Config
    _http: HttpClientT
    _owns_http: bool
    _http_client_type: type[HttpClientT]

    def __init__(
        self,
        *,
        secret_key: str | None = None,
        base_url: str | None = None,
        timeout: TimeoutTypes = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        default_headers: Mapping[str, str] | None = None,
        http_client: HttpClientT | None = None,
        allow_insecure_http: bool = False,
    ) -> None:
        """``secret_key`` and ``base_url`` default to PAYSDK_SECRET_KEY and PAYSDK_BASE_URL."""
        self._config = Config.create(
            secret_key=secret_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            default_headers=default_headers,
            allow_insecure_http=allow_insecure_http,
        )
        wanted = self._http_client_type
        if http_client is not None and not isinstance(http_client, wanted):
            raise ConfigurationError(
                f"{type(self).__name__} needs http_client to be an {wanted.__module__}."
                f"{wanted.__name__}, not {type(http_client).__name__}"
            )
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else wanted()

    @property
    def base_url(self) -> str:
        return self._config.base_url

    @property
    def timeout(self) -> httpx.Timeout:
        return self._config.timeout

    @property
    def max_retries(self) -> int:
        return self._config.max_retries

    def with_options(self, **options: Unpack[CallOptions]) -> Self:
        """A client sharing this one's connections, with other defaults (timeout, retries...).

        The copy lives as long as this client: closing this one closes the copy's connections.
        """
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._config = self._config.with_options(options)
        clone._owns_http = False
        return clone

    def __repr__(self) -> str:
        return (
            f"<paysdk.{type(self).__name__} base_url={self.base_url!r} "
            f"max_retries={self.max_retries} secret_key=<hidden>>"
        )

    def _options(self, options: CallOptions) -> Config:
        if self._http.is_closed:
            raise ClientClosedError(
                f"this {type(self).__name__} is closed (or the client it was copied from is); "
                "make a new one"
            )
        return self._config.with_options(options)


class Client(_BaseClient[httpx.Client]):
    """The synchronous client. Reuse one per process: it keeps connections open."""

    _http_client_type = httpx.Client

    def verify(self, reference: str, **options: Unpack[CallOptions]) -> VerifiedPayment:
        """The payment with this reference, as the service describes it now."""
        return self._run(_core.verify(self._options(options), reference))

    def list_payments(self, **options: Unpack[CallOptions]) -> list[ListedPayment]:
        """Every payment the service lists for this merchant."""
        return self._run(_core.list_payments(self._options(options)))

    def confirm(
        self,
        reference: str,
        *,
        amount: int | None = None,
        currency: str | None = None,
        **options: Unpack[CallOptions],
    ) -> VerifiedPayment:
        """Verify, and return the payment only if it succeeded with this amount and currency.

        Raises PaymentFailedError or PaymentMismatchError (with expected and actual values).
        """
        expected = Expected(amount=amount, currency=currency)
        return self._run(_core.confirm(self._options(options), reference, expected))

    def verify_callback(
        self,
        source: object,
        *,
        amount: int | None = None,
        currency: str | None = None,
        lookup: Lookup | None = None,
        **options: Unpack[CallOptions],
    ) -> VerifiedPayment:
        """Turn a callback request into a payment the service confirms, never trusting the caller.

        ``source`` is anything :func:`paysdk.parse_callback` reads. Give the expected ``amount``
        and ``currency``, or a ``lookup`` that finds them from the reference (your order table).
        """
        reference = parse_callback(source)
        found = lookup(reference) if lookup is not None else None
        expected = _core.expected_for(reference, amount, currency, lookup is not None, found)
        return self._run(_core.confirm(self._options(options), reference, expected))

    def close(self) -> None:
        """Close the connections, unless the http_client was given (then it is yours to close)."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def _run(self, plan: Plan[T]) -> T:
        try:
            step = next(plan)
            while True:
                if isinstance(step, Sleep):
                    self._sleep(step.seconds)
                    step = plan.send(None)
                else:
                    step = plan.send(self._send(step))
        except StopIteration as done:
            return cast(T, done.value)

    def _send(self, request: Send) -> httpx.Response | httpx.HTTPError:
        try:
            return self._http.request(
                request.method, request.url, headers=request.headers, timeout=request.timeout
            )
        except httpx.HTTPError as exc:
            return exc


class AsyncClient(_BaseClient[httpx.AsyncClient]):
    """The asynchronous client: the same methods as :class:`Client`, awaitable."""

    _http_client_type = httpx.AsyncClient

    async def verify(self, reference: str, **options: Unpack[CallOptions]) -> VerifiedPayment:
        """The payment with this reference, as the service describes it now."""
        return await self._run(_core.verify(self._options(options), reference))

    async def list_payments(self, **options: Unpack[CallOptions]) -> list[ListedPayment]:
        """Every payment the service lists for this merchant."""
        return await self._run(_core.list_payments(self._options(options)))

    async def confirm(
        self,
        reference: str,
        *,
        amount: int | None = None,
        currency: str | None = None,
        **options: Unpack[CallOptions],
    ) -> VerifiedPayment:
        """Verify, and return the payment only if it succeeded with this amount and currency."""
        expected = Expected(amount=amount, currency=currency)
        return await self._run(_core.confirm(self._options(options), reference, expected))

    async def verify_callback(
        self,
        source: object,
        *,
        amount: int | None = None,
        currency: str | None = None,
        lookup: Lookup | None = None,
        **options: Unpack[CallOptions],
    ) -> VerifiedPayment:
        """Turn a callback request into a confirmed payment; ``lookup`` may be async."""
        reference = parse_callback(source)
        found = lookup(reference) if lookup is not None else None
        if inspect.isawaitable(found):
            found = await found
        expected = _core.expected_for(reference, amount, currency, lookup is not None, found)
        return await self._run(_core.confirm(self._options(options), reference, expected))

    async def close(self) -> None:
        """Close the connections, unless the http_client was given (then it is yours to close)."""
        if self._owns_http:
            await self._http.aclose()

    aclose = close

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _sleep(self, seconds: float) -> None:
        import anyio  # httpx depends on it; imported here so sync users never load it

        await anyio.sleep(seconds)

    async def _run(self, plan: Plan[T]) -> T:
        try:
            step = next(plan)
            while True:
                if isinstance(step, Sleep):
                    await self._sleep(step.seconds)
                    step = plan.send(None)
                else:
                    step = plan.send(await self._send(step))
        except StopIteration as done:
            return cast(T, done.value)

    async def _send(self, request: Send) -> httpx.Response | httpx.HTTPError:
        try:
            return await self._http.request(
                request.method, request.url, headers=request.headers, timeout=request.timeout
            )
        except httpx.HTTPError as exc:
            return exc

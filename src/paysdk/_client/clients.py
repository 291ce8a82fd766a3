"""``Client`` and ``AsyncClient``: thin shells that send and sleep, and leave the rest to ``_core``.

Each public method builds a plan in ``paysdk._core`` and runs it; the shells differ only in
how they send a request and how they wait, so a behaviour fixed in the core is fixed for both.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from inspect import isawaitable
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
from typing_extensions import Self, Unpack

from .._lazy import publish
from .base import BaseClient, HttpBackend, Lookup, load_engine
from .options import CallOptions

if TYPE_CHECKING:  # the engine: loaded with the first client made (see _load_engine)
    from .. import _core, _errors
    from .._core.plans import Plan
    from .._core.steps import Send
    from .._models.listed import ListedPayment
    from .._models.verified import VerifiedPayment
    from .._transport import httpx_common as _httpx
    from .._transport import httpx_sync as _httpx_sync
    from .._transport._async import drive as _adrive
    from .._transport._async.drive import AsyncItemIterator
    from .._transport._sync import drive as _drive
    from .._transport._sync.drive import ItemIterator
    from .._transport.async_streams import AsyncSender
    from .._transport.httpx_sync import SyncHttpxSender
    from .._transport.network import Network
    from . import raw as _raw
    from . import tracing as _tracing
    from .bulk import AsyncBulk, SyncBulk
    from .raw import AsyncRawClient, RawClient
    from .tracing import CallSpan

__all__ = ["AsyncClient", "Client", "Lookup"]

T = TypeVar("T")


def _load_engine() -> None:
    """Import what clients run on, once, when the first one is made.

    ``import paysdk`` and the names it exports stay cheap for a program that only imports it
    (a CLI's ``--help``, a web app's start-up, a type checker's plugin); the core, the senders
    and the models then load with the first client, not with each call.
    """
    global _core, _errors, _drive, _httpx, _httpx_sync, _raw, _tracing
    load_engine()
    from .. import _core, _errors
    from .._transport import httpx_common as _httpx
    from .._transport import httpx_sync as _httpx_sync
    from .._transport._sync import drive as _drive
    from . import raw as _raw
    from . import tracing as _tracing


class Client(BaseClient[httpx.Client, "SyncHttpxSender"]):
    """The synchronous client. Reuse one per process: it keeps connections open."""

    _load = staticmethod(_load_engine)

    _http_client_type = httpx.Client
    _sender: SyncHttpxSender

    def _connect(
        self, http_client: httpx.Client | None, backend: HttpBackend, network: Network
    ) -> None:
        if http_client is not None:
            self._sender = _httpx_sync.SyncHttpxSender(http_client)
        else:
            defaults = self._httpx_defaults()  # sent by the client itself, not per request
            self._sender = _httpx_sync.SyncHttpxSender(
                _httpx_sync.own_client(network, defaults), defaults=defaults
            )

    @property
    def _http(self) -> httpx.Client:
        return self._sender.http

    def verify(self, reference: str, **options: Unpack[CallOptions]) -> VerifiedPayment:
        """The payment with this reference, as the service describes it now.

        Args:
            reference: the payment's reference (your order id, as you gave it to the service).
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]): ``timeout``,
                ``max_retries``, ``extra_headers``, ``secret_key``, ``base_url``...

        Returns:
            The payment; check ``succeeded`` (or use ``confirm``) before fulfilling it.

        Raises:
            InvalidReferenceError: ``reference`` cannot be a payment reference (before any
                request).
            PaymentNotFoundError: the service does not know the reference.
            APIError: the service answered with an error: a subclass says which
                ([`AuthenticationError`][paysdk.AuthenticationError] for a wrong key,
                [`ServerError`][paysdk.ServerError] and
                [`RateLimitError`][paysdk.RateLimitError] after the retries...).
            APIConnectionError: no answer (refused, reset, TLS), after the retries;
                [`APITimeoutError`][paysdk.APITimeoutError] for none in time.
            ConfigurationError: an override in ``options`` that cannot work.
            ClientClosedError: the client is closed.
        """
        plan = _core.verify(self._options(options), reference)
        return self._run(plan, _tracing.call_span("verify", reference))

    def list_payments(self, **options: Unpack[CallOptions]) -> list[ListedPayment]:
        """Every payment the service lists for this merchant, read whole (see ``iter_payments``).

        Args:
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]): ``timeout``,
                ``max_retries``, ``extra_headers``, ``secret_key``, ``base_url``...

        Returns:
            The listed payments, in the service's order.

        Raises:
            ListUnavailableError: the service's list is unavailable (after the retries).
            ResponseTooLargeError: the list is past ``max_response_bytes``: use
                ``iter_payments``.
            APIError: the service answered with an error: a subclass says which
                ([`AuthenticationError`][paysdk.AuthenticationError] for a wrong key,
                [`ServerError`][paysdk.ServerError] and
                [`RateLimitError`][paysdk.RateLimitError] after the retries...).
            APIConnectionError: no answer (refused, reset, TLS), after the retries;
                [`APITimeoutError`][paysdk.APITimeoutError] for none in time.
            ConfigurationError: an override in ``options`` that cannot work.
            ClientClosedError: the client is closed.
        """
        return self._run(
            _core.list_payments(self._options(options)), _tracing.call_span("list_payments")
        )

    def iter_payments(self, **options: Unpack[CallOptions]) -> ItemIterator[ListedPayment]:
        """Every listed payment, one at a time as the body streams in: memory stays flat.

        Use it in a ``with`` block (or ``close()`` it) if you may stop early. A failure before
        the first payment is retried; after it, the error says how many payments came first.

        Args:
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]): ``timeout``,
                ``max_retries``, ``extra_headers``, ``secret_key``, ``base_url``...

        Returns:
            An iterator of [`ListedPayment`][paysdk.ListedPayment]s, also a context manager;
            nothing is sent until the first ``next()``. Iterating raises what
            ``list_payments`` raises.
        """
        plan = _core.iter_payments(self._options(options))
        span = _tracing.call_span("iter_payments", lazy=True)
        send, sleep = span.sending(self._sender.send), span.sleeping(self._sleep)
        return _drive.ItemIterator(plan, send, sleep, span.end)

    def verify_many(
        self,
        references: Iterable[str],
        *,
        concurrency: int = 8,
        **options: Unpack[CallOptions],
    ) -> SyncBulk:
        """Verify many references on ``concurrency`` threads; results come in input order.

        Each result holds the payment or the typed error for that reference; at most
        ``concurrency`` calls are in flight and as many results wait, whatever the input's size.

        Args:
            references: the references to verify; read lazily, so it may be a generator.
            concurrency: how many calls may be in flight at once.
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]): ``timeout``,
                ``max_retries``, ``extra_headers``, ``secret_key``, ``base_url``...

        Returns:
            An iterator of [`VerifyResult`][paysdk.VerifyResult]s in input order; ``close()`` it
            (or use ``with``) to stop early.

        Raises:
            TypeError: ``references`` is a ``str`` or ``bytes``, whose characters are no
                references; raised before any request.
            ConfigurationError: ``concurrency`` is not a positive int, or an override cannot
                work. Each reference's own failure is in its result, not raised.
            ClientClosedError: the client is closed.
        """
        from .bulk import SyncBulk

        config = self._options(options)
        send = self._sender.send
        return SyncBulk(
            references,
            lambda ref, sleep: self._run(
                _core.verify_identified(config, ref), _tracing.call_span("verify", ref), sleep, send
            ),
            concurrency,
        )

    def confirm(
        self,
        reference: str,
        *,
        amount: int | None = None,
        currency: str | None = None,
        **options: Unpack[CallOptions],
    ) -> VerifiedPayment:
        """Verify, and return the payment only if it succeeded with this amount and currency.

        Args:
            reference: the payment's reference.
            amount: the amount expected, in the unit the service reports; ``None``: not checked.
            currency: the currency expected: three ASCII letters, in any case; ``None``: not
                checked.
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]): ``timeout``,
                ``max_retries``, ``extra_headers``, ``secret_key``, ``base_url``...

        Returns:
            The payment, succeeded and matching.

        Raises:
            PaymentFailedError: the service says the payment did not succeed.
            PaymentMismatchError: its amount or currency differ (``expected`` and ``actual``
                say how).
            InvalidReferenceError: ``reference`` cannot be a payment reference.
            PaymentNotFoundError: the service does not know the reference.
            ConfigurationError: ``amount`` is not a whole number, ``currency`` is not three
                ASCII letters, or an override cannot work.
            APIError: another error answer (see ``verify``).
            APIConnectionError: no answer, after the retries.
        """
        expected = _core.Expected(amount=amount, currency=currency)
        plan = _core.confirm(self._options(options), reference, expected)
        return self._run(plan, _tracing.call_span("confirm", reference))

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

        Give the expected ``amount`` and ``currency``, or a ``lookup`` that finds them from the
        reference (your order table).

        Args:
            source: the callback: a request of any framework, a query string, a mapping or a
                reference (whatever [`parse_callback`][paysdk.parse_callback] reads).
            amount: the amount expected; give it with ``currency``, or give ``lookup``.
            currency: the currency expected: three ASCII letters, in any case.
            lookup: finds what to expect from the reference ([`Lookup`][paysdk.Lookup]): your
                order, a mapping, an [`Expected`][paysdk.Expected], or ``None`` for no such
                order.
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]): ``timeout``,
                ``max_retries``, ``extra_headers``, ``secret_key``, ``base_url``...

        Returns:
            The payment, succeeded and matching what was expected.

        Raises:
            InvalidCallbackError: the request holds no single, well-formed reference.
            UnknownOrderError: ``lookup`` found no order for the reference.
            PaymentFailedError: the service says the payment did not succeed.
            PaymentMismatchError: its amount or currency differ from the order's.
            PaymentNotFoundError: the service does not know the reference.
            ConfigurationError: both ``lookup`` and ``amount``/``currency`` given, or the
                order ``lookup`` returned has no amount or currency, or its currency is not
                three ASCII letters. An async ``lookup`` needs ``AsyncClient``.
            APIError: another error answer (see ``verify``).
            APIConnectionError: no answer, after the retries.
        """
        span = _tracing.call_span("verify_callback")
        with span.if_raised():  # a refused callback is the span's outcome too
            reference = _core.parse_callback(source)
            span.describe(reference)
            found = lookup(reference) if lookup is not None else None
            expected = _core.expected_for(reference, amount, currency, lookup is not None, found)
            plan = _core.confirm(self._options(options), reference, expected)
        return self._run(plan, span)

    @property
    def with_raw_response(self) -> RawClient:
        """The same calls, answering with the raw response (status, headers, elapsed...)."""
        return _raw.RawClient(self._options, self._run)

    def close(self) -> None:
        """Close the connections, unless the http_client was given (then it is yours to close)."""
        if self._owns_http:
            self._sender.close()

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

    def _run(
        self,
        plan: Plan[T],
        span: CallSpan | None = None,
        sleep: Callable[[float], None] | None = None,
        send: Callable[[Send], Any] | None = None,
    ) -> T:
        span, sleep, send = (
            span or _tracing.UNTRACED,
            sleep or self._sleep,
            send or self._sender.send,
        )
        with span:
            return _drive.run(plan, span.sending(send), span.sleeping(sleep))


class AsyncClient(BaseClient[httpx.AsyncClient, "AsyncSender"]):
    """The asynchronous client: the same methods as ``Client``, awaitable.

    ``http_backend="aiohttp"`` (with the ``aiohttp`` extra) sends through aiohttp instead of
    httpx: the same behaviour, several times the throughput under concurrency. One
    ``AsyncClient`` belongs to one event loop.
    """

    _http_client_type = httpx.AsyncClient
    _load = staticmethod(_load_engine)
    _backends = ("httpx", "aiohttp")
    _sender: AsyncSender

    def _backend_name(self, backend: HttpBackend) -> str:
        if backend == "aiohttp":  # the extra, loaded only when asked for
            from .._transport import aiohttp_sender

            return aiohttp_sender.backend()
        return _httpx.BACKEND

    def _connect(
        self, http_client: httpx.AsyncClient | None, backend: HttpBackend, network: Network
    ) -> None:
        global _adrive  # the async loops: loaded with the first AsyncClient, not a sync one
        from .._transport._async import drive as _adrive

        if backend == "aiohttp":
            from .._transport.aiohttp_sender import AiohttpSender

            self._sender = AiohttpSender(network)
        else:
            from .._transport.httpx_async import AsyncHttpxSender, own_async_client

            if http_client is not None:
                self._sender = AsyncHttpxSender(http_client)
            else:
                defaults = self._httpx_defaults()
                self._sender = AsyncHttpxSender(
                    own_async_client(network, defaults), defaults=defaults
                )

    @property
    def _http(self) -> httpx.AsyncClient:
        http = getattr(self._sender, "http", None)
        if not isinstance(http, httpx.AsyncClient):
            raise AttributeError("an aiohttp-backed AsyncClient has no httpx client")
        return http

    async def verify(self, reference: str, **options: Unpack[CallOptions]) -> VerifiedPayment:
        """The payment with this reference, as the service describes it now.

        Args:
            reference: the payment's reference (your order id, as you gave it to the service).
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]): ``timeout``,
                ``max_retries``, ``extra_headers``, ``secret_key``, ``base_url``...

        Returns:
            The payment; check ``succeeded`` (or use ``confirm``) before fulfilling it.

        Raises:
            InvalidReferenceError: ``reference`` cannot be a payment reference (before any
                request).
            PaymentNotFoundError: the service does not know the reference.
            APIError: the service answered with an error: a subclass says which
                ([`AuthenticationError`][paysdk.AuthenticationError] for a wrong key,
                [`ServerError`][paysdk.ServerError] and
                [`RateLimitError`][paysdk.RateLimitError] after the retries...).
            APIConnectionError: no answer (refused, reset, TLS), after the retries;
                [`APITimeoutError`][paysdk.APITimeoutError] for none in time.
            ConfigurationError: an override in ``options`` that cannot work.
            ClientClosedError: the client is closed.
            EventLoopError: the client is used from an event loop other than its own.
        """
        plan = _core.verify(self._options(options), reference)
        return await self._run(plan, _tracing.call_span("verify", reference))

    async def list_payments(self, **options: Unpack[CallOptions]) -> list[ListedPayment]:
        """Every payment the service lists for this merchant, read whole (see ``iter_payments``).

        Args:
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]): ``timeout``,
                ``max_retries``, ``extra_headers``, ``secret_key``, ``base_url``...

        Returns:
            The listed payments, in the service's order.

        Raises:
            ListUnavailableError: the service's list is unavailable (after the retries).
            ResponseTooLargeError: the list is past ``max_response_bytes``: use
                ``iter_payments``.
            APIError: the service answered with an error: a subclass says which
                ([`AuthenticationError`][paysdk.AuthenticationError] for a wrong key,
                [`ServerError`][paysdk.ServerError] and
                [`RateLimitError`][paysdk.RateLimitError] after the retries...).
            APIConnectionError: no answer (refused, reset, TLS), after the retries;
                [`APITimeoutError`][paysdk.APITimeoutError] for none in time.
            ConfigurationError: an override in ``options`` that cannot work.
            ClientClosedError: the client is closed.
            EventLoopError: the client is used from an event loop other than its own.
        """
        return await self._run(
            _core.list_payments(self._options(options)), _tracing.call_span("list_payments")
        )

    def iter_payments(self, **options: Unpack[CallOptions]) -> AsyncItemIterator[ListedPayment]:
        """Every listed payment as the body streams in: ``async for p in iter_payments()``.

        Use it in an ``async with`` block (or ``await aclose()``) if you may stop early.

        Args:
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]): ``timeout``,
                ``max_retries``, ``extra_headers``, ``secret_key``, ``base_url``...

        Returns:
            An async iterator of [`ListedPayment`][paysdk.ListedPayment]s, also an async context
            manager; nothing is sent until the first item is asked for. Iterating raises what
            ``list_payments`` raises.
        """
        plan = _core.iter_payments(self._options(options))
        span = _tracing.call_span("iter_payments", lazy=True)
        send, sleep = span.async_sending(self._send), span.sleeping(self._sleep)
        return _adrive.AsyncItemIterator(plan, send, sleep, span.end)

    def verify_many(
        self,
        references: Iterable[str],
        *,
        concurrency: int = 50,
        **options: Unpack[CallOptions],
    ) -> AsyncBulk:
        """Verify many references, ``concurrency`` at a time: ``async for result in ...``.

        Results come in input order, each the payment or the typed error for that reference;
        at most ``concurrency`` calls are in flight and as many results wait.

        Args:
            references: the references to verify (any iterable, read lazily).
            concurrency: how many calls may be in flight at once.
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]): ``timeout``,
                ``max_retries``, ``extra_headers``, ``secret_key``, ``base_url``...

        Returns:
            An async iterator of [`VerifyResult`][paysdk.VerifyResult]s in input order;
            ``aclose()`` it (or use ``async with``) to stop early.

        Raises:
            TypeError: ``references`` is a ``str`` or ``bytes``, whose characters are no
                references; raised before any request.
            ConfigurationError: ``concurrency`` is not a positive int, or an override cannot
                work. Each reference's own failure is in its result, not raised.
            ClientClosedError: the client is closed.
        """
        from .bulk import AsyncBulk

        config = self._options(options)
        return AsyncBulk(
            references,
            lambda ref: self._run(
                _core.verify_identified(config, ref), _tracing.call_span("verify", ref)
            ),
            concurrency,
        )

    async def confirm(
        self,
        reference: str,
        *,
        amount: int | None = None,
        currency: str | None = None,
        **options: Unpack[CallOptions],
    ) -> VerifiedPayment:
        """Verify, and return the payment only if it succeeded with this amount and currency.

        Args:
            reference: the payment's reference.
            amount: the amount expected, in the unit the service reports; ``None``: not checked.
            currency: the currency expected: three ASCII letters, in any case; ``None``: not
                checked.
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]): ``timeout``,
                ``max_retries``, ``extra_headers``, ``secret_key``, ``base_url``...

        Returns:
            The payment, succeeded and matching.

        Raises:
            PaymentFailedError: the service says the payment did not succeed.
            PaymentMismatchError: its amount or currency differ (``expected`` and ``actual``
                say how).
            InvalidReferenceError: ``reference`` cannot be a payment reference.
            PaymentNotFoundError: the service does not know the reference.
            ConfigurationError: ``amount`` is not a whole number, ``currency`` is not three
                ASCII letters, or an override cannot work.
            APIError: another error answer (see ``verify``).
            APIConnectionError: no answer, after the retries.
            EventLoopError: the client is used from an event loop other than its own.
        """
        expected = _core.Expected(amount=amount, currency=currency)
        plan = _core.confirm(self._options(options), reference, expected)
        return await self._run(plan, _tracing.call_span("confirm", reference))

    async def verify_callback(
        self,
        source: object,
        *,
        amount: int | None = None,
        currency: str | None = None,
        lookup: Lookup | None = None,
        **options: Unpack[CallOptions],
    ) -> VerifiedPayment:
        """Turn a callback request into a confirmed payment; ``lookup`` may be async.

        Args:
            source: the callback: a request of any framework, a query string, a mapping or a
                reference (whatever [`parse_callback`][paysdk.parse_callback] reads).
            amount: the amount expected; give it with ``currency``, or give ``lookup``.
            currency: the currency expected: three ASCII letters, in any case.
            lookup: finds what to expect from the reference ([`Lookup`][paysdk.Lookup]): your
                order, a mapping, an [`Expected`][paysdk.Expected], or ``None`` for no such
                order. It may
                be async.
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]): ``timeout``,
                ``max_retries``, ``extra_headers``, ``secret_key``, ``base_url``...

        Returns:
            The payment, succeeded and matching what was expected.

        Raises:
            InvalidCallbackError: the request holds no single, well-formed reference.
            UnknownOrderError: ``lookup`` found no order for the reference.
            PaymentFailedError: the service says the payment did not succeed.
            PaymentMismatchError: its amount or currency differ from the order's.
            PaymentNotFoundError: the service does not know the reference.
            ConfigurationError: both ``lookup`` and ``amount``/``currency`` given, or the
                order ``lookup`` returned has no amount or currency, or its currency is not
                three ASCII letters.
            APIError: another error answer (see ``verify``).
            APIConnectionError: no answer, after the retries.
            EventLoopError: the client is used from an event loop other than its own.
        """
        span = _tracing.call_span("verify_callback")
        with span.if_raised():  # a refused callback is the span's outcome too
            reference = _core.parse_callback(source)
            span.describe(reference)
            found = lookup(reference) if lookup is not None else None
            if isawaitable(found):
                found = await found
            expected = _core.expected_for(reference, amount, currency, lookup is not None, found)
            plan = _core.confirm(self._options(options), reference, expected)
        return await self._run(plan, span)

    @property
    def with_raw_response(self) -> AsyncRawClient:
        """The same calls, answering with the raw response (status, headers, elapsed...)."""
        return _raw.AsyncRawClient(self._options, self._run)

    async def close(self) -> None:
        """Close the connections, unless the http_client was given (then it is yours to close).

        Safe from any event loop: the connections are closed in the loop they belong to.
        """
        if self._owns_http:
            await self._sender.close()

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
        import anyio  # httpx's own dependency: loaded by httpx already, named here for the sleep

        await anyio.sleep(seconds)

    async def _run(self, plan: Plan[T], span: CallSpan | None = None) -> T:
        span = span or _tracing.UNTRACED
        with span:
            send, sleep = span.async_sending(self._send), span.sleeping(self._sleep)
            return await _adrive.run(plan, send, sleep)

    def _send(self, request: Send) -> Awaitable[Any]:
        """The sender's coroutine for ``request``, once the client is known open and in its loop
        (not wrapped in one more: a call's steps pass through here)."""
        sender = self._sender
        if sender.is_closed:
            raise _errors.closed_error(type(self).__name__)
        sender.binding.check()
        return sender.send(request)


publish("paysdk", Client, AsyncClient)

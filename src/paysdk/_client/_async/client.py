"""``AsyncClient``: a thin shell that runs the plans ``paysdk._core`` builds, sending and sleeping.

The one source of both clients: ``scripts/unasync.py`` generates ``Client`` from it, and where
they truly differ (how they send and wait) lives in ``_twins.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeVar

import httpx
from typing_extensions import Unpack

from ..._core.closing import AsyncCloses
from ..._lazy import publish
from .. import _twins
from ..base import BaseClient, HttpBackend, Lookup, load_engine
from ..options import CallOptions

if TYPE_CHECKING:  # the engine: loaded with the first client made (see _load_engine)
    from ... import _core
    from ..._core.plans import Plan
    from ..._models.listed import ListedPayment
    from ..._models.verified import VerifiedPayment
    from ..._transport._async import drive as _drive
    from ..._transport._async.drive import AsyncItemIterator
    from ..._transport._twins import AsyncSendFunction, AsyncSleepFunction
    from ..._transport.network import Network
    from .. import raw as _raw
    from .. import tracing as _tracing
    from ..bulk import AsyncBulk
    from ..raw import AsyncRawClient

__all__ = ["AsyncClient", "Lookup"]

T = TypeVar("T")


def _load_engine() -> None:
    """Import what clients run on (the core, the senders, the models) once, with the first
    client made: not with ``import paysdk`` (see ``load_engine``), nor with each call."""
    global _core, _drive, _raw, _tracing
    load_engine()
    from ... import _core
    from ..._transport._async import drive as _drive
    from .. import raw as _raw
    from .. import tracing as _tracing


class AsyncClient(AsyncCloses, BaseClient[httpx.AsyncClient, "_twins.AsyncSender"]):
    """The asynchronous client: the same methods as ``Client``, awaitable.

    ``http_backend="aiohttp"`` (with the ``aiohttp`` extra) sends through aiohttp instead of
    httpx: the same behaviour, several times the throughput under concurrency. One
    ``AsyncClient`` belongs to one event loop.
    """

    _load = staticmethod(_load_engine)

    _http_client_type = httpx.AsyncClient
    _backends = _twins.async_backends
    _backend_name = staticmethod(_twins.async_backend_name)
    _sender: _twins.AsyncSender
    _send: AsyncSendFunction
    """What a call's steps send with (``_twins.async_sends``)."""

    def _connect(
        self, http_client: httpx.AsyncClient | None, backend: HttpBackend, network: Network
    ) -> None:
        self._sender = _twins.async_sender(http_client, backend, network, self._httpx_defaults)
        self._send = _twins.async_sends(self._sender, type(self).__name__)

    @property
    def _http(self) -> httpx.AsyncClient:
        return _twins.async_http_of(self._sender)

    async def verify(self, reference: str, **options: Unpack[CallOptions]) -> VerifiedPayment:
        """The payment with this reference, as the service describes it now.

        Args:
            reference: the payment's reference (your order id, as you gave it to the service).
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]).

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
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]).

        Returns:
            The listed payments, in the service's order.

        Raises:
            ListUnavailableError: the service's list is unavailable (after the retries).
            ResponseTooLargeError: the list is past ``max_response_bytes``: use
                ``iter_payments``.
            APIError: another error answer (see ``verify``).
            APIConnectionError: no answer, after the retries (see ``verify``).
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
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]).

        Returns:
            An async iterator of [`ListedPayment`][paysdk.ListedPayment]s, also an async context
            manager; nothing is sent until the first item is asked for. Iterating raises what
            ``list_payments`` raises.
        """
        plan = _core.iter_payments(self._options(options))
        span = _tracing.call_span("iter_payments", lazy=True)
        send, sleep = span.async_sending(self._send), span.sleeping(self._sleep)
        return _drive.AsyncItemIterator(plan, send, sleep, span.end)

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
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]).

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
        from ..bulk import AsyncBulk

        config = self._options(options)
        return AsyncBulk(
            references,
            lambda ref, sleep: self._run(
                _core.verify_identified(config, ref), _tracing.call_span("verify", ref), sleep
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
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]).

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
            **options: per-call overrides ([`CallOptions`][paysdk.CallOptions]).

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
            config = self._with_options(options)  # first: its key is then out of options
            _core.check_lookup(lookup)
            reference = _core.parse_callback(source)
            span.describe(reference)
            self._usable(config)  # after: a malformed callback is a 400 whatever the client's state
            found = await _twins.async_order_of(lookup(reference)) if lookup is not None else None
            expected = _core.expected_for(reference, amount, currency, lookup is not None, found)
            plan = _core.confirm(config, reference, expected)
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

    async def _sleep(self, seconds: float) -> None:
        await _twins.async_sleep(self._sender, seconds)

    async def _run(
        self,
        plan: Plan[T],
        span: _tracing.CallSpan | None = None,
        sleep: AsyncSleepFunction | None = None,
    ) -> T:
        span, sleep = span or _tracing.UNTRACED, sleep or self._sleep
        with span:
            return await _drive.run(plan, span.async_sending(self._send), span.sleeping(sleep))


publish("paysdk", AsyncClient)

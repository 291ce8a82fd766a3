"""Django: ``@paysdk_callback`` hands a view a verified payment that matches the merchant's order.

    @paysdk_callback(client=client, lookup=find_order)
    def payment_callback(request, payment):
        fulfil(payment.reference)  # idempotent: the callback may come twice
        return JsonResponse({"status": "ok"})

A bad callback never reaches the view: it is answered as :mod:`.responses` describes. With an
``AsyncClient`` the view must be ``async def`` (and ``lookup`` and ``on_failed`` may be async).
With ``ledger=`` (a ``paysdk.Ledger``, or ``AsyncLedger`` for an ``AsyncClient``) the view runs
once per payment, as the ledger's action: a duplicate is answered 200 ``already_fulfilled``,
one being fulfilled elsewhere 503.

It is a Django app too: in ``INSTALLED_APPS``, ``manage.py migrate`` creates the ledger's table in
the app's own database, ``DjangoLedger`` fulfils through Django's connection, and the admin shows
the table read-only (docs/fulfilment.md).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, overload

from .._extras import missing_extra

try:
    from django.http import HttpRequest, JsonResponse
    from django.http.response import HttpResponseBase
except ModuleNotFoundError as _missing:
    raise missing_extra(__name__, "django", _missing) from _missing

from ..._client.clients import AsyncClient, Client, Lookup
from ..._errors import ConfigurationError, PaymentFailedError, PaySDKError
from ..._models.verified import VerifiedPayment
from ...ledger import AsyncLedger, DjangoLedger, FulfilResult, Ledger
from ..responses import callback_response, fulfilment_response

__all__ = ["DjangoLedger", "paysdk_callback"]

P = ParamSpec("P")
OnFailed = Callable[[HttpRequest, PaymentFailedError], object]
"""Called with a failed payment (to record it); may return the response to send instead."""

SyncView = Callable[Concatenate[HttpRequest, VerifiedPayment, P], HttpResponseBase]
AsyncView = Callable[Concatenate[HttpRequest, VerifiedPayment, P], Awaitable[HttpResponseBase]]


@overload
def paysdk_callback(
    *,
    client: Client,
    lookup: Lookup,
    on_failed: OnFailed | None = None,
    ledger: Ledger | None = None,
) -> Callable[[SyncView[P]], Callable[Concatenate[HttpRequest, P], HttpResponseBase]]: ...


@overload
def paysdk_callback(
    *,
    client: AsyncClient,
    lookup: Lookup,
    on_failed: OnFailed | None = None,
    ledger: AsyncLedger | None = None,
) -> Callable[
    [AsyncView[P]], Callable[Concatenate[HttpRequest, P], Coroutine[Any, Any, HttpResponseBase]]
]: ...


def paysdk_callback(
    *,
    client: Client | AsyncClient,
    lookup: Lookup,
    on_failed: OnFailed | None = None,
    ledger: Ledger | AsyncLedger | None = None,
) -> Callable[..., Callable[..., object]]:
    """Decorate a view taking ``(request, payment, ...)``; it runs only for a matching payment.

    ``lookup(reference)`` finds the merchant's order (an object or mapping with ``amount`` and
    ``currency``, or ``paysdk.Expected``) or returns ``None`` for a reference never issued.
    """
    if isinstance(client, AsyncClient) and isinstance(ledger, (AsyncLedger, type(None))):
        return functools.partial(_decorate_async, client, lookup, on_failed, ledger)
    if isinstance(client, Client) and isinstance(ledger, (Ledger, type(None))):
        return functools.partial(_decorate_sync, client, lookup, on_failed, ledger)
    if ledger is not None:
        raise ConfigurationError("a paysdk.Client needs a Ledger, an AsyncClient an AsyncLedger")
    raise ConfigurationError("client must be a paysdk.Client or a paysdk.AsyncClient")


def _decorate_sync(
    client: Client,
    lookup: Lookup,
    on_failed: OnFailed | None,
    ledger: Ledger | None,
    view: SyncView[P],
) -> Callable[Concatenate[HttpRequest, P], HttpResponseBase]:
    if inspect.iscoroutinefunction(view):
        raise ConfigurationError("an async view needs a paysdk.AsyncClient")

    @functools.wraps(view)
    def callback_view(
        request: HttpRequest, /, *args: P.args, **kwargs: P.kwargs
    ) -> HttpResponseBase:
        try:
            payment = client.verify_callback(request, lookup=lookup)
        except PaymentFailedError as error:
            answer = on_failed(request, error) if on_failed is not None else None
            return answer if isinstance(answer, HttpResponseBase) else _error_response(error)
        except PaySDKError as error:
            return _error_response(error)
        if ledger is None:
            return view(request, payment, *args, **kwargs)
        try:
            result = ledger.fulfil_once(payment, lambda paid: view(request, paid, *args, **kwargs))
        except PaySDKError as error:
            return _error_response(error)
        return _fulfilled_response(result)

    return callback_view


def _decorate_async(
    client: AsyncClient,
    lookup: Lookup,
    on_failed: OnFailed | None,
    ledger: AsyncLedger | None,
    view: AsyncView[P],
) -> Callable[Concatenate[HttpRequest, P], Coroutine[Any, Any, HttpResponseBase]]:
    if not inspect.iscoroutinefunction(view):
        raise ConfigurationError("a paysdk.AsyncClient needs an async def view")

    @functools.wraps(view)
    async def callback_view(
        request: HttpRequest, /, *args: P.args, **kwargs: P.kwargs
    ) -> HttpResponseBase:
        try:
            payment = await client.verify_callback(request, lookup=lookup)
        except PaymentFailedError as error:
            answer = on_failed(request, error) if on_failed is not None else None
            if inspect.isawaitable(answer):
                answer = await answer
            return answer if isinstance(answer, HttpResponseBase) else _error_response(error)
        except PaySDKError as error:
            return _error_response(error)
        if ledger is None:
            return await view(request, payment, *args, **kwargs)
        try:
            result = await ledger.fulfil_once(
                payment, lambda paid: view(request, paid, *args, **kwargs)
            )
        except PaySDKError as error:
            return _error_response(error)
        return _fulfilled_response(result)

    return callback_view


def _fulfilled_response(result: FulfilResult[HttpResponseBase]) -> HttpResponseBase:
    """The view's own response if it ran now; else already fulfilled, or in progress."""
    not_now = fulfilment_response(result)
    if not_now is not None:
        return JsonResponse(not_now.body, status=not_now.status_code)
    assert result.value is not None
    return result.value


def _error_response(error: PaySDKError) -> JsonResponse:
    response = callback_response(error)
    return JsonResponse(response.body, status=response.status_code)

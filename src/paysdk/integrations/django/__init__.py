"""Django: ``@verified_callback`` hands a view a verified payment that matches the merchant's order.

    @verified_callback(client, lookup=find_order, ledger=ledger)
    def payment_callback(request, payment):
        ship(payment.reference)  # runs once per payment with a ledger
        return JsonResponse({"status": "ok"})

A bad callback never reaches the view: it is answered as
[`responses`][paysdk.integrations.responses] describes, and a request by any method but GET
(Django routes every method to a view) is answered 405 with ``Allow: GET``. With an
``AsyncClient`` the view must be ``async def`` (and ``lookup`` and ``on_failed`` may be async; a
plain one runs in Django's thread for sync code, where it may use the ORM).
With ``ledger=`` (a ``paysdk.Ledger``, or ``AsyncLedger`` for an ``AsyncClient``) the view runs
once per payment, as the ledger's action, and only a success is recorded as fulfilled: see the
fulfilment rule in [Callbacks](callbacks.md#the-fulfilment-rule-only-a-success-is-recorded).
That view is non-atomic on every database under ``ATOMIC_REQUESTS``, so that the ledger's claim,
the view and its record commit in that order; the view's writes that belong together go in a
``transaction.atomic()`` block of its own.

It is a Django app too: in ``INSTALLED_APPS``, ``manage.py migrate`` creates the ledger's table in
the app's own database, ``DjangoLedger`` fulfils through Django's connection, and the admin shows
the table read-only ([Fulfilment](fulfilment.md)).
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar, cast, overload

from .._extras import missing_extra

try:
    from django.core.exceptions import ImproperlyConfigured
    from django.db import connections, transaction
    from django.http import HttpRequest, HttpResponse, JsonResponse
    from django.http.response import HttpResponseBase
    from django.template.response import SimpleTemplateResponse
    from django.views import View
except ModuleNotFoundError as _missing:
    raise missing_extra(__name__, "django", _missing) from _missing

from asgiref.sync import sync_to_async  # Django needs it: a missing Django is named first
from pydantic_core import to_json

from ..._client._async.client import AsyncClient
from ..._client._sync.client import Client
from ..._client.base import Lookup
from ..._core.expected import check_lookup
from ..._errors import ConfigurationError, PaymentFailedError, PaySDKError
from ..._lazy import publish
from ..._models.verified import VerifiedPayment
from ...ledger import AsyncLedger, Ledger
from ...ledger._django import DjangoLedger
from .._callback import (
    check_answer,
    failed_answer,
    failed_payment,
    method_response,
    refusal_of,
    scrub_of,
    sendable_answer,
)
from .._record import afulfil, arecord_refusal, fulfil, record_refusal
from .._views import (
    check_sync_on_failed,
    check_view,
    off_the_loop,
    sync_on_failed_answer,
    watched_lookup,
)
from ..responses import CallbackResponse, callback_response

__all__ = ["DjangoLedger", "verified_callback"]

publish(__name__, DjangoLedger)

P = ParamSpec("P")
V = TypeVar("V", bound=Callable[..., object])
R = TypeVar("R")
Q = TypeVar("Q", bound=HttpRequest)
OnFailed = Callable[[Any, PaymentFailedError], object]
"""Called with the request and a failed payment (to record it); may return the response to send
instead. The request is the view's: Django's ``HttpRequest``, or a library's (DRF's ``Request``)."""

CLASS_VIEW = (
    "on a class-based view's method, apply it with Django's method_decorator: "
    '@method_decorator(verified_callback(...), name="dispatch") on the class (or on the method), '
    "and the payment reaches def get(self, request, payment, **url_kwargs)"
)

SyncView = Callable[Concatenate[Q, VerifiedPayment, P], R]
"""A view answering with a response, or with what a library on Django makes one of (Ninja)."""
AsyncView = Callable[Concatenate[Q, VerifiedPayment, P], Awaitable[R]]


@overload
def verified_callback(
    client: Client,
    *,
    lookup: Lookup,
    ledger: Ledger | None = None,
    on_failed: OnFailed | None = None,
) -> Callable[[SyncView[Q, P, R]], Callable[Concatenate[Q, P], HttpResponseBase | R]]: ...


@overload
def verified_callback(
    client: AsyncClient,
    *,
    lookup: Lookup,
    ledger: AsyncLedger | None = None,
    on_failed: OnFailed | None = None,
) -> Callable[
    [AsyncView[Q, P, R]],
    Callable[Concatenate[Q, P], Coroutine[Any, Any, HttpResponseBase | R]],
]: ...


def verified_callback(
    client: Client | AsyncClient,
    *,
    lookup: Lookup,
    ledger: Ledger | AsyncLedger | None = None,
    on_failed: OnFailed | None = None,
) -> Callable[..., Any]:
    """Decorate a view taking ``(request, payment, **url_kwargs)``; it runs only for a payment
    the service confirmed and that matches the order.

    Args:
        client: a ``paysdk.Client`` for a sync view, an ``AsyncClient`` for an ``async def`` one.
        lookup: finds the merchant's order for a reference ([`Lookup`][paysdk.Lookup]).
        ledger: fulfil each payment once through it (a ``Ledger`` with a ``Client``, an
            ``AsyncLedger`` with an ``AsyncClient``); refusals are recorded in it too.
        on_failed: called with ``(request, error)`` for a failed payment (to record it); may
            return the response to send instead (an ``HttpResponse``: anything else but
            ``None`` is a ``ConfigurationError``, the framework's 500).

    Returns:
        The decorator.

    Raises:
        ConfigurationError: the client, the ledger and the view are not of one kind (an
            ``on_failed`` is async only with an ``AsyncClient``), or a ledger is given before
            Django's settings are configured.
        TypeError: (from the decorator) the view cannot take ``(request, payment)``.
    """
    check_lookup(lookup)
    if isinstance(client, AsyncClient) and isinstance(ledger, (AsyncLedger, type(None))):
        return functools.partial[Callable[..., object]](
            _decorate_async, client, lookup, on_failed, ledger
        )
    if isinstance(client, Client) and isinstance(ledger, (Ledger, type(None))):
        check_sync_on_failed(on_failed)
        return functools.partial[Callable[..., object]](
            _decorate_sync, client, lookup, on_failed, ledger
        )
    if ledger is not None:
        raise ConfigurationError("a paysdk.Client needs a Ledger, an AsyncClient an AsyncLedger")
    raise ConfigurationError("client must be a paysdk.Client or a paysdk.AsyncClient")


def _decorate_sync(
    client: Client,
    lookup: Lookup,
    on_failed: OnFailed | None,
    ledger: Ledger | None,
    view: SyncView[Q, P, R],
) -> Callable[Concatenate[Q, P], HttpResponseBase | R]:
    check_view(view, ("request", "payment"), method=CLASS_VIEW)
    if inspect.iscoroutinefunction(view):
        raise ConfigurationError("an async view needs a paysdk.AsyncClient")
    scrub = scrub_of(client)

    @functools.wraps(view)
    def callback_view(request: Q, /, *args: P.args, **kwargs: P.kwargs) -> HttpResponseBase | R:
        not_get = method_response(request.method or "")
        if not_get is not None:
            return _answer(not_get)
        watched = watched_lookup(lookup)
        try:
            payment = client.verify_callback(request, lookup=watched.run)
        except PaySDKError as error:
            if watched.raised(error):
                raise
            failed = failed_payment(error)
            answer = on_failed(request, failed) if on_failed and failed else None
            sync_on_failed_answer(answer)
            response = failed_answer(
                sendable_answer(answer, HttpResponseBase, "Django"),
                functools.partial(_error_response, error),
            )
            record_refusal(ledger, refusal_of(error, scrub))
            return response
        if ledger is None:
            return view(request, payment, *args, **kwargs)
        outcome = fulfil(
            ledger,
            payment,
            lambda paid: _checked(view(request, paid, *args, **kwargs), scrub),
            scrub,
        )
        return _answer(outcome) if isinstance(outcome, CallbackResponse) else outcome

    callback_view.__signature__ = _signature(view)  # type: ignore[attr-defined]
    return _non_atomic(callback_view, ledger)


def _decorate_async(
    client: AsyncClient,
    lookup: Lookup,
    on_failed: OnFailed | None,
    ledger: AsyncLedger | None,
    view: AsyncView[Q, P, R],
) -> Callable[Concatenate[Q, P], Coroutine[Any, Any, HttpResponseBase | R]]:
    check_view(view, ("request", "payment"), method=CLASS_VIEW)
    if not (inspect.iscoroutinefunction(view) or _async_by_method_decorator(view)):
        raise ConfigurationError("a paysdk.AsyncClient needs an async def view")
    scrub = scrub_of(client)
    find = off_the_loop(lookup, sync_to_async)
    failing = None if on_failed is None else off_the_loop(on_failed, sync_to_async)

    @functools.wraps(view)
    async def callback_view(
        request: Q, /, *args: P.args, **kwargs: P.kwargs
    ) -> HttpResponseBase | R:
        not_get = method_response(request.method or "")
        if not_get is not None:
            return _answer(not_get)
        watched = watched_lookup(find)
        try:
            payment = await client.verify_callback(request, lookup=watched.aresolve)
        except PaySDKError as error:
            if watched.raised(error):
                raise
            failed = failed_payment(error)
            answer = await failing(request, failed) if failing and failed else None
            response = failed_answer(
                sendable_answer(answer, HttpResponseBase, "Django"),
                functools.partial(_error_response, error),
            )
            await arecord_refusal(ledger, refusal_of(error, scrub))
            return response
        if ledger is None:
            return await view(request, payment, *args, **kwargs)

        async def run_view(paid: VerifiedPayment) -> R:
            return _checked(await view(request, paid, *args, **kwargs), scrub)

        outcome = await afulfil(ledger, payment, run_view, scrub)
        return _answer(outcome) if isinstance(outcome, CallbackResponse) else outcome

    callback_view.__signature__ = _signature(view)  # type: ignore[attr-defined]
    return _non_atomic(callback_view, ledger)


def _signature(view: Callable[..., object]) -> inspect.Signature:
    """What the decorated view is called with, for a library that reads it to fill the view's
    parameters (Django Ninja: ``payment`` read as a query parameter answered every callback 422):
    the view's parameters without the payment, the helper's to give, and their annotations
    resolved in the view's module where they can be (a library resolves them in this one)."""
    signature = inspect.signature(view)
    parameters = list(signature.parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if len(parameters) > 1 and parameters[1].kind in positional:
        del parameters[1]  # else *args (an as_view() function), which takes the payment too
    try:
        hints = typing.get_type_hints(inspect.unwrap(view), include_extras=True)
    except Exception:  # unresolvable here (a TYPE_CHECKING import): left as written
        hints = {}
    return signature.replace(
        parameters=[p.replace(annotation=hints.get(p.name, p.annotation)) for p in parameters],
        return_annotation=hints.get("return", signature.return_annotation),
    )


def _async_by_method_decorator(view: object) -> bool:
    """Whether ``view`` is what Django's ``method_decorator`` hands a decorator for an async
    class-based view: ``dispatch`` bound to a view whose handlers are async
    (``View.view_is_async``: it returns the handler's coroutine, which the helper awaits), or the
    stand-in function it decorates once, when the class is defined, only to copy the attributes
    a decorator sets (never called)."""
    if not isinstance(view, functools.partial):
        return (
            getattr(view, "__module__", None) == "django.utils.decorators"
            and getattr(view, "__qualname__", None) == "_update_method_wrapper.<locals>.dummy"
        )
    bound: object = getattr(view.func, "__self__", None)
    async_view: object = getattr(type(bound), "view_is_async", False)
    return isinstance(bound, View) and async_view is True


def _non_atomic(view: V, ledger: object) -> V:
    """``view`` outside the request's transaction on each of Django's databases
    (``ATOMIC_REQUESTS``) when it has a ``ledger``: the ledger commits its claim before the view
    runs and its record after, which a request's transaction would commit last (or refuse, for
    ``DjangoLedger`` and an async view). The aliases are read when the view is decorated.

    Args:
        view: the view ``verified_callback`` returns.
        ledger: the decorator's ledger; with none, ``view`` is returned as it is.

    Returns:
        ``view``, marked by ``transaction.non_atomic_requests`` for each alias.

    Raises:
        ConfigurationError: Django's settings are not configured (or its ``DATABASES`` are bad).
    """
    if ledger is None:
        return view
    try:
        aliases = tuple(connections)
    except ImproperlyConfigured as exc:
        raise ConfigurationError(
            "verified_callback with a ledger makes its view non-atomic on each of Django's "
            "DATABASES (ATOMIC_REQUESTS), so Django's settings must be configured before the "
            f"view is decorated: {exc}"
        ) from exc
    for alias in aliases:
        view = transaction.non_atomic_requests(using=alias)(view)
    return view


def _checked(response: R, scrub: Callable[[str], str]) -> R:
    """The view's response if it is a success (``_callback.check_answer``, whose reason ``scrub``
    blots the key out of). A status and body Django Ninja makes the response of is read as that
    response; any other value (a forgotten ``return``) ran to its end: recorded fulfilled, then
    refused by Django itself."""
    if isinstance(response, HttpResponseBase):
        return check_answer(response, response.status_code, lambda: _body(response), scrub)
    answered = _status_and_body(response)
    if answered is None:
        return check_answer(response, None, bytes, scrub)
    status, body = answered
    return check_answer(response, status, lambda: to_json(body, fallback=str), scrub)


def _status_and_body(answer: object) -> tuple[int, object] | None:
    """The status and body of an answer Django Ninja turns into a response, ``Status(409,
    body)`` or a ``(409, body)`` tuple (read as values, they were recorded fulfilled); ``None``
    for any other value."""
    status: object = getattr(answer, "status_code", None)
    body: object = getattr(answer, "value", None)
    if isinstance(answer, tuple):
        pair = cast("tuple[object, ...]", answer)
        status, body = pair if len(pair) == 2 else (None, None)
    if isinstance(status, int) and not isinstance(status, bool):
        return status, body
    return None


def _body(response: HttpResponseBase) -> bytes:
    """A refusing response's body, for its reason: none for a stream. A template response is
    rendered after the view (by Django, once the middleware had it; its ``content`` raises until
    then), as is Django REST framework's ``Response``: its body is rendered here for the reason
    alone, the response left as it was. One that cannot be rendered yet (a ``Response`` under
    ``@api_view`` or from a ``ViewSet``'s action, whose renderer DRF chooses after the view
    returns) is quoted by its ``data`` as JSON; without data it is said to be not rendered yet,
    never taken for an empty body."""
    if isinstance(response, SimpleTemplateResponse) and not response.is_rendered:
        try:
            content: object = response.rendered_content
        except Exception:  # Django's own rendering raises it again, if it must
            return _data_of(response)
        return content.encode() if isinstance(content, str) else bytes(cast("bytes", content))
    return response.content if isinstance(response, HttpResponse) else b""


def _data_of(response: SimpleTemplateResponse) -> bytes:
    """The ``data`` a response not rendered yet holds (DRF's ``Response``), as JSON."""
    missing = object()
    data: object = getattr(response, "data", missing)
    if data is missing:
        return b"(not rendered yet)"
    try:
        return to_json(data, fallback=str)
    except Exception:  # to_json raises for data it cannot walk (a cycle)
        return b"(not rendered yet)"


def _error_response(error: PaySDKError) -> JsonResponse:
    return _answer(callback_response(error))


def _answer(response: CallbackResponse) -> JsonResponse:
    return JsonResponse(response.body, status=response.status_code, headers=response.headers)

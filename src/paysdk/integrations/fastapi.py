"""FastAPI and Starlette: ``@verified_callback`` hands an endpoint a verified payment that
matches the merchant's order.

    @app.get("/payments/callback")
    @verified_callback(client, lookup=find_order, ledger=ledger)
    async def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        await ship(payment.reference)  # runs once per payment with a ledger
        return {"status": "ok"}

A bad callback never reaches the endpoint: it is answered as
[`responses`][paysdk.integrations.responses] describes (any method but GET, ``HEAD`` too, 405
with ``Allow: GET``). With ``ledger=`` it runs once per payment, as the ledger's action, and only
a success is recorded as fulfilled: see the fulfilment rule in
[Callbacks](callbacks.md#the-fulfilment-rule-only-a-success-is-recorded). The payment is its
first parameter; FastAPI fills the others. Only Starlette is imported (the ``fastapi`` extra).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import typing
from collections.abc import Awaitable, Callable
from typing import Any

import anyio.from_thread
import anyio.to_thread
from anyio import CapacityLimiter
from anyio.lowlevel import RunVar

from ._extras import missing_extra

try:
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
except ModuleNotFoundError as _missing:
    raise missing_extra(__name__, "fastapi", _missing) from _missing

from .._client._async.client import AsyncClient
from .._client._sync.client import Client
from .._client.base import Lookup
from .._core.expected import check_lookup
from .._errors import ConfigurationError, PaymentFailedError, PaySDKError
from .._models.verified import VerifiedPayment
from ..ledger import AsyncLedger, Ledger
from ._callback import (
    check_answer,
    failed_answer,
    failed_payment,
    method_response,
    refusal_of,
    scrub_of,
)
from ._record import afulfil, arecord_refusal, fulfil, record_refusal
from ._views import STARLETTE_ROUTING, Watched, check_view, off_the_loop, watched_lookup
from .responses import CallbackResponse, callback_response

__all__ = ["verified_callback"]

OnFailed = Callable[[PaymentFailedError], object]
"""Called (and awaited, if async) with a failed payment; may return the answer to send instead: a
response, or a value FastAPI sends as it sends an endpoint's (a dict as JSON)."""

Endpoint = Callable[..., Any]

METHOD = (
    "decorate a function, or an instance's bound method where the route is added "
    '(app.get("/payments/callback")(verified_callback(...)(handler.callback)))'
)

REQUEST = "paysdk_request"
"""The parameter the wrapped endpoint gets the request by, unless it takes one itself."""

LEDGER_THREADS = 40
"""How many sync ledgers' ``fulfil_once`` may run at once in one event loop's threads."""
_ledger_threads: RunVar[CapacityLimiter] = RunVar("paysdk_ledger_threads")


def verified_callback(
    client: AsyncClient | Client,
    *,
    lookup: Lookup,
    ledger: AsyncLedger | Ledger | None = None,
    on_failed: OnFailed | None = None,
) -> Callable[[Endpoint], Endpoint]:
    """Decorate an endpoint whose first parameter is the payment; it runs only for a payment the
    service confirmed and that matches the order.

    Prefer an ``AsyncClient`` and an ``AsyncLedger``; a sync ``Client`` or ``Ledger`` (and a
    ``def`` endpoint, lookup or ``on_failed``) runs in a worker thread. In a plain Starlette
    app, pass the decorated endpoint to ``Route``; it must then return a response.

    Args:
        client: a ``paysdk.AsyncClient`` or a ``paysdk.Client``.
        lookup: finds the merchant's order for a reference ([`Lookup`][paysdk.Lookup]).
        ledger: fulfil each payment once through this ``AsyncLedger`` or ``Ledger``; refusals
            are recorded in it too.
        on_failed: called (in a worker thread, or awaited if async) with the
            ``PaymentFailedError`` of a failed payment (to record it); may return the answer to
            send instead, as the endpoint may: a response, or a value FastAPI sends (a dict as
            JSON).

    Returns:
        The decorator.

    Raises:
        ConfigurationError: the client or the ledger is of no kind paysdk makes, or the endpoint
            takes no parameter for the payment.
        TypeError: (from the decorator) the endpoint cannot take the payment first, or is routed
            already: the decorator must be below ``@app.get(...)``.
    """
    if not isinstance(client, (AsyncClient, Client)):
        raise ConfigurationError("client must be a paysdk.AsyncClient or a paysdk.Client")
    if ledger is not None and not isinstance(ledger, (AsyncLedger, Ledger)):
        raise ConfigurationError("ledger must be a paysdk.AsyncLedger or a paysdk.Ledger")
    check_lookup(lookup)
    return _Callback(client, lookup, ledger, on_failed).wrap


@dataclasses.dataclass(frozen=True)
class _Callback:
    """One decorator's settings, and the I/O that carries out ``_callback``'s decisions."""

    client: AsyncClient | Client
    lookup: Lookup
    ledger: AsyncLedger | Ledger | None
    on_failed: OnFailed | None

    def wrap(self, endpoint: Endpoint) -> Endpoint:
        signature, own_request = _signature(endpoint)
        check_view(endpoint, ("payment",), STARLETTE_ROUTING, method=METHOD)

        @functools.wraps(endpoint)
        async def callback_endpoint(*args: Any, **kwargs: Any) -> Any:
            if args:  # Starlette calls endpoint(request); FastAPI passes keywords
                (request,) = args
                if own_request is not None:
                    kwargs[own_request] = request
            else:
                request = kwargs[own_request] if own_request else kwargs.pop(REQUEST)
            return await self.answer(request, endpoint, kwargs)

        callback_endpoint.__signature__ = signature  # type: ignore[attr-defined]
        return callback_endpoint

    async def answer(self, request: Request, endpoint: Endpoint, kwargs: dict[str, Any]) -> Any:
        scrub = scrub_of(self.client)
        not_get = method_response(request.method)
        if not_get is not None:
            return _answer(not_get)
        # a sync client's verify (so its lookup) runs in the thread pool already
        sync = isinstance(self.client, Client)
        watched = watched_lookup(self.lookup if sync else off_the_loop(self.lookup, _threaded))
        try:
            payment = await self._verify(request, watched)
        except PaySDKError as error:
            if watched.raised(error):
                raise
            failed = failed_payment(error)
            failing = None if self.on_failed is None else off_the_loop(self.on_failed, _threaded)
            answer = await failing(failed) if failing and failed else None
            if isinstance(self.ledger, AsyncLedger):
                await arecord_refusal(self.ledger, refusal_of(error, scrub))
            else:
                await run_in_threadpool(record_refusal, self.ledger, refusal_of(error, scrub))
            return failed_answer(answer, functools.partial(_failed_response, error))

        async def run(paid: VerifiedPayment) -> Any:
            if inspect.iscoroutinefunction(endpoint):
                return await endpoint(paid, **kwargs)
            return await run_in_threadpool(functools.partial(endpoint, paid, **kwargs))

        async def checked(paid: VerifiedPayment) -> Any:
            return _checked(await run(paid), kwargs, scrub)

        ledger = self.ledger
        if ledger is None:
            return await run(payment)

        def in_thread(paid: VerifiedPayment) -> Any:
            """The endpoint as the sync ledger's action, in the ledger's worker thread: an
            ``async def`` one back on the event loop; a ``def`` one right there, as a thread
            of Starlette's pool of its own would have to wait for one (``ledger_threads``)."""
            if inspect.iscoroutinefunction(endpoint):
                return anyio.from_thread.run(checked, paid)
            return _checked(endpoint(paid, **kwargs), kwargs, scrub)

        if isinstance(ledger, AsyncLedger):
            outcome = await afulfil(ledger, payment, checked, scrub)
        else:  # the sync ledger in a worker thread, outside Starlette's pool
            run_ledger = functools.partial(fulfil, ledger, payment, in_thread, scrub)
            outcome = await anyio.to_thread.run_sync(run_ledger, limiter=ledger_threads())
        return _answer(outcome) if isinstance(outcome, CallbackResponse) else outcome

    async def _verify(self, request: Request, lookup: Watched[str, object]) -> VerifiedPayment:
        if isinstance(self.client, AsyncClient):
            return await self.client.verify_callback(request, lookup=lookup.aresolve)
        return await run_in_threadpool(
            self.client.verify_callback, request.scope, lookup=lookup.run
        )


def ledger_threads() -> CapacityLimiter:
    """The threads a sync ledger's ``fulfil_once`` runs in, in the running event loop: not
    Starlette's pool, which the endpoint (the ledger's action) may need while the ledger holds
    its thread (an ``async def`` one's ``run_in_threadpool``; a ``def`` one runs in the ledger's
    thread itself). Taken from that pool, with as many callbacks at once as it has threads
    (40), each held one and waited for another, and the app hung for good: every callback, and
    every other ``def`` endpoint of it."""
    try:
        return _ledger_threads.get()
    except LookupError:
        limiter = CapacityLimiter(LEDGER_THREADS)
        _ledger_threads.set(limiter)
        return limiter


def _threaded(code: Callable[..., object]) -> Callable[..., Awaitable[object]]:
    """``code`` run in Starlette's thread pool, as it runs a sync endpoint."""
    return functools.partial(run_in_threadpool, code)


def _signature(endpoint: Endpoint) -> tuple[inspect.Signature, str | None]:
    """What FastAPI should read, and the endpoint's own request parameter (annotated ``Request``,
    or ``request`` unannotated): its parameters after the payment, with the request; annotations
    resolved in the endpoint's module, not this one."""
    if not callable(endpoint):
        raise ConfigurationError(f"verified_callback decorates an endpoint, not {endpoint!r}")
    signature = inspect.signature(endpoint)
    hints = typing.get_type_hints(endpoint, include_extras=True)
    parameters = [
        parameter.replace(annotation=hints.get(parameter.name, parameter.annotation))
        for parameter in signature.parameters.values()
    ]
    if not parameters:
        raise ConfigurationError("the endpoint's first parameter must take the payment")
    rest = [  # a plain Starlette endpoint's request, unannotated, is the request in FastAPI too
        p.replace(annotation=Request) if _is_unannotated_request(p) else p for p in parameters[1:]
    ]
    own = next((p.name for p in rest if _is_request(p.annotation)), None)
    if own is None:
        injected = inspect.Parameter(REQUEST, inspect.Parameter.KEYWORD_ONLY, annotation=Request)
        rest = sorted([*rest, injected], key=lambda p: p.kind)  # before any **kwargs
    returns = hints.get("return", signature.return_annotation)
    return signature.replace(parameters=rest, return_annotation=returns), own


def _is_request(annotation: object) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, Request)


def _is_unannotated_request(parameter: inspect.Parameter) -> bool:
    """A parameter ``request`` with no annotation, as a plain Starlette endpoint names it: it
    gets the request (FastAPI would read it as a query parameter the service never sends)."""
    return parameter.name == "request" and parameter.annotation is inspect.Parameter.empty


def _checked(value: object, kwargs: dict[str, Any], scrub: Callable[[str], str]) -> object:
    """The endpoint's answer if it is a success; see ``_callback.check_answer`` (``scrub`` blots
    the key out of its reason). A value that is not a response is answered with the status the
    endpoint set on the ``Response`` parameter FastAPI gave it, if it set one (``kwargs`` holds
    that parameter), else 200."""
    if isinstance(value, Response):
        return check_answer(
            value, value.status_code, lambda: bytes(getattr(value, "body", b"")), scrub
        )
    return check_answer(value, _status_set(kwargs), lambda: _json(value), scrub)


def _status_set(kwargs: dict[str, Any]) -> int | None:
    """The status set on a ``Response`` parameter, which FastAPI gives with none set."""
    for given in kwargs.values():
        status: int | None = getattr(given, "status_code", None)
        if isinstance(given, Response) and status is not None:
            return status
    return None


def _json(value: object) -> bytes:
    """A value's body as FastAPI would write it, near enough for a refusal's reason."""
    try:
        return json.dumps(value, default=str).encode()
    except (TypeError, ValueError):  # a structure json cannot write: no excerpt
        return b""


def _failed_response(error: PaySDKError) -> JSONResponse:
    """The helper's own answer to a failed payment ``on_failed`` did not answer (200 ``failed``)."""
    return _answer(callback_response(error))


def _answer(response: CallbackResponse) -> JSONResponse:
    return JSONResponse(response.body, status_code=response.status_code, headers=response.headers)

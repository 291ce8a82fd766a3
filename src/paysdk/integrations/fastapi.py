"""FastAPI and Starlette: a dependency that yields a verified payment matching the merchant's order.

    verified_callback = VerifiedCallback(client, lookup=find_order)
    app = FastAPI()
    install(app)  # refused callbacks are answered {"status": ...}, as with Django and Flask

    @app.get("/payments/callback")
    async def payment_callback(payment: VerifiedPayment = Depends(verified_callback)):
        await fulfil(payment.reference)  # idempotent: the callback may come twice
        return {"status": "ok"}

A bad callback raises [`CallbackRefused`][paysdk.integrations.fastapi.CallbackRefused], which
the handler ``install`` adds answers with the status and ``{"status": ...}`` body ``responses``
describes: one body shape for the service whatever the framework. Only Starlette is imported
(the ``fastapi`` extra installs it).

With ``ledger=`` and ``fulfil=`` the dependency fulfils the payment once, through the ledger,
before the endpoint runs: a duplicate is answered 200 ``already_fulfilled`` and one being
fulfilled elsewhere 503, without reaching the endpoint. ``fulfil`` is async with an
``AsyncLedger``; with a ``Ledger`` it is sync and runs in a worker thread.
"""

# No ``from __future__ import annotations`` here: FastAPI reads the annotations of
# ``VerifiedCallback.__call__`` at run time, and before 0.124 it cannot resolve a string one on a
# callable instance (it answers 422 or raises PydanticUndefinedAnnotation): ``Request`` must be
# the class itself.
import inspect
from collections.abc import Awaitable, Callable
from typing import cast

from ._extras import missing_extra

try:
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
except ModuleNotFoundError as _missing:
    raise missing_extra(__name__, "fastapi", _missing) from _missing

from .._client.clients import AsyncClient, Client, Lookup
from .._errors import ConfigurationError, PaymentFailedError, PaySDKError
from .._models.verified import VerifiedPayment
from ..ledger import AsyncLedger, Ledger
from .responses import CallbackResponse, callback_response, fulfilment_response

__all__ = ["CallbackRefused", "VerifiedCallback", "install"]

OnFailed = Callable[[PaymentFailedError], object]
"""Called (and awaited, if async) with a failed payment, to record it."""


class CallbackRefused(HTTPException):
    """A callback that will not be fulfilled; ``install``'s handler answers it as ``.answer``."""

    def __init__(self, answer: CallbackResponse) -> None:
        """Raised by ``VerifiedCallback``.

        Args:
            answer: the status and body to answer the service with.
        """
        super().__init__(answer.status_code, detail=answer.status)
        self.answer = answer

    def response(self) -> JSONResponse:
        """The answer for the service: the status and ``{"status": ...}`` body."""
        return JSONResponse(self.answer.body, status_code=self.answer.status_code)


def install(app: Starlette) -> None:
    """Answer every [`CallbackRefused`][paysdk.integrations.fastapi.CallbackRefused] with its
    JSON body (FastAPI apps are Starlette's).

    Args:
        app: the FastAPI or Starlette app.
    """
    app.add_exception_handler(CallbackRefused, _answer_refused)


async def _answer_refused(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, CallbackRefused):  # pragma: no cover - registered for it alone
        raise exc
    return exc.response()


class VerifiedCallback:
    """``Depends(VerifiedCallback(client, lookup=...))``: the callback's verified payment.

    Prefer an ``AsyncClient``; a sync ``Client`` (and its ``lookup``) runs in a worker thread.
    The app must have been passed to [`install`][paysdk.integrations.fastapi.install], so a
    refused callback gets the same body
    as with the other frameworks' helpers; without it every callback is a ConfigurationError.

    Args:
        client: a ``paysdk.AsyncClient`` (or a ``Client``, run in a worker thread).
        lookup: finds the merchant's order for a reference ([`Lookup`][paysdk.Lookup]): an
            object or mapping with ``amount`` and ``currency``, a ``paysdk.Expected``, or
            ``None`` for a reference never issued.
        on_failed: called (and awaited, if async) with the ``PaymentFailedError`` of a failed
            payment, to record it.
        ledger: an ``AsyncLedger`` (or ``Ledger``) to fulfil each payment once through; give
            ``fulfil`` with it.
        fulfil: the action ``ledger`` runs once per payment.

    Raises:
        ConfigurationError: a client or ledger of another kind, or only one of ``ledger`` and
            ``fulfil``.
    """

    def __init__(
        self,
        client: AsyncClient | Client,
        *,
        lookup: Lookup,
        on_failed: OnFailed | None = None,
        ledger: AsyncLedger | Ledger | None = None,
        fulfil: Callable[[VerifiedPayment], object] | None = None,
    ) -> None:
        if not isinstance(client, (AsyncClient, Client)):
            raise ConfigurationError("client must be a paysdk.AsyncClient or a paysdk.Client")
        if (ledger is None) != (fulfil is None):
            raise ConfigurationError("give ledger= and fulfil= together (fulfil is its action)")
        if ledger is not None and not isinstance(ledger, (AsyncLedger, Ledger)):
            raise ConfigurationError("ledger must be a paysdk.AsyncLedger or a paysdk.Ledger")
        self.client = client
        self.lookup = lookup
        self.on_failed = on_failed
        self.ledger = ledger
        self.fulfil = fulfil

    async def __call__(self, request: Request) -> VerifiedPayment:
        _check_installed(request)
        try:
            payment = await self._verify(request)
            return payment if self.ledger is None else await self._fulfil_once(payment)
        except PaymentFailedError as error:
            if self.on_failed is not None:
                recorded = self.on_failed(error)
                if inspect.isawaitable(recorded):
                    await recorded
            raise CallbackRefused(callback_response(error)) from None
        except PaySDKError as error:
            raise CallbackRefused(callback_response(error)) from None

    async def _verify(self, request: Request) -> VerifiedPayment:
        if isinstance(self.client, AsyncClient):
            return await self.client.verify_callback(request, lookup=self.lookup)
        client = self.client
        return await run_in_threadpool(
            lambda: client.verify_callback(request.scope, lookup=self.lookup)
        )

    async def _fulfil_once(self, payment: VerifiedPayment) -> VerifiedPayment:
        ledger, fulfil = self.ledger, self.fulfil
        assert fulfil is not None
        if isinstance(ledger, AsyncLedger):
            result = await ledger.fulfil_once(payment, cast("AsyncAction", fulfil))
        else:
            assert ledger is not None
            result = await run_in_threadpool(lambda: ledger.fulfil_once(payment, fulfil))
        not_now = fulfilment_response(result)
        if not_now is not None:
            raise CallbackRefused(not_now)
        return payment


AsyncAction = Callable[[VerifiedPayment], Awaitable[object]]


def _check_installed(request: Request) -> None:
    app: object = request.scope.get("app")
    handlers: object = getattr(app, "exception_handlers", None)
    if isinstance(handlers, dict) and CallbackRefused not in handlers:
        raise ConfigurationError(
            "call paysdk.integrations.fastapi.install(app) once where the app is made, so "
            'refused callbacks are answered {"status": ...} like every other paysdk helper'
        )

"""Flask: ``@verified_callback`` hands a view a verified payment that matches the merchant's order.

    @app.get("/payments/callback")
    @verified_callback(client, lookup=find_order, ledger=ledger)
    def payment_callback(payment):
        ship(payment.reference)  # runs once per payment with a ledger
        return {"status": "ok"}

A bad callback never reaches the view: it is answered as
[`responses`][paysdk.integrations.responses] describes, and a request by any method but GET
(``HEAD`` too, which Flask routes to a GET view) is answered 405 with ``Allow: GET``. With
``ledger=paysdk.Ledger(...)`` the view runs once per payment, as the ledger's action, and only a
success is recorded as fulfilled: see the fulfilment rule in
[Callbacks](callbacks.md#the-fulfilment-rule-only-a-success-is-recorded). An ``async def`` view,
``lookup`` or ``on_failed`` is run as Flask runs an async view (``app.ensure_sync``, with Flask's
``async`` extra installed).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Concatenate, ParamSpec

from ._extras import missing_extra

try:
    from flask import current_app, has_request_context, make_response, request
    from flask.typing import ResponseReturnValue
except ModuleNotFoundError as _missing:
    raise missing_extra(__name__, "flask", _missing) from _missing

from .._client._sync.client import Client
from .._client.base import Lookup
from .._core.expected import check_lookup
from .._errors import ConfigurationError, PaymentFailedError, PaySDKError
from .._models.verified import VerifiedPayment
from ..ledger import Ledger
from ._callback import (
    check_answer,
    failed_answer,
    failed_payment,
    method_response,
    refusal_of,
    scrub_of,
)
from ._record import fulfil, record_refusal
from ._views import (
    FLASK_ROUTING,
    check_view,
    sync_on_failed_answer,
    takes_keywords_only,
    watched_lookup,
)
from .responses import CallbackResponse, callback_response

__all__ = ["verified_callback"]

P = ParamSpec("P")
OnFailed = Callable[
    [PaymentFailedError],
    "ResponseReturnValue | Awaitable[ResponseReturnValue | None] | None",
]
"""Called with a failed payment (to record it); may return the response to send instead."""
View = Callable[
    Concatenate[VerifiedPayment, P], "ResponseReturnValue | Awaitable[ResponseReturnValue]"
]
"""A view taking the verified payment and the route's values: a ``def`` or an ``async def``."""

CLASS_VIEW = (
    "in a class-based view (flask.views.MethodView or View), list the decorator in the class's "
    "decorators (decorators = [verified_callback(...)]), and the payment reaches "
    "def get(self, payment, **url_values) (or dispatch_request) by keyword"
)


NO_FLASK_REQUEST = (
    "paysdk.integrations.flask's verified_callback serves Flask's requests, and there is none "
    "here (an app of another framework, such as Quart, or the view called by itself): in such an "
    "app, call verify_callback in the view and answer with callback_response (see 'Other "
    "frameworks' in paysdk's callbacks guide)"
)


def verified_callback(
    client: Client,
    *,
    lookup: Lookup,
    ledger: Ledger | None = None,
    on_failed: OnFailed | None = None,
) -> Callable[[View[P]], Callable[P, ResponseReturnValue]]:
    """Decorate a view taking ``(payment, **url_values)``; it runs only for a payment the
    service confirmed and that matches the order.

    Args:
        client: the ``paysdk.Client`` that verifies the callback.
        lookup: finds the merchant's order for a reference ([`Lookup`][paysdk.Lookup]).
        ledger: a ``paysdk.Ledger`` to fulfil each payment once through; refusals are recorded
            in it too.
        on_failed: called with the ``PaymentFailedError`` of a failed payment (to record it);
            may return the response to send instead.

    Returns:
        The decorator.

    Raises:
        ConfigurationError: ``client`` is not a ``paysdk.Client``, or ``ledger`` not a
            ``paysdk.Ledger``; (from the view) it is called without Flask's request (in Quart).
        TypeError: (from the decorator) the view takes no payment, or is routed already: the
            decorator must be below ``@app.get(...)``.
    """
    if not isinstance(client, Client):
        raise ConfigurationError("verified_callback needs a paysdk.Client")
    if ledger is not None and not isinstance(ledger, Ledger):
        raise ConfigurationError("ledger must be a paysdk.Ledger")
    check_lookup(lookup)

    def decorate(view: View[P]) -> Callable[P, ResponseReturnValue]:
        check_view(view, ("payment",), FLASK_ROUTING, method=CLASS_VIEW, keywords=True)
        by_keyword = takes_keywords_only(view)  # a class-based view's as_view() function
        scrub = scrub_of(client)

        @functools.wraps(view)
        def callback_view(*args: P.args, **kwargs: P.kwargs) -> ResponseReturnValue:
            if not has_request_context():
                raise ConfigurationError(NO_FLASK_REQUEST)
            not_get = method_response(request.method)
            if not_get is not None:
                return _answer(not_get)
            watched = watched_lookup(current_app.ensure_sync(lookup))
            try:
                payment = client.verify_callback(request.query_string, lookup=watched.run)
            except PaySDKError as error:
                if watched.raised(error):
                    raise
                failed = failed_payment(error)
                answer: ResponseReturnValue | None = (
                    current_app.ensure_sync(on_failed)(failed) if on_failed and failed else None
                )
                sync_on_failed_answer(answer)
                record_refusal(ledger, refusal_of(error, scrub))
                own = functools.partial(_failed_response, error)
                # mypy joins ResponseReturnValue's members into object; pyright keeps the union
                return failed_answer(answer, own)  # type: ignore[return-value]
            run: Callable[..., ResponseReturnValue] = current_app.ensure_sync(view)

            def called(paid: VerifiedPayment) -> ResponseReturnValue:
                if by_keyword:  # as_view() passes it on to get(self, payment, ...) by keyword
                    return run(*args, payment=paid, **kwargs)
                return run(paid, *args, **kwargs)

            if ledger is None:
                return called(payment)
            outcome = fulfil(ledger, payment, lambda paid: _checked(called(paid), scrub), scrub)
            return _answer(outcome) if isinstance(outcome, CallbackResponse) else outcome

        # OPTIONS reaches the view too, to be refused: Flask would otherwise answer it itself.
        callback_view.provide_automatic_options = False  # type: ignore[attr-defined]
        return callback_view

    return decorate


def _checked(answer: ResponseReturnValue, scrub: Callable[[str], str]) -> ResponseReturnValue:
    """The view's answer, as a response, if it is a success (``_callback.check_answer``, whose
    reason ``scrub`` blots the key out of). ``None`` (a forgotten ``return``) ran to its end:
    recorded fulfilled, then refused by Flask itself."""
    if answer is None:
        return check_answer(answer, None, bytes, scrub)
    response = make_response(answer)
    return check_answer(
        response,
        response.status_code,
        lambda: b"" if response.is_streamed else response.get_data(),
        scrub,
    )


def _failed_response(error: PaySDKError) -> ResponseReturnValue:
    """The helper's own answer to a failed payment ``on_failed`` did not answer (200 ``failed``)."""
    return _answer(callback_response(error))


def _answer(response: CallbackResponse) -> ResponseReturnValue:
    return response.body, response.status_code, response.headers

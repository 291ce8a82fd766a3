"""Flask: ``@verified_callback`` hands a view a verified payment that matches the merchant's order.

    @app.get("/payments/callback")
    @verified_callback(client, lookup=find_order)
    def payment_callback(payment):
        fulfil(payment.reference)  # idempotent: the callback may come twice
        return {"status": "ok"}

A bad callback never reaches the view: it is answered as ``responses`` describes. With
``ledger=paysdk.Ledger(...)`` the view runs once per payment, as the ledger's action: a
duplicate is answered 200 ``already_fulfilled``, one being fulfilled elsewhere 503.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, cast

from ._extras import missing_extra

try:
    from flask import request
    from flask.typing import ResponseReturnValue
except ModuleNotFoundError as _missing:
    raise missing_extra(__name__, "flask", _missing) from _missing

from .._client.clients import Client, Lookup
from .._errors import ConfigurationError, PaymentFailedError, PaySDKError
from .._models.verified import VerifiedPayment
from ..ledger import Ledger
from .responses import callback_response, fulfilment_response

__all__ = ["verified_callback"]

P = ParamSpec("P")
OnFailed = Callable[[PaymentFailedError], "ResponseReturnValue | None"]
"""Called with a failed payment (to record it); may return the response to send instead."""


def verified_callback(
    client: Client,
    *,
    lookup: Lookup,
    on_failed: OnFailed | None = None,
    ledger: Ledger | None = None,
) -> Callable[
    [Callable[Concatenate[VerifiedPayment, P], ResponseReturnValue]],
    Callable[P, ResponseReturnValue],
]:
    """Decorate a view taking ``(payment, **url_values)``; it runs only for a matching payment.

    ``lookup(reference)`` finds the merchant's order (an object or mapping with ``amount`` and
    ``currency``, or ``paysdk.Expected``) or returns ``None`` for a reference never issued.

    Args:
        client: the ``paysdk.Client`` that verifies the callback.
        lookup: finds the merchant's order for a reference ([`Lookup`][paysdk.Lookup]): an
            object or mapping with ``amount`` and ``currency``, a ``paysdk.Expected``, or
            ``None`` for a reference never issued.
        on_failed: called with the ``PaymentFailedError`` of a failed payment (to record it);
            may return the response to send instead.
        ledger: a ``paysdk.Ledger`` to fulfil each payment once through.

    Returns:
        The decorator.

    Raises:
        ConfigurationError: ``client`` is not a ``paysdk.Client``, or ``ledger`` not a
            ``paysdk.Ledger``.
    """
    if not isinstance(client, Client):
        raise ConfigurationError("verified_callback needs a paysdk.Client")
    if ledger is not None and not isinstance(ledger, Ledger):
        raise ConfigurationError("ledger must be a paysdk.Ledger")

    def decorate(
        view: Callable[Concatenate[VerifiedPayment, P], ResponseReturnValue],
    ) -> Callable[P, ResponseReturnValue]:
        @functools.wraps(view)
        def callback_view(*args: P.args, **kwargs: P.kwargs) -> ResponseReturnValue:
            try:
                payment = client.verify_callback(request.query_string, lookup=lookup)
            except PaymentFailedError as error:
                answer = on_failed(error) if on_failed is not None else None
                return answer if answer is not None else _error_response(error)
            except PaySDKError as error:
                return _error_response(error)
            if ledger is None:
                return view(payment, *args, **kwargs)
            try:
                result = ledger.fulfil_once(payment, lambda paid: view(paid, *args, **kwargs))
            except PaySDKError as error:
                return _error_response(error)
            not_now = fulfilment_response(result)
            if not_now is not None:
                return not_now.body, not_now.status_code
            return cast("ResponseReturnValue", result.value)

        return callback_view

    return decorate


def _error_response(error: PaySDKError) -> ResponseReturnValue:
    response = callback_response(error)
    return response.body, response.status_code

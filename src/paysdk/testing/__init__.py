"""paysdk's testing kit: realistic payments, an in-memory fake of the service, and callbacks.

    from paysdk.testing import MockPaymentAPI, verified_payment, Fault

    payment = verified_payment(amount=5000, currency="USD")      # a paysdk.VerifiedPayment
    with MockPaymentAPI() as api:                  # needs python-paysdk[testing] (respx)
        api.add_payment("order-7", success=False)
        api.inject(Fault.server_error(503), times=2)

Installing paysdk also installs a pytest plugin with the fixtures ``paysdk_api``,
``paysdk_client``, ``paysdk_sandbox`` and ``paysdk_callback`` (see
[Testing your integration](testing.md)). Every name here is imported on first use, so the
plugin costs nothing until a fixture is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._errors import ConfigurationError
from .._lazy import lazy_names

if TYPE_CHECKING:
    from .._service.faults import Fault
    from .._service.records import PaymentRecord
    from ._callbacks import CallbackSender, Interface
    from ._factories import (
        PaymentFields,
        PaymentMethod,
        listed_payment,
        payment_pair,
        payment_record,
        verified_payment,
    )
    from ._mock_api import MockPaymentAPI
    from ._mock_requests import RecordedCall

__all__ = [
    "CallbackSender",
    "Fault",
    "Interface",
    "MockPaymentAPI",
    "PaymentFields",
    "PaymentMethod",
    "PaymentRecord",
    "RecordedCall",
    "listed_payment",
    "payment_pair",
    "payment_record",
    "verified_payment",
]

_HOMES = {
    "CallbackSender": "._callbacks",
    "Interface": "._callbacks",
    "Fault": ".._service.faults",
    "PaymentRecord": ".._service.records",
    "MockPaymentAPI": "._mock_api",
    "RecordedCall": "._mock_requests",
    "PaymentFields": "._factories",
    "PaymentMethod": "._factories",
    "listed_payment": "._factories",
    "payment_pair": "._factories",
    "payment_record": "._factories",
    "verified_payment": "._factories",
}

_load, _names = lazy_names(__name__, _HOMES)


def __getattr__(name: str) -> Any:
    try:
        return _load(name)
    except ModuleNotFoundError as exc:
        if exc.name != "respx":
            raise
        raise ConfigurationError(
            f"paysdk.testing.{name} needs respx: pip install 'python-paysdk[testing]'"
        ) from None


def __dir__() -> list[str]:
    return _names()

"""A local sandbox of the payment service: real HTTP on loopback, seeded payments, faults.

```python
from paysdk.sandbox import Sandbox, COMPLETED_REFERENCE

with Sandbox() as sb:
    with paysdk.Client(secret_key=sb.secret_key, base_url=sb.base_url) as client:
        client.verify(COMPLETED_REFERENCE)
```

It answers ``GET /payment/{reference}`` and ``GET /payments`` exactly as the specification
describes, can fail on demand ([`Fault`][paysdk.sandbox.Fault]), records requests, and sends
callbacks. Also a process: ``paysdk sandbox`` or ``python -m paysdk.sandbox``. Nothing here is
imported by ``import paysdk``.
"""

from __future__ import annotations

from .._lazy import publish
from .._models.timestamps import wire_timestamp
from .._service.api import NOT_FOUND_BODY, UNAUTHORIZED_BODY
from .._service.callbacks import callback_url
from .._service.faults import MAX_DELAY, MAX_TIMES, Disconnect, Fault, FaultBook
from .._service.records import COMPLETED, FAILED, PaymentRecord, SeedError
from .._service.seed import (
    COMPLETED_REFERENCE,
    FAILED_REFERENCE,
    NON_CARD_REFERENCE,
    UNKNOWN_REFERENCE,
    default_payments,
    load_seed,
    parse_seed,
)
from ._callback import CallbackDeliveryError, CallbackResult, send_callback
from ._control import MAX_CALLBACK_TIMEOUT
from ._requests import RecordedRequest
from ._server import Sandbox
from ._state import StateFileError

__all__ = [
    "COMPLETED",
    "COMPLETED_REFERENCE",
    "FAILED",
    "FAILED_REFERENCE",
    "MAX_CALLBACK_TIMEOUT",
    "MAX_DELAY",
    "MAX_TIMES",
    "NON_CARD_REFERENCE",
    "NOT_FOUND_BODY",
    "UNAUTHORIZED_BODY",
    "UNKNOWN_REFERENCE",
    "CallbackDeliveryError",
    "CallbackResult",
    "Disconnect",
    "Fault",
    "FaultBook",
    "PaymentRecord",
    "RecordedRequest",
    "Sandbox",
    "SeedError",
    "StateFileError",
    "callback_url",
    "default_payments",
    "load_seed",
    "parse_seed",
    "send_callback",
    "wire_timestamp",
]

publish(__name__, *(globals()[name] for name in __all__))


def __dir__() -> list[str]:
    """The public names only, not the modules and helpers this package imports to work."""
    return sorted(__all__)

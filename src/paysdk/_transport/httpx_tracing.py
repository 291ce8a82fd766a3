"""OpenTelemetry's httpx instrumentation over paysdk's own httpx transport, and whether paysdk's
own client may send past httpx's client (``sends_past``). The instrumentors patch httpx's
transport classes, not paysdk's, so while one for the httpx paysdk runs on is instrumenting,
paysdk sends through its public tracing transport. Asked per request (an app may instrument
after making its client), importing nothing of OpenTelemetry: an uninstrumented app pays one
dict lookup. Under ``httpx2.alias_httpx()`` either instrumentor traces paysdk (one span per
request with both on); the ``...Httpx2`` transports came in 0.65b0, before which the unsuffixed
ones are httpx2's under the alias."""

from __future__ import annotations

import sys
from types import FunctionType, ModuleType
from typing import Any

import httpx

__all__ = ["async_traced", "instrumentation", "sends_past", "traced"]

MODULE = "opentelemetry.instrumentation.httpx"

ON_HTTPX2 = httpx.__name__ == "httpx2"
"""paysdk runs on httpx2: the application aliased httpx to it before importing paysdk."""

INSTRUMENTORS = (
    ("HTTPX2ClientInstrumentor", "HTTPXClientInstrumentor")
    if ON_HTTPX2
    else ("HTTPXClientInstrumentor",)
)
"""The instrumentors that trace clients of the httpx paysdk runs on."""

TRANSPORT_SUFFIX = "Httpx2" if ON_HTTPX2 else ""
"""What the instrumentation's tracing transports for the httpx paysdk runs on are suffixed."""


def instrumentation() -> ModuleType | None:
    """OpenTelemetry's httpx instrumentation, if the application loaded it and one of its
    instrumentors of the httpx paysdk runs on is instrumenting now; ``None`` otherwise."""
    module = sys.modules.get(MODULE)
    if module is None:
        return None
    for name in INSTRUMENTORS:
        instrumentor = getattr(module, name, None)
        if instrumentor is not None and instrumentor().is_instrumented_by_opentelemetry:
            return module
    return None  # partly imported still, or not instrumenting


CLIENT_FILE = httpx.Client.__init__.__code__.co_filename
"""Where httpx writes its clients, read from ``Client.__init__`` (which tracers leave alone)."""


def sends_past(client_class: type[httpx.Client | httpx.AsyncClient]) -> bool:
    """Whether paysdk's own client may hand its attempts to its pools past httpx's client: not
    while OpenTelemetry's instrumentation traces httpx, nor while something replaced
    ``client_class.send`` (Sentry's and Datadog's httpx integrations trace, and add their trace
    headers, there), so they still see paysdk's requests. Asked per request, as either may start
    after the client is made; a wrapper (wrapt's) hands on ``__code__``, so its type is checked.
    """
    if instrumentation() is not None:
        return False
    send = vars(client_class).get("send")
    return type(send) is FunctionType and send.__code__.co_filename == CLIENT_FILE


def _wrapped(module: ModuleType, name: str, transport: object) -> Any:
    """``transport`` inside the tracing transport class ``name`` for the httpx paysdk runs on."""
    return (getattr(module, name + TRANSPORT_SUFFIX, None) or getattr(module, name))(transport)


def traced(transport: httpx.BaseTransport, module: ModuleType) -> httpx.BaseTransport:
    """``transport`` inside the instrumentation's tracing transport: each request a client
    span, on the application's tracer and meter providers."""
    wrapper: httpx.BaseTransport = _wrapped(module, "SyncOpenTelemetryTransport", transport)
    return wrapper


def async_traced(
    transport: httpx.AsyncBaseTransport, module: ModuleType
) -> httpx.AsyncBaseTransport:
    """The async twin of ``traced``, named for ``scripts/unasync.py``'s rules."""
    wrapper: httpx.AsyncBaseTransport = _wrapped(module, "AsyncOpenTelemetryTransport", transport)
    return wrapper

"""OpenTelemetry's httpx instrumentation over the transport paysdk's httpx clients send through.

``HTTPXClientInstrumentor`` traces httpx's own transports by wrapping their classes' methods;
paysdk's transport is its own, so while the instrumentor is on, paysdk's transport sends through
the instrumentation's public ``SyncOpenTelemetryTransport`` (or ``AsyncOpenTelemetryTransport``)
wrapped around it instead. Asked on each request, so an application that instruments after
making its client is traced too. Nothing of OpenTelemetry is imported here: an application that
has not loaded the instrumentation pays one dictionary lookup a request.

``async_traced`` and ``traced`` are twins that ``scripts/unasync.py``'s rules turn one into the
other.
"""

from __future__ import annotations

import sys
from types import ModuleType

import httpx

__all__ = ["async_traced", "instrumentation", "traced"]

MODULE = "opentelemetry.instrumentation.httpx"


def instrumentation() -> ModuleType | None:
    """OpenTelemetry's httpx instrumentation, if the application loaded it and its
    ``HTTPXClientInstrumentor`` is instrumenting now; ``None`` otherwise."""
    module = sys.modules.get(MODULE)
    if module is None:
        return None
    instrumentor = getattr(module, "HTTPXClientInstrumentor", None)
    if instrumentor is None or not instrumentor().is_instrumented_by_opentelemetry:
        return None  # partly imported still, or not instrumenting
    return module


def traced(transport: httpx.BaseTransport, module: ModuleType) -> httpx.BaseTransport:
    """``transport`` inside the instrumentation's tracing transport: each request a client
    span, on the application's tracer and meter providers."""
    wrapper: httpx.BaseTransport = module.SyncOpenTelemetryTransport(transport)
    return wrapper


def async_traced(
    transport: httpx.AsyncBaseTransport, module: ModuleType
) -> httpx.AsyncBaseTransport:
    """The async twin of ``traced``."""
    wrapper: httpx.AsyncBaseTransport = module.AsyncOpenTelemetryTransport(transport)
    return wrapper

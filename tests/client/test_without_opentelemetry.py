"""paysdk without OpenTelemetry: it works where none is installed, and never loads it itself.

Each test runs a fresh interpreter (the test process has loaded OpenTelemetry already), with
the suite's own ``PYTHONPATH``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

RUN_A_VERIFY = """
import paysdk
from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox

with Sandbox() as sandbox:
    with paysdk.Client(secret_key=sandbox.secret_key, base_url=sandbox.base_url) as client:
        assert client.verify(COMPLETED_REFERENCE).succeeded
        assert len(list(client.iter_payments())) == len(sandbox.payments)
"""


def run(code: str) -> str:
    """What a fresh interpreter running ``code`` prints; it must succeed."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_paysdk_works_where_opentelemetry_cannot_be_imported() -> None:
    """With every ``opentelemetry`` import refused, a verify and an iteration succeed and
    nothing of OpenTelemetry is loaded."""
    blocker = """
    import sys

    class NoOpenTelemetry:
        def find_spec(self, name, path=None, target=None):
            if name == "opentelemetry" or name.startswith("opentelemetry."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoOpenTelemetry())
    try:
        import opentelemetry.trace
    except ModuleNotFoundError:
        pass
    else:
        raise AssertionError("the blocker let opentelemetry in")
    """
    after = "\nprint(sorted(m for m in sys.modules if m.split('.')[0] == 'opentelemetry'))\n"
    assert run(textwrap.dedent(blocker) + RUN_A_VERIFY + after) == "[]"


def test_a_call_while_another_thread_imports_opentelemetry_is_untraced_not_failed() -> None:
    """``opentelemetry.trace`` is in ``sys.modules`` from the start of its import, which another
    thread (configuring the SDK) may be in: a call made then is not traced, and succeeds."""
    partly = """
    import importlib.machinery
    import sys
    import types

    partial = types.ModuleType("opentelemetry.trace")  # as an import under way leaves it
    partial.__spec__ = importlib.machinery.ModuleSpec("opentelemetry.trace", None)
    partial.__spec__._initializing = True
    sys.modules["opentelemetry.trace"] = partial
    """
    partly = textwrap.dedent(partly)
    run(partly + RUN_A_VERIFY)
    del_spec = "\ndel sys.modules['opentelemetry.trace'].__spec__._initializing\n"
    run(partly + del_spec + RUN_A_VERIFY)  # no flag, and none of its names defined yet


def test_a_call_does_not_load_opentelemetry_the_application_did_not() -> None:
    """OpenTelemetry installed but not imported by the application: a verify leaves
    ``opentelemetry.trace`` unloaded."""
    code = "import sys\n" + RUN_A_VERIFY + "\nprint('opentelemetry.trace' in sys.modules)\n"
    assert run(code) == "False"


def test_spans_go_to_the_provider_the_application_set() -> None:
    """An application that sets a global tracer provider sees a ``paysdk.verify`` span on it,
    with no monkeypatching."""
    setup = """
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    """
    report = "\nprint(sorted(span.name for span in exporter.get_finished_spans()))\n"
    assert run(textwrap.dedent(setup) + RUN_A_VERIFY + report) == str(
        ["paysdk.iter_payments", "paysdk.verify"]
    )


def test_httpx_instrumentation_turned_on_after_the_client_is_made_traces_its_requests() -> None:
    """An application that sets its tracer provider and turns on ``HTTPXClientInstrumentor``
    after making its clients sees each request's client span nested under the call's span;
    once it turns the instrumentation off, no more client spans."""
    code = """
    import anyio
    from opentelemetry import trace
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind

    import paysdk
    from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)

    def nesting():
        spans = exporter.get_finished_spans()
        names = {span.context.span_id: span.name for span in spans}
        exporter.clear()
        return sorted(
            (span.name, names.get(span.parent.span_id) if span.parent else None)
            for span in spans
            if span.kind is SpanKind.CLIENT
        )

    with Sandbox() as sandbox:
        options = dict(secret_key=sandbox.secret_key, base_url=sandbox.base_url)
        client, aclient = paysdk.Client(**options), paysdk.AsyncClient(**options)
        HTTPXClientInstrumentor().instrument()
        client.verify(COMPLETED_REFERENCE)
        anyio.run(aclient.verify, COMPLETED_REFERENCE)
        print(nesting())
        HTTPXClientInstrumentor().uninstrument()
        client.verify(COMPLETED_REFERENCE)
        print(nesting())
        client.close()
        anyio.run(aclient.aclose)
    """
    assert run(code).splitlines() == [
        str([("GET", "paysdk.verify"), ("GET", "paysdk.verify")]),
        "[]",
    ]

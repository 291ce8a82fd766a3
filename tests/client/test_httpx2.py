"""paysdk beside httpx2, httpx's successor: an application that calls ``httpx2.alias_httpx()``
runs paysdk on httpx2 and may pass its httpx2 client; one that does not is told, when the client
is made, how to pass one. The tests that need httpx2 run on every Python it supports (3.11 and
later; the ``tests`` extra installs it there), unaliased, and in the matrix's httpx2 job
(``scripts/httpx2_alias.py``), aliased."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import httpx
import pytest

from paysdk.sandbox import Sandbox
from tests.support.ports import unused_port
from tests.support.scripts import SCRIPTS

ALIASED_VENV = "_paysdk_httpx2_alias" in sys.modules
"""This interpreter's venv aliases httpx to httpx2 at each start: the matrix's httpx2 job's."""

needs_httpx2 = pytest.mark.skipif(
    sys.version_info < (3, 11),
    reason="httpx2 needs Python 3.11 or later",
)
"""From 3.11 on the test runs, and fails where httpx2 is missing: never skipped."""


def test_httpx_is_httpx2_exactly_in_the_venvs_that_alias_it() -> None:
    """The httpx2 job's suite runs on httpx2, and every other on httpx."""
    assert (httpx.__name__, httpx.__name__ == "httpx2") == (
        "httpx2" if ALIASED_VENV else "httpx",
        ALIASED_VENV,
    )


def run_app(code: str, *args: str, **env: str) -> list[str]:
    """What ``code`` prints, run by a new interpreter on plain httpx unless it aliases it."""
    result = subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**os.environ, "PAYSDK_HTTPX2_ALIAS": "off", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


ALIASED_APP = """
import asyncio, os
import httpx2
httpx2.alias_httpx()
import httpx
import paysdk
from paysdk.sandbox import COMPLETED_REFERENCE

key, url = os.environ["SANDBOX_KEY"], os.environ["SANDBOX_URL"]
print("httpx is httpx2:", httpx is httpx2)
with httpx2.Client() as http:
    client = paysdk.Client(secret_key=key, base_url=url, http_client=http)
    print("Client:", client.verify(COMPLETED_REFERENCE).succeeded)

async def main():
    async with httpx2.AsyncClient() as http:
        client = paysdk.AsyncClient(secret_key=key, base_url=url, http_client=http)
        print("AsyncClient:", (await client.verify(COMPLETED_REFERENCE)).succeeded)

asyncio.run(main())
with httpx2.Client() as http:
    closed = f"http://127.0.0.1:{os.environ['CLOSED_PORT']}"
    client = paysdk.Client(secret_key=key, base_url=closed, http_client=http, max_retries=0)
    try:
        client.verify(COMPLETED_REFERENCE)
    except paysdk.APIConnectionError as exc:
        print("refused connection:", type(exc).__name__)
"""


@needs_httpx2
def test_with_the_alias_an_apps_httpx2_client_is_an_httpx_client(sandbox: Sandbox) -> None:
    closed_port = unused_port()
    lines = run_app(
        ALIASED_APP,
        SANDBOX_KEY=sandbox.secret_key,
        SANDBOX_URL=sandbox.base_url,
        CLOSED_PORT=str(closed_port),
    )
    assert lines == [
        "httpx is httpx2: True",
        "Client: True",
        "AsyncClient: True",
        "refused connection: APIConnectionError",  # httpx2's ConnectError, mapped as httpx's
    ]


PLAIN_APP = """
import httpx, httpx2
import paysdk

print(httpx.__name__, httpx.__version__.partition(".")[0])
for paysdk_client, http_client in (
    (paysdk.Client, httpx2.Client()),
    (paysdk.AsyncClient, httpx2.AsyncClient()),
):
    try:
        paysdk_client(secret_key="sk_test_1", base_url="https://pay.test", http_client=http_client)
    except paysdk.ConfigurationError as exc:
        print(exc)
"""

ON_HTTPX2 = (
    ": paysdk runs on the httpx installed beside httpx2; for paysdk to run on httpx2, call "
    "httpx2.alias_httpx() before anything imports httpx (paysdk included), and an httpx client "
    "is then an httpx2 client"
)


@needs_httpx2
def test_without_the_alias_an_httpx2_client_is_refused_with_the_way_to_pass_it() -> None:
    """paysdk knows httpx's exceptions, not httpx2's: it refuses the client when it is made,
    rather than let an httpx2 error escape a call."""
    assert run_app(PLAIN_APP) == [
        "httpx 0",
        "Client needs http_client to be an httpx.Client, not httpx2.Client" + ON_HTTPX2,
        "AsyncClient needs http_client to be an httpx.AsyncClient, not httpx2.AsyncClient"
        + ON_HTTPX2,
    ]


LAZY_ALIAS = """
import importlib.util, os, sys

spec = importlib.util.spec_from_file_location("alias", sys.argv[1])
alias = importlib.util.module_from_spec(spec)
spec.loader.exec_module(alias)
alias.install()
print("opted out:", not any(isinstance(f, alias.AliasOnFirstImport) for f in sys.meta_path))
sys.meta_path.insert(0, alias.AliasOnFirstImport())
import email.message, json, sqlite3
print("loaded early:", sorted({"httpx", "httpx2", "httpcore", "httpcore2"} & set(sys.modules)))
import httpx._client
import httpcore
print(httpx.__name__, httpx._client.__name__, httpcore.__name__)
"""


def test_the_matrix_aliasing_loads_httpx2_on_the_first_import_of_httpx_and_not_before() -> None:
    """scripts/httpx2_alias.py's finder, which the httpx2 job installs in its venv: a process
    that imports no httpx loads no httpx2, and without httpx2 the real httpx loads."""
    on_httpx2 = importlib.util.find_spec("httpx2") is not None or ALIASED_VENV
    assert run_app(LAZY_ALIAS, str(SCRIPTS / "httpx2_alias.py")) == [
        "opted out: True",  # PAYSDK_HTTPX2_ALIAS=off
        "loaded early: []",
        "httpx2 httpx2._client httpcore2" if on_httpx2 else "httpx httpx._client httpcore",
    ]


TRACED_APP = """
import asyncio, os, sys
import httpx2
if sys.argv[1] == "aliased":
    httpx2.alias_httpx()
from opentelemetry import trace
from opentelemetry.instrumentation.httpx import HTTPX2ClientInstrumentor, HTTPXClientInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
import paysdk
from paysdk.sandbox import COMPLETED_REFERENCE

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
options = dict(secret_key=os.environ["SANDBOX_KEY"], base_url=os.environ["SANDBOX_URL"])
client, aclient = paysdk.Client(**options), paysdk.AsyncClient(**options)

async def calls(instrumentors):
    for instrumentor in instrumentors:
        instrumentor.instrument()
    client.verify(COMPLETED_REFERENCE)
    await aclient.verify(COMPLETED_REFERENCE)
    for instrumentor in instrumentors:
        instrumentor.uninstrument()
    spans = exporter.get_finished_spans()
    exporter.clear()
    names = {span.context.span_id: span.name for span in spans}
    http_spans = [span for span in spans if span.kind is SpanKind.CLIENT]
    return sorted((span.name, names.get(span.parent.span_id)) for span in http_spans)

async def main():
    print("HTTPX2ClientInstrumentor:", await calls([HTTPX2ClientInstrumentor()]))
    print("HTTPXClientInstrumentor:", await calls([HTTPXClientInstrumentor()]))
    print("both:", await calls([HTTPX2ClientInstrumentor(), HTTPXClientInstrumentor()]))
    print("neither:", await calls([]))
    client.close()
    await aclient.aclose()

asyncio.run(main())
"""

TRACED = str([("GET", "paysdk.verify"), ("GET", "paysdk.verify")])
"""The client span of each call's one request (the sync one, then the async one), inside it."""


@needs_httpx2
def test_on_httpx2_either_httpx_instrumentor_traces_each_request_once(sandbox: Sandbox) -> None:
    """An application on httpx2 that turns on ``HTTPX2ClientInstrumentor`` (or
    ``HTTPXClientInstrumentor``, which the alias points at httpx2 too, or both) after making its
    clients sees one client span a request, nested under the call's span, over real HTTP."""
    lines = run_app(
        TRACED_APP, "aliased", SANDBOX_KEY=sandbox.secret_key, SANDBOX_URL=sandbox.base_url
    )
    assert lines == [
        f"HTTPX2ClientInstrumentor: {TRACED}",
        f"HTTPXClientInstrumentor: {TRACED}",
        f"both: {TRACED}",
        "neither: []",
    ]


@needs_httpx2
def test_on_httpx_only_httpx_s_instrumentor_traces_paysdk(sandbox: Sandbox) -> None:
    """Without the alias paysdk sends with httpx: ``HTTPX2ClientInstrumentor`` traces the
    application's httpx2 clients, not paysdk's requests, as it does not trace its httpx ones."""
    lines = run_app(
        TRACED_APP, "plain", SANDBOX_KEY=sandbox.secret_key, SANDBOX_URL=sandbox.base_url
    )
    assert lines == [
        "HTTPX2ClientInstrumentor: []",
        f"HTTPXClientInstrumentor: {TRACED}",
        f"both: {TRACED}",
        "neither: []",
    ]

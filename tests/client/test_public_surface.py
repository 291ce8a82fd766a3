"""The client's promises through its public surface: bounded answers, scrubbed keys, no foreign
exception, null-tolerant optional fields and the environment switches."""

from __future__ import annotations

import asyncio
import datetime as dt
import gzip
import json
import logging
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

import paysdk
from paysdk._errors.api import BODY_PARSE_LIMIT, MAX_ERRORS_KEPT
from tests.conftest import (
    BASE_URL,
    SECRET,
    MakeClient,
    listed_body,
    verify_body,
)

pytestmark = pytest.mark.anyio

VERIFY_URL = f"{BASE_URL}/payment/order-1042"


# --- size caps -----------------------------------------------------------------------------------


async def test_a_verify_body_past_its_cap_is_refused(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    body = verify_body(metadata={"pad": "x" * 2_000_000})
    route = respx_mock.get(VERIFY_URL).respond(200, json=body)
    with pytest.raises(paysdk.ResponseTooLargeError, match="1,048,576 bytes") as caught:
        await make_client().verify("order-1042")
    assert caught.value.limit == 1024 * 1024
    assert caught.value.status_code == 200
    assert len(caught.value.content) == 1024 * 1024
    assert route.call_count == 1  # not retried: the same body would come again


async def test_the_cap_is_a_setting_and_the_list_error_points_to_streaming(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    items = [listed_body(f"order-{n}") for n in range(200)]
    respx_mock.get(f"{BASE_URL}/payments").respond(200, json={"data": items})
    client = make_client(max_response_bytes=10_000)
    with pytest.raises(paysdk.ResponseTooLargeError, match="iter_payments"):
        await client.list_payments()
    assert len(await client.list_payments(max_response_bytes=1_000_000)) == 200


async def test_a_call_given_no_cap_reads_up_to_the_endpoints_default_not_without_end(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    """A call's ``max_response_bytes=None`` undoes the client's setting for that call: the
    endpoint's default cap (64 MiB for a list) applies, as documented, not none at all."""
    items = [listed_body(f"order-{n}") for n in range(200)]
    respx_mock.get(f"{BASE_URL}/payments").respond(200, json={"data": items})
    client = make_client(max_response_bytes=10_000)
    assert len(await client.list_payments(max_response_bytes=None)) == 200
    bomb = gzip.compress(b'{"data": [' + b" " * (65 * 1024 * 1024) + b"]}")
    respx_mock.get(f"{BASE_URL}/payments").respond(
        200, content=bomb, headers={"Content-Encoding": "gzip"}
    )
    with pytest.raises(paysdk.ResponseTooLargeError) as caught:
        await client.list_payments(max_response_bytes=None)
    assert caught.value.limit == 64 * 1024 * 1024


async def test_an_error_over_a_large_body_keeps_what_a_reader_needs_not_a_parse_of_it(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    # 30,000 payments, each with a bad amount: a parsed body and every error would be kept by
    # the exception, many times the bytes' size. The bytes, the text and a sample are kept.
    items = [listed_body(f"order-{n}", amount="lots") for n in range(30_000)]
    respx_mock.get(f"{BASE_URL}/payments").respond(200, json={"data": items})
    with pytest.raises(paysdk.ResponseValidationError, match="and 29,995 more") as caught:
        await make_client().list_payments()
    error = caught.value
    assert len(error.content) > BODY_PARSE_LIMIT
    assert error.body is None
    assert error.text.startswith('{"data"')
    assert len(error.errors) == MAX_ERRORS_KEPT
    assert error.errors[0]["loc"] == ("data", 0, "amount")


async def test_a_gzip_bomb_is_stopped_at_the_cap_of_decoded_bytes(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    bomb = gzip.compress(b'{"data": [' + b" " * 50_000_000 + b"]}")
    respx_mock.get(f"{BASE_URL}/payments").respond(
        200, content=bomb, headers={"Content-Encoding": "gzip"}
    )
    with pytest.raises(paysdk.ResponseTooLargeError):
        await make_client(max_response_bytes=1_000_000).list_payments()


async def test_an_error_body_is_cut_not_refused(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.get(VERIFY_URL).respond(403, content=b"<html>" + b"x" * 500_000)
    with pytest.raises(paysdk.PermissionDeniedError) as caught:
        await make_client().verify("order-1042")
    assert len(caught.value.content) == 64 * 1024


async def test_a_corrupt_content_encoding_says_so(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    corrupt = httpx.ByteStream(b"this is not gzip")
    route = respx_mock.get(VERIFY_URL)
    route.side_effect = lambda request: httpx.Response(
        200, stream=corrupt, headers={"Content-Encoding": "gzip"}
    )
    # respx decodes while answering, so no status is known here: the real-socket fault
    # matrix (tests/transport/test_hostile_servers.py) checks the case where the status came first
    with pytest.raises(paysdk.APIConnectionError, match="could not be decoded") as caught:
        await make_client(max_retries=0).verify("order-1042")
    assert "could not reach" not in str(caught.value)
    assert route.call_count == 1


# --- the key in messages --------------------------------------------------------------------------


async def test_a_server_echoing_the_key_does_not_get_it_into_messages(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    echoed = {"error": "bad header", "message": f"Authorization: Bearer {SECRET}"}
    respx_mock.get(VERIFY_URL).respond(401, json=echoed)
    with pytest.raises(paysdk.AuthenticationError) as caught:
        await make_client().verify("order-1042")
    error = caught.value
    for written in (str(error), repr(error), error.message, error.text, repr(error.body)):
        assert SECRET not in written
    assert "<secret key>" in str(error)
    assert SECRET.encode() in error.content  # the raw bytes stay as received


async def test_a_non_json_echo_is_scrubbed_too(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.get(VERIFY_URL).respond(200, text=f"<p>Bearer {SECRET}</p>")
    with pytest.raises(paysdk.ResponseValidationError) as caught:
        await make_client().verify("order-1042")
    assert SECRET not in str(caught.value)


# --- foreign exceptions ---------------------------------------------------------------------------


def test_repr_of_a_client_whose_constructor_failed() -> None:
    client = object.__new__(paysdk.Client)
    with pytest.raises(paysdk.ConfigurationError):
        client.__init__(secret_key="", base_url=None)  # type: ignore[misc]
    assert repr(client) == "<paysdk.Client (not configured)>"


async def test_a_transport_raising_a_plain_oserror_is_a_connection_error(
    make_client: MakeClient,
) -> None:
    class Broken(httpx.BaseTransport, httpx.AsyncBaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            raise OSError("no route to host")

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            raise OSError("no route to host")

    probe = make_client()
    http: Any = (
        httpx.AsyncClient(transport=Broken())
        if probe.is_async
        else httpx.Client(transport=Broken())
    )
    client = make_client(http_client=http, max_retries=1)
    with pytest.raises(paysdk.APIConnectionError, match="OSError: no route to host") as caught:
        await client.verify("order-1042")
    assert caught.value.attempts == 2
    await http.aclose() if probe.is_async else http.close()


def test_closing_a_client_while_another_thread_waits_to_retry() -> None:
    calls = 0

    def flaky(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(503)

    with respx.mock(base_url=BASE_URL) as mock:
        mock.get("/payment/order-1042").side_effect = flaky
        client = paysdk.Client(secret_key=SECRET, base_url=BASE_URL, max_retries=3)
        client._sleep = lambda seconds: time.sleep(0.2)  # type: ignore[method-assign]
        caught: list[BaseException] = []

        def verify() -> None:
            try:
                client.verify("order-1042")
            except BaseException as exc:
                caught.append(exc)

        worker = threading.Thread(target=verify)
        worker.start()
        time.sleep(0.05)
        client.close()
        worker.join(5)
    assert len(caught) == 1
    assert isinstance(caught[0], paysdk.ClientClosedError)


def test_one_async_client_in_two_event_loops_is_a_paysdk_error() -> None:
    with respx.mock(base_url=BASE_URL) as mock:
        mock.get("/payment/order-1042").respond(200, json=verify_body())
        client = paysdk.AsyncClient(secret_key=SECRET, base_url=BASE_URL)
        asyncio.run(client.verify("order-1042"))
        with pytest.raises(paysdk.EventLoopError, match="one AsyncClient per event loop"):
            asyncio.run(client.verify("order-1042"))
        # the connections belong to the first loop, now closed: nothing is left to close


# --- liberal with the server ----------------------------------------------------------------------


async def test_null_optional_fields_are_taken_as_absent(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    body = verify_body(metadata=None, products=None, customer=None, fee=None, authorization=None)
    respx_mock.get(VERIFY_URL).respond(200, json=body)
    payment = await make_client().verify("order-1042")
    assert (payment.metadata, payment.products, payment.customer) == ({}, [], None)
    listed = listed_body(products=None, id=None, customer_paid=None)
    respx_mock.get(f"{BASE_URL}/payments").respond(200, json={"data": [listed]})
    (only,) = await make_client().list_payments()
    assert only.products == []


async def test_decided_on_fields_stay_strict(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.get(VERIFY_URL).respond(200, json=verify_body(amount=None))
    with pytest.raises(paysdk.ResponseValidationError, match=r"data\.amount"):
        await make_client().verify("order-1042")


# --- attempt budgets and the environment --------------------------------------------------------


def test_timeout_and_retries_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAYSDK_TIMEOUT", "7.5")
    monkeypatch.setenv("PAYSDK_MAX_RETRIES", "4")
    with paysdk.Client(secret_key=SECRET, base_url=BASE_URL) as client:
        assert (client.timeout.read, client.max_retries) == (7.5, 4)
    with paysdk.Client(secret_key=SECRET, base_url=BASE_URL, timeout=3, max_retries=0) as given:
        assert (given.timeout.read, given.max_retries) == (3, 0)  # arguments win
    monkeypatch.setenv("PAYSDK_MAX_RETRIES", "many")
    with pytest.raises(paysdk.ConfigurationError, match="PAYSDK_MAX_RETRIES"):
        paysdk.Client(secret_key=SECRET, base_url=BASE_URL)


@pytest.mark.parametrize(
    ("value", "seconds"), [(".5", 0.5), ("5.", 5.0), ("30.0", 30.0), (" 10\t", 10.0)]
)
def test_a_timeout_variable_spelt_as_people_write_seconds_is_read(
    monkeypatch: pytest.MonkeyPatch, value: str, seconds: float
) -> None:
    """A decimal point at either end, and ASCII blanks around, as deployments write them."""
    monkeypatch.setenv("PAYSDK_TIMEOUT", value)
    with paysdk.Client(secret_key=SECRET, base_url=BASE_URL) as client:
        assert client.timeout.read == seconds


NOT_A_COUNT = "is not a valid count (ASCII digits only)"
"""How a count variable (``PAYSDK_MAX_RETRIES``) that is no ASCII whole number is refused."""

NOT_SECONDS = "is not a valid number of seconds (ASCII digits, a decimal part allowed: 30, 2.5)"
"""How a seconds variable (``PAYSDK_TIMEOUT``) spelt otherwise is refused: ``float()`` also
reads ``1_0``, ``1e3``, ``nan`` and digits of other scripts."""


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("PAYSDK_TIMEOUT", "\u0661\u0660", NOT_SECONDS),  # Arabic-Indic 10
        ("PAYSDK_MAX_RETRIES", "\uff13", NOT_A_COUNT),  # fullwidth 3
        ("PAYSDK_TIMEOUT", "10\u00a0", NOT_SECONDS),  # a no-break space
        ("PAYSDK_MAX_RETRIES", "\u20033", NOT_A_COUNT),  # an em space
        ("PAYSDK_MAX_RETRIES", "3\x1c", NOT_A_COUNT),  # a separator int() strips
        ("PAYSDK_MAX_RETRIES", "1_0", NOT_A_COUNT),  # int() reads 10
        ("PAYSDK_MAX_RETRIES", "+5", NOT_A_COUNT),
        ("PAYSDK_TIMEOUT", "nan", NOT_SECONDS),
        ("PAYSDK_TIMEOUT", "1_0", NOT_SECONDS),
        ("PAYSDK_TIMEOUT", "1e3", NOT_SECONDS),
        ("PAYSDK_TIMEOUT", "0", "is out of range: seconds more than 0 and at most 86400"),
        ("PAYSDK_MAX_RETRIES", "11", "is out of range: a count from 0 to 10"),
    ],
)
def test_a_variable_not_an_ascii_number_in_range_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, problem: str
) -> None:
    """``int`` and ``float`` read digits of any script, and ``int`` ``1_0`` as 10 and ``+5``;
    and the caller passed no ``timeout``, so an error about one names the variable that held it."""
    monkeypatch.setenv(name, value)
    with pytest.raises(paysdk.ConfigurationError, match=f"^{name}=") as raised:
        paysdk.Client(secret_key=SECRET, base_url=BASE_URL)
    assert str(raised.value) == f"{name}={value!a} {problem}"


OTHER_VARIABLES = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
"""The environment but paysdk's variables, for a child that must read only those it is given."""


@pytest.mark.parametrize(
    ("value", "shown"),
    [("info\u00a0", "'info\\xa0'"), ("\u0130nfo", "'\\u0130nfo'"), ("DEBU\u0262", "'DEBU\\u0262'")],
)
def test_paysdk_log_of_a_look_alike_character_is_refused_showing_it(value: str, shown: str) -> None:
    """``PAYSDK_LOG`` is ``debug`` or ``info`` in ASCII, any case, ASCII blanks around: a
    no-break space or a letter of another script is no level, and the error shows it."""
    result = subprocess.run(
        [sys.executable, "-c", f"import paysdk; paysdk.Client(secret_key='{SECRET}', "
         f"base_url='{BASE_URL}')"],
        capture_output=True, text=True, env={**OTHER_VARIABLES, "PAYSDK_LOG": value}, check=False,
        timeout=60,
    )  # fmt: skip
    assert result.returncode == 1
    assert f"ConfigurationError: PAYSDK_LOG must be 'debug' or 'info', not {shown}" in (
        result.stderr
    )


@pytest.mark.parametrize(
    ("name", "value", "shown", "problem"),
    [
        ("PAYSDK_MAX_RETRIES", "9" * 5000, "'" + "9" * 64 + "'... (5,000 characters)", "out"),
        (
            "PAYSDK_MAX_RETRIES",
            "-" + "9" * 5000,
            "'-" + "9" * 63 + "'... (5,001 characters)",
            "out",
        ),
        ("PAYSDK_TIMEOUT", "9" * 5000, "'" + "9" * 64 + "'... (5,000 characters)", "out"),
        ("PAYSDK_TIMEOUT", "x" * 100_000, "'" + "x" * 64 + "'... (100,000 characters)", "not"),
        (
            "PAYSDK_TIMEOUT",
            "0." + "0" * 4997 + "1",
            "'0." + "0" * 62 + "'... (5,000 characters)",
            "0",
        ),
    ],
    ids=[
        "retries-5000-digits",
        "retries-negative",
        "timeout-5000-digits",
        "timeout-junk",
        "timeout-underflow",
    ],
)
def test_a_variable_of_thousands_of_characters_is_refused_in_a_short_message(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, shown: str, problem: str
) -> None:
    """A count too long for ``int`` to read is out of range, not something other than a count;
    the value is quoted cut, as a string from the service is."""
    monkeypatch.setenv(name, value)
    with pytest.raises(paysdk.ConfigurationError, match=f"^{name}=") as raised:
        paysdk.Client(secret_key=SECRET, base_url=BASE_URL)
    what = {"out": "is out of range", "not": "is not a valid number of seconds"}.get(
        problem, "is too small, it reads as 0 seconds"
    )
    assert str(raised.value).startswith(f"{name}={shown} {what}")
    assert len(str(raised.value)) < 200


def test_paysdk_log_turns_the_logger_on_without_code() -> None:
    code = (
        "import paysdk, respx\n"
        "with respx.mock:\n"
        f"    respx.get('{BASE_URL}/payments').respond(503)\n"
        f"    c = paysdk.Client(secret_key='{SECRET}', base_url='{BASE_URL}', max_retries=1)\n"
        "    c._sleep = lambda s: None\n"
        "    try: c.list_payments()\n"
        "    except paysdk.ServerError: pass\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PAYSDK_LOG": "debug", "PATH": ""},
        check=True,
        timeout=60,
    )
    assert "DEBUG paysdk: GET" in result.stderr
    assert "INFO paysdk:" in result.stderr and "retry 1 of 1" in result.stderr
    assert SECRET not in result.stderr
    assert logging.getLogger("paysdk").handlers == []  # this process was left alone


@pytest.mark.parametrize("root", ["stderr", "file", "none", "stderr-without-paysdk"])
def test_paysdk_log_beside_the_apps_own_root_handler_writes_each_line_once(
    root: str, tmp_path: Path
) -> None:
    """An application that calls ``logging.basicConfig()`` and sets ``PAYSDK_LOG``: each line
    on stderr once, in the application's format; a root handler to a file gets it as well, and
    one whose filter drops paysdk's lines leaves them to paysdk's handler."""
    log = tmp_path / "app.log"
    setup = {
        "stderr": "logging.basicConfig(level=logging.WARNING)",
        "file": f"logging.basicConfig(filename={str(log)!r})",
        "none": "",
        "stderr-without-paysdk": "logging.basicConfig()\nlogging.getLogger().handlers[0]"
        ".addFilter(lambda record: not record.name.startswith('paysdk'))",
    }[root]
    code = (
        f"import logging, paysdk, respx\n{setup}\n"
        "with respx.mock:\n"
        f"    respx.get('{BASE_URL}/payments').respond(200, json={{'data': []}})\n"
        f"    paysdk.Client(secret_key='{SECRET}', base_url='{BASE_URL}').list_payments()\n"
    )
    env = {"PAYSDK_LOG": "debug", "PATH": ""}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    sends = [line for line in result.stderr.splitlines() if f"GET {BASE_URL}/payments" in line]
    assert len(sends) == 1, result.stderr
    assert sends[0].startswith("DEBUG:paysdk:") == (root == "stderr")  # the application's format
    if root == "file":
        assert f"GET {BASE_URL}/payments" in log.read_text(encoding="utf-8")


def test_paysdk_log_on_a_closed_stderr_loses_the_line_not_the_payment() -> None:
    """A daemon that closed its stderr: the line cannot be written, nor can logging's report
    of that; the payment is verified all the same."""
    code = (
        "import sys, paysdk\n"
        "from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox\n"
        "with Sandbox() as sandbox:\n"
        "    client = paysdk.Client(secret_key=sandbox.secret_key, base_url=sandbox.base_url)\n"
        "    sys.stderr.close()\n"
        "    print(client.verify(COMPLETED_REFERENCE).reference)\n"
    )
    env = {"PAYSDK_LOG": "debug", "PATH": ""}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert (result.returncode, result.stdout) == (0, "order-1042\n"), result.stderr


def test_paysdk_log_lines_say_when_in_utc_whatever_the_local_time_zone() -> None:
    """As every time paysdk shows: a local time, in a zone with daylight saving, repeats an
    hour each autumn, and says nothing of its zone beside the service's UTC times."""
    code = (
        "import paysdk, respx\n"
        "with respx.mock:\n"
        f"    respx.get('{BASE_URL}/payments').respond(200, json={{'data': []}})\n"
        f"    paysdk.Client(secret_key='{SECRET}', base_url='{BASE_URL}').list_payments()\n"
    )
    env = {"PAYSDK_LOG": "debug", "PATH": "", "TZ": "Pacific/Kiritimati"}  # UTC+14
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    before = dt.datetime.now(dt.timezone.utc)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    found = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z DEBUG paysdk: GET", result.stderr)
    assert found, result.stderr
    logged = dt.datetime.fromisoformat(found[1]).replace(tzinfo=dt.timezone.utc)
    assert before - dt.timedelta(seconds=1) <= logged <= dt.datetime.now(dt.timezone.utc)


def test_the_aiohttp_backend_without_aiohttp_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['aiohttp'] = None\n"
        "import paysdk\n"
        "try:\n"
        f"    paysdk.AsyncClient(secret_key='{SECRET}', base_url='{BASE_URL}', "
        "http_backend='aiohttp')\n"
        "except paysdk.ConfigurationError as exc:\n"
        "    print(exc)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert "pip install 'python-paysdk[aiohttp]'" in result.stdout


@pytest.mark.parametrize("backend", ["curl", ""])
def test_an_unknown_backend_is_refused(backend: Any) -> None:
    with pytest.raises(paysdk.ConfigurationError, match="'httpx' or 'aiohttp'"):
        paysdk.AsyncClient(secret_key=SECRET, base_url=BASE_URL, http_backend=backend)
    with pytest.raises(paysdk.ConfigurationError, match="takes http_backend 'httpx'"):
        paysdk.Client(secret_key=SECRET, base_url=BASE_URL, http_backend="aiohttp")


async def test_a_body_of_exactly_the_cap_is_taken_and_one_byte_more_is_not(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    body = json.dumps(verify_body()).encode()
    padded = body[:-1] + b" " * (10_000 - len(body)) + b"}"
    respx_mock.get(VERIFY_URL).respond(200, content=padded)
    assert (await make_client(max_response_bytes=10_000).verify("order-1042")).succeeded
    with pytest.raises(paysdk.ResponseTooLargeError):
        await make_client(max_response_bytes=9_999).verify("order-1042")


async def test_a_key_echoed_across_the_excerpts_cut_leaves_no_part_of_itself(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    body = "<html>" + "y" * 180 + f" Bearer {SECRET}</html>"  # the key straddles 200 characters
    respx_mock.get(VERIFY_URL).respond(401, text=body)
    with pytest.raises(paysdk.AuthenticationError) as caught:
        await make_client().verify("order-1042")
    assert SECRET[:6] not in str(caught.value)


async def test_a_key_the_server_json_escaped_is_scrubbed_from_the_parsed_body(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    escaped = "\\u0073" + SECRET[1:]  # "s" written as \u0073: the text holds no literal key
    content = ('{"error": "bad key ' + escaped + '", "' + escaped + '": 1}').encode()
    respx_mock.get(VERIFY_URL).respond(401, content=content)
    with pytest.raises(paysdk.AuthenticationError) as caught:
        await make_client().verify("order-1042")
    assert SECRET not in repr(caught.value.body)
    assert caught.value.body["error"] == "bad key <secret key>"
    assert SECRET not in str(caught.value)


def test_an_aiohttp_failure_keeps_no_frames_holding_the_key() -> None:
    """A traceback printed with local variables (Sentry, rich) would show aiohttp's own copy of
    the request headers; paysdk drops those frames from what it chains."""
    import traceback

    async def fail() -> BaseException:
        async with paysdk.AsyncClient(
            secret_key=SECRET, base_url="http://127.0.0.1:9", http_backend="aiohttp", max_retries=0
        ) as client:
            try:
                await client.verify("order-1042")
            except paysdk.APIConnectionError as exc:
                return exc
        raise AssertionError("no error")

    error = asyncio.run(fail())
    printed = "".join(
        traceback.TracebackException.from_exception(error, capture_locals=True).format()
    )
    assert SECRET not in printed


def test_a_payment_built_with_an_int_too_long_to_write_shows_its_size(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A payment built in code (a merchant's test, say) may hold an int Python will not write
    as text; ``repr``, ``str`` and a log line of it say how long it is instead of raising."""
    payment = paysdk.VerifiedPayment(
        reference="order-7",
        amount=10**5000,
        fee=-(10**5000),
        currency="NGN",
        success=True,
        products=[paysdk.Product(name="Kettle", amount=10**6000)],
        tip=10**7000,  # type: ignore[call-arg]
    )
    with caplog.at_level(logging.INFO, logger="shop"):
        logging.getLogger("shop").info("paid %r", payment)
    for shown in (repr(payment), str(payment), caplog.records[0].getMessage()):
        assert "amount=<an integer of 16,610 bits>" in shown
        assert "fee=<an integer of 16,610 bits>" in shown
        assert "Product(name='Kettle', amount=<an integer of 19,932 bits>" in shown
        assert "tip=<an integer of 23,254 bits>" in shown
        assert len(shown) < 500
    longest = paysdk.VerifiedPayment(
        reference="order-8", amount=10**4300 - 1, currency="NGN", success=True
    )
    assert f"amount={10**4300 - 1}," in repr(longest)


def test_a_payment_holding_a_long_int_in_its_metadata_shows_its_size() -> None:
    """An int Python will not write as text inside metadata, an extra field's list or
    ``unparsed`` is shown by its size too, so ``repr`` and ``str`` never raise."""
    payment = paysdk.VerifiedPayment(
        reference="order-9",
        amount=100,
        currency="NGN",
        success=True,
        metadata={"cart": {"total": 10**5000}},
        parts=[1, (2, 10**6000)],  # type: ignore[call-arg]
    )
    for shown in (repr(payment), str(payment)):
        assert "metadata={'cart': {'total': <an integer of 16,610 bits>}}" in shown
        assert "parts=[1, (2, <an integer of 19,932 bits>)]" in shown
        assert len(shown) < 500
    assert payment.metadata == {"cart": {"total": 10**5000}}

"""The ``paysdk`` logger's structured fields (``LOG_FIELDS``), over loopback on every backend:
what each attempt and retry record carries, and that a JSON formatter shows them unconfigured
and never shows the key."""

from __future__ import annotations

import io
import json
import logging
import socket
from collections.abc import Iterator

import pytest
from pythonjsonlogger.json import JsonFormatter

import paysdk
from paysdk._core.attempts import LOG_FIELDS
from paysdk.sandbox import COMPLETED_REFERENCE, Fault, Sandbox
from tests.conftest import MakeClient

pytestmark = pytest.mark.anyio

KEY = "sk_sandbox_log_fields_Vq8Lw3Nz5Rt1"
"""Distinctive, so any line holding it is found."""


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    """The sandbox with the seed, under :data:`KEY`."""
    with Sandbox(secret_key=KEY) as running:
        yield running


def paysdk_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == "paysdk"]


def field(record: logging.LogRecord, name: str) -> object:
    """One ``extra`` field of a record (``getattr``: the record's type does not declare it)."""
    return getattr(record, name)


async def test_a_verify_that_succeeds_logs_one_attempt_with_its_fields(
    sandbox: Sandbox, connect: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="paysdk")
    await connect().verify(COMPLETED_REFERENCE)
    (record,) = paysdk_records(caplog)
    (request,) = sandbox.requests
    assert record.levelno == logging.DEBUG
    assert field(record, "paysdk_reference") == COMPLETED_REFERENCE
    assert field(record, "paysdk_attempt") == 1
    assert field(record, "paysdk_status_code") == 200
    elapsed = field(record, "paysdk_elapsed_ms")
    assert isinstance(elapsed, float) and elapsed >= 0
    assert request.request_id is not None
    assert field(record, "paysdk_request_id") == request.request_id
    assert field(record, "paysdk_method") == "GET"
    assert field(record, "paysdk_url") == f"{sandbox.base_url}{request.path}"
    assert field(record, "paysdk_outcome") == "200"
    assert field(record, "paysdk_retry_in_s") is None
    assert f"(request id {request.request_id})" in record.getMessage()


async def test_a_call_retried_twice_logs_three_attempts_and_two_retries(
    sandbox: Sandbox, connect: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="paysdk")
    sandbox.inject(Fault.server_error(), times=2)
    client = connect(max_retries=2)
    await client.verify(COMPLETED_REFERENCE)
    records = paysdk_records(caplog)
    sent = [request.request_id for request in sandbox.requests]
    assert [r.levelno for r in records] == [logging.DEBUG, logging.INFO] * 2 + [logging.DEBUG]
    attempts, retries = records[::2], records[1::2]
    assert [field(r, "paysdk_attempt") for r in attempts] == [1, 2, 3]
    assert [field(r, "paysdk_status_code") for r in attempts] == [500, 500, 200]
    assert [field(r, "paysdk_request_id") for r in attempts] == sent
    assert [field(r, "paysdk_retry_in_s") for r in attempts] == [None] * 3
    assert [field(r, "paysdk_attempt") for r in retries] == [1, 2]
    assert [field(r, "paysdk_outcome") for r in retries] == ["ServerError"] * 2
    assert [field(r, "paysdk_status_code") for r in retries] == [500, 500]
    assert [field(r, "paysdk_request_id") for r in retries] == sent[:2]
    assert [field(r, "paysdk_retry_in_s") for r in retries] == client.sleeps
    assert all(field(r, "paysdk_elapsed_ms") is None for r in retries)
    assert {field(r, "paysdk_reference") for r in records} == {COMPLETED_REFERENCE}


@pytest.fixture
def refusing_url() -> Iterator[str]:
    """A loopback URL whose port is taken but not listening: every connection is refused."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{taken.getsockname()[1]}"


async def test_a_connection_failure_logs_no_status_and_its_kind(
    make_loopback_client: MakeClient, refusing_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="paysdk")
    client = make_loopback_client(
        secret_key=KEY, base_url=refusing_url, allow_insecure_http=True, max_retries=0
    )
    with pytest.raises(paysdk.APIConnectionError):
        await client.verify(COMPLETED_REFERENCE)
    (record,) = paysdk_records(caplog)
    assert field(record, "paysdk_status_code") is None
    assert field(record, "paysdk_request_id") is None
    assert field(record, "paysdk_outcome") == "connect"
    assert field(record, "paysdk_attempt") == 1
    assert field(record, "paysdk_reference") == COMPLETED_REFERENCE


@pytest.fixture
def paysdk_log() -> Iterator[logging.StreamHandler[io.StringIO]]:
    """A handler on the ``paysdk`` logger at DEBUG, writing to a string; taken off afterwards."""
    logger = logging.getLogger("paysdk")
    handler = logging.StreamHandler(io.StringIO())
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


class PaysdkFieldsFormatter(logging.Formatter):
    """A record's ``paysdk_`` fields as one JSON object, with the standard library alone."""

    def format(self, record: logging.LogRecord) -> str:
        return json.dumps({k: v for k, v in vars(record).items() if k.startswith("paysdk_")})


@pytest.mark.parametrize(
    "formatter", [JsonFormatter(), PaysdkFieldsFormatter()], ids=["python-json-logger", "stdlib"]
)
async def test_a_json_formatter_shows_the_fields_unconfigured_and_never_the_key(
    sandbox: Sandbox,
    connect: MakeClient,
    paysdk_log: logging.StreamHandler[io.StringIO],
    formatter: logging.Formatter,
) -> None:
    paysdk_log.setFormatter(formatter)
    sandbox.inject(Fault.server_error(), times=1)
    await connect(max_retries=1).verify(COMPLETED_REFERENCE)
    with pytest.raises(paysdk.PaymentNotFoundError):
        await connect().verify("order-0000")
    lines = paysdk_log.stream.getvalue().splitlines()
    assert len(lines) == 4  # 500, the retry, 200, 404
    logged = [json.loads(line) for line in lines]
    for entry in logged:
        # every field on every line, null where it does not apply; stdlib json took each value
        assert set(LOG_FIELDS) <= set(entry)
    assert [entry["paysdk_reference"] for entry in logged] == [COMPLETED_REFERENCE] * 3 + [
        "order-0000"
    ]
    assert [entry["paysdk_attempt"] for entry in logged] == [1, 1, 2, 1]
    assert [entry["paysdk_status_code"] for entry in logged] == [500, 500, 200, 404]
    elapsed = [entry["paysdk_elapsed_ms"] for entry in logged]
    assert elapsed[1] is None
    assert all(isinstance(ms, float) and ms >= 0 for ms in elapsed[::2] + elapsed[3:])
    sent = [request.request_id for request in sandbox.requests]
    assert [entry["paysdk_request_id"] for entry in logged] == [sent[0], sent[0], *sent[1:]]
    assert all(KEY not in line for line in lines)


async def test_no_record_holds_the_key_in_its_arguments_which_a_formatter_may_write_out(
    sandbox: Sandbox,
    connect: MakeClient,
    paysdk_log: logging.StreamHandler[io.StringIO],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # python-json-logger writes what a format names, args too; Sentry and structlog keep them
    paysdk_log.setFormatter(JsonFormatter("{message}{args}", style="{"))
    sandbox.inject(Fault.server_error(), times=1)
    await connect(max_retries=1).verify(COMPLETED_REFERENCE)
    records = paysdk_records(caplog)
    assert [record.levelno for record in records] == [logging.DEBUG, logging.INFO, logging.DEBUG]
    lines = paysdk_log.stream.getvalue().splitlines()
    assert len(lines) == 3
    assert all(KEY not in line for line in lines)
    assert all(KEY not in json.dumps(record.args, default=repr) for record in records)

"""iter_payments' bounds through real clients: its caps, its deadlines, a failed stream closed.

The parser's own tests (test_stream.py) drive ``ListStream`` by hand; these go through every
client, over respx or a hostile loopback server, so a shell that drops a bound is caught.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import respx

import paysdk
from paysdk import _core
from tests.conftest import BASE_URL, CutAfter, MakeClient, listed_body, make_config
from tests.support.hostile import (
    Connection,
    HostileServer,
    Request,
    corrupt_gzip,
    head,
    trickle_head,
)

pytestmark = pytest.mark.anyio

SLACK = 1.5
"""Seconds a bounded call may overrun its budget on a busy machine."""

PADDED = json.dumps({"data": [listed_body(metadata={"pad": "x" * 10_000})]}).encode()
"""A list of one payment of about 10 KB."""


class InPieces(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body served 4 KiB at a time."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def __iter__(self) -> Iterator[bytes]:
        for start in range(0, len(self.body), 4096):
            yield self.body[start : start + 4096]

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.body), 4096):
            yield self.body[start : start + 4096]


# --- caps ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("whole", [True, False], ids=["one chunk", "4 KiB chunks"])
async def test_a_payment_over_the_item_cap_is_refused_however_it_arrives(
    whole: bool, make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.get(f"{BASE_URL}/payments")
    if whole:
        route.respond(200, content=PADDED)
    else:
        route.side_effect = lambda request: httpx.Response(200, stream=InPieces(PADDED))
    with pytest.raises(paysdk.ResponseValidationError, match="larger than the 2,000 bytes"):
        await make_client(max_response_bytes=2_000).drain()


async def test_the_item_cap_holds_over_a_real_socket_on_every_backend(
    hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    def padded_list(conn: Connection, request: Request) -> bool:
        headers = {"Content-Type": "application/json", "Content-Length": str(len(PADDED))}
        conn.send(head(200, headers) + PADDED)
        return False

    hostile.script(padded_list)
    client = make_loopback_client(
        base_url=hostile.base_url, max_response_bytes=2_000, max_retries=0
    )
    with pytest.raises(paysdk.ResponseValidationError, match="larger than the 2,000 bytes"):
        await client.drain()


async def test_the_default_item_cap_is_a_mebibyte(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    body = json.dumps({"data": [listed_body(metadata={"pad": "x" * 1_100_000})]}).encode()
    respx_mock.get(f"{BASE_URL}/payments").side_effect = lambda request: httpx.Response(
        200, stream=InPieces(body)
    )
    with pytest.raises(paysdk.ResponseValidationError, match="1,048,576 bytes"):
        await make_client().drain()


async def test_list_payments_takes_more_than_a_mebibyte_by_default(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    items = [listed_body(f"order-{n}") for n in range(4000)]
    respx_mock.get(f"{BASE_URL}/payments").respond(200, json={"data": items})
    assert len(await make_client().list_payments()) == 4000


def test_the_default_caps() -> None:
    config = make_config()
    assert _core.list_request(config).max_body == 64 * 1024 * 1024
    assert _core.list_request(config, stream=True).max_body == 1024 * 1024
    assert _core.verify_request(config, "order-1").max_body == 1024 * 1024


# --- time ----------------------------------------------------------------------------------------


async def test_a_trickled_head_is_cut_at_the_attempt_budget(
    hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    padding = {"X-Padding": "p" * 200}  # about 12 s of head at a byte every 0.05 s
    answer = head(200, {"Content-Type": "application/json", "Content-Length": "12", **padding})
    hostile.script(trickle_head(answer + b'{"data": []}', interval=0.05))
    client = make_loopback_client(base_url=hostile.base_url, timeout=0.5, max_retries=0)
    started = time.monotonic()
    with pytest.raises(paysdk.APITimeoutError):
        await client.drain()
    assert time.monotonic() - started < 0.5 + SLACK


async def test_a_stall_after_the_first_payment_ends_at_the_call_deadline(
    hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    def stall_after_first(conn: Connection, request: Request) -> bool:
        piece = b'{"data": [' + json.dumps(listed_body("order-0")).encode() + b","
        headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
        conn.send(head(200, headers) + b"%x\r\n%b\r\n" % (len(piece), piece))
        conn.hold()
        return False

    hostile.script(stall_after_first)
    client = make_loopback_client(base_url=hostile.base_url, timeout=5, deadline=1, max_retries=0)
    started = time.monotonic()
    with pytest.raises(paysdk.APITimeoutError, match="after 1 payment"):
        await client.drain()
    assert time.monotonic() - started < 1 + SLACK


async def test_a_corrupt_gzip_stream_is_a_validation_error_and_not_retried(
    hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    hostile.script(corrupt_gzip(200))
    with pytest.raises(paysdk.ResponseValidationError):
        await make_loopback_client(base_url=hostile.base_url, max_retries=2).drain()
    assert hostile.attempts == 1


async def test_a_stream_whose_first_chunk_inflates_to_nothing_is_read_to_its_end(
    hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    # The first chunk is only the gzip header: it inflates to no bytes at all, which is not the
    # end of the body. Every backend reads on.
    payments = [listed_body(f"order-{n}") for n in range(50)]
    packed = gzip.compress(json.dumps({"data": payments}).encode())

    def behave(conn: Connection, request: Request) -> bool:
        conn.send(head(200, {"Content-Encoding": "gzip", "Transfer-Encoding": "chunked"}))
        for piece in (packed[:10], packed[10:]):
            conn.send(b"%x\r\n%b\r\n" % (len(piece), piece))
            conn.pause(0.2)
        conn.send(b"0\r\n\r\n")
        return True

    hostile.script(behave)
    client = make_loopback_client(base_url=hostile.base_url, max_retries=0)
    assert [p.reference for p in await client.drain()] == [p["reference"] for p in payments]


# --- streams are closed --------------------------------------------------------------------------


async def test_a_stream_cut_before_its_first_payment_is_closed_before_the_retry(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    cut = CutAfter(b'{"data": [{"id": ')
    good = json.dumps({"data": [listed_body()]}).encode()
    respx_mock.get(f"{BASE_URL}/payments").side_effect = [
        httpx.Response(200, stream=cut),
        httpx.Response(200, content=good),
    ]
    assert len(await make_client().drain()) == 1
    assert cut.closed == 1

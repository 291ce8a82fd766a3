"""The benchmarks' server answers as the service would, and streams a long list in flat memory."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import httpx
import pytest

import paysdk
from benchmarks._server import BLOCK, BenchServer, ListBody, verify_body
from paysdk._service.api import answer_api
from paysdk.sandbox import COMPLETED_REFERENCE, default_payments

KEY = "sk_bench_test_0123"


@pytest.fixture(scope="module")
def server() -> Iterator[BenchServer]:
    with BenchServer(KEY) as running:
        yield running


@pytest.mark.parametrize("count", [0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK + 345])
def test_a_list_body_is_as_long_as_announced_with_unique_references_and_ids(count: int) -> None:
    body = ListBody(count)
    rendered = body.render()
    assert len(rendered) == body.length
    payments = json.loads(rendered)["data"]
    assert len(payments) == count
    assert len({p["reference"] for p in payments}) == count
    assert len({p["id"] for p in payments}) == count
    if count:
        assert payments[-1]["reference"] == f"order-{count - 1:09d}"


def test_a_list_longer_than_the_largest_is_refused() -> None:
    with pytest.raises(ValueError, match="a list of 0 to"):
        ListBody(10**9)


def test_paysdk_lists_and_verifies_against_it(server: BenchServer) -> None:
    count = 2 * BLOCK + 345
    with paysdk.Client(secret_key=KEY, base_url=server.base_url(count)) as client:
        payments = client.list_payments()
        assert len({p.reference for p in payments}) == count
        assert {p.status for p in payments} == {"COMPLETED", "FAILED"}  # the seed's mix
        assert client.verify("order 1/2 ü").reference == "order 1/2 ü"  # sent percent-encoded
        assert client.verify("order-1042").amount == 2_500_000


def test_a_wrong_key_is_answered_401(server: BenchServer) -> None:
    with (
        paysdk.Client(secret_key="sk_wrong", base_url=server.base_url()) as client,
        pytest.raises(paysdk.AuthenticationError),
    ):
        client.verify("order-1042")


def test_verify_body_echoes_any_reference_as_json() -> None:
    body = json.loads(verify_body('a "quoted" \\ reference'))
    assert body["data"]["reference"] == 'a "quoted" \\ reference'
    assert body["status"] is True


def test_verify_body_is_the_sandboxs_answer_byte_for_byte() -> None:
    """Both wrap the payment in the one envelope of ``paysdk._service.api``."""
    (record,) = [r for r in default_payments() if r.reference == COMPLETED_REFERENCE]
    reply = answer_api(
        "GET",
        f"/payment/{COMPLETED_REFERENCE}",
        f"Bearer {KEY}",
        secret_key=KEY,
        find=lambda reference: record,
        listing=lambda: [record],
    )
    assert reply.status == 200
    assert reply.body == verify_body(COMPLETED_REFERENCE)


def test_a_long_list_is_streamed_without_the_server_holding_it(server: BenchServer) -> None:
    count = 200_000
    body_size = ListBody(count).length  # about 96 MB
    before = server.stats().peak_rss_bytes
    headers = {"Authorization": f"Bearer {KEY}"}
    received = 0
    with httpx.Client(base_url=server.base_url(count), headers=headers) as client:
        with client.stream("GET", "/payments") as response:
            assert response.headers["content-length"] == str(body_size)
            for chunk in response.iter_bytes():
                received += len(chunk)
        assert received == body_size
        # the same kept-alive connection answers the next request
        assert client.get("/payment/order-7").json()["data"]["reference"] == "order-7"
    assert server.stats().peak_rss_bytes - before < body_size / 4


def test_the_server_stops_with_its_with_block() -> None:
    with BenchServer(KEY) as running:
        url = running.url
        assert httpx.get(f"{url}/_stats").status_code == 200
    host, port = url.removeprefix("http://").split(":")
    with pytest.raises(ConnectionRefusedError), socket.create_connection((host, int(port))):
        pass

"""The benchmarks' delay proxy adds latency, not a bandwidth limit, keeps every byte in order, and
counts the connections it accepted; TLS passes through it end to end."""

from __future__ import annotations

import os
import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import paysdk
from benchmarks._delay import DelayProxy
from benchmarks._server import BenchServer, certificates

DELAY = 0.05


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(65536):
            self.request.sendall(data)


@pytest.fixture(scope="module")
def proxy() -> Iterator[DelayProxy]:
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo) as echo:
        echo.daemon_threads = True
        threading.Thread(target=echo.serve_forever, daemon=True).start()
        port = echo.socket.getsockname()[1]
        try:
            with DelayProxy(f"127.0.0.1:{port}", DELAY) as running:
                yield running
        finally:
            echo.shutdown()


def _connect(proxy: DelayProxy) -> socket.socket:
    host, port = proxy.address.split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def _receive(connection: socket.socket, size: int) -> bytes:
    received = bytearray()
    while len(received) < size:
        chunk = connection.recv(size - len(received))
        assert chunk, f"the proxy closed after {len(received)} of {size} bytes"
        received += chunk
    return bytes(received)


def test_a_round_trip_takes_twice_the_delay_and_opening_one_more(proxy: DelayProxy) -> None:
    assert proxy.rtt == 2 * DELAY
    start = time.perf_counter()  # before connecting: the proxy starts its delayed open on accept
    with _connect(proxy) as connection:
        connection.sendall(b"hello")
        assert _receive(connection, 5) == b"hello"
        first = time.perf_counter() - start  # TCP's round trip, then the request's
        start = time.perf_counter()
        connection.sendall(b"again")
        assert _receive(connection, 5) == b"again"
        second = time.perf_counter() - start
    assert first >= 2 * proxy.rtt
    assert second >= proxy.rtt


def test_bytes_arrive_intact_and_in_order(proxy: DelayProxy) -> None:
    payload = os.urandom(3 * 1024 * 1024)
    with _connect(proxy) as connection:
        sender = threading.Thread(target=lambda: _send_in_pieces(connection, payload))
        sender.start()
        echoed = _receive(connection, len(payload))
        sender.join()
    assert echoed == payload


def _send_in_pieces(connection: socket.socket, payload: bytes) -> None:
    sizes = [1, 7, 1500, 65536, 100_000, 3]
    offset = 0
    for n in range(len(payload)):
        if offset >= len(payload):
            return
        piece = payload[offset : offset + sizes[n % len(sizes)]]
        connection.sendall(piece)
        offset += len(piece)


def test_chunks_in_flight_together_are_not_delayed_one_after_another(proxy: DelayProxy) -> None:
    pieces = 10
    with _connect(proxy) as connection:
        connection.sendall(b"x")
        _receive(connection, 1)  # the connection is open: no TCP round trip left to wait
        start = time.perf_counter()
        for n in range(pieces):
            connection.sendall(b"%d" % n)
            time.sleep(0.005)  # each its own chunk
        assert _receive(connection, pieces) == b"0123456789"
        elapsed = time.perf_counter() - start
    assert elapsed >= proxy.rtt
    assert elapsed < pieces * proxy.rtt / 2  # one after another would take pieces * rtt


def test_it_counts_the_connections_it_accepted(proxy: DelayProxy) -> None:
    before = proxy.stats().connections
    connections = [_connect(proxy) for _ in range(3)]
    try:
        for connection in connections:
            connection.sendall(b"!")
        for connection in connections:
            assert _receive(connection, 1) == b"!"
    finally:
        for connection in connections:
            connection.close()
    assert proxy.stats().connections - before == 3


def test_tls_passes_through_to_the_bench_server(tmp_path: Path) -> None:
    files = certificates(tmp_path)
    key = "sk_bench_test_tls"
    with (
        BenchServer(key, tls=files) as server,
        DelayProxy(server.url.removeprefix("https://"), DELAY) as through,
    ):
        assert server.url.startswith("https://127.0.0.1:")
        base_url = f"https://{through.address}/n/3"
        with paysdk.Client(secret_key=key, base_url=base_url, verify=str(files.ca)) as client:
            assert client.verify("order-7").reference == "order-7"
            assert len(client.list_payments()) == 3
        assert through.stats().connections == 1  # one TLS handshake, kept alive
        assert server.stats().cpu_seconds > 0  # its stats answer over HTTPS too


def test_the_proxy_stops_with_its_with_block(proxy: DelayProxy) -> None:
    with DelayProxy(proxy.address, DELAY) as running:
        address = running.address
    host, port = address.split(":")
    with pytest.raises(ConnectionRefusedError), socket.create_connection((host, int(port))):
        pass

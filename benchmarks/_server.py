"""A keep-alive HTTP/1.1 server of canned answers, cheap enough never to be what is measured.

The bundled sandbox (stdlib ``http.server``, a thread per connection) is right for correctness
and far too slow to time a client against. This one is an asyncio ``Protocol`` that answers
from pre-rendered bytes, run in a child process by :class:`BenchServer`:

  GET [/n/<count>]/payments      list's 200 body of <count> payments (default 0), rendered
                                 block by block while it is sent, so a million payments
                                 (~460 MB) never sit in the server's memory
  GET [/n/<count>]/payment/<ref> verify's 200 body for <ref>, echoed (paysdk checks it)
  GET /_stats                    the server's CPU seconds and peak RSS, to show it idled

With ``--cert`` and ``--key-file`` it serves HTTPS (see :func:`certificates` for a throwaway CA).
``/n/<count>`` is a path prefix of base_url, which paysdk keeps: the list endpoint takes no query
string, so the count travels in the path. Every route but ``/_stats`` wants
``Authorization: Bearer <key>`` and answers 401 without it. Payments cycle through the
sandbox's seed, with unique references ``order-000000042`` (the payment's index, 9 digits) and ids.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import resource
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final, cast
from urllib.parse import unquote

from typing_extensions import Self

from paysdk._service.api import verify_envelope
from paysdk.sandbox import COMPLETED_REFERENCE, default_payments

from ._measure import ROOT, peak_rss

BLOCK: Final = 1000
"""Payments rendered per write: one template, its block number filled in by ``bytes.replace``."""
MAX_COUNT: Final = 10**9
_BLOCK_NUMBER: Final = b"{{B}}"
_REFERENCE: Final = "{{REFERENCE}}"


def _verify_template() -> tuple[bytes, bytes]:
    """Verify's 200 body split around the JSON string of the reference."""
    (record,) = [r for r in default_payments() if r.reference == COMPLETED_REFERENCE]
    data = {**record.verify_shape(), "reference": _REFERENCE}
    body = json.dumps(verify_envelope(data))
    before, after = body.encode().split(json.dumps(_REFERENCE).encode())
    return before, after


def _block_template() -> tuple[bytes, list[int]]:
    """``BLOCK`` list elements, comma-joined, with ``{{B}}`` where the block number goes.

    Also where each element ends, so a last, partial block is a prefix of the template.
    """
    seed = [record.list_shape() for record in default_payments()]
    items, ends, length = [], [], 0
    for i in range(BLOCK):
        number = f"{_BLOCK_NUMBER.decode()}{i:03d}"  # block 42, item 7: "000042" "007"
        item = {
            **seed[i % len(seed)],
            "reference": f"order-{number}",
            "id": f"00000000-0000-4000-8000-{number}000",
        }
        items.append(json.dumps(item).encode())
        length += len(items[-1]) + (1 if i else 0)
        ends.append(length)
    return b",".join(items), ends


_VERIFY_BEFORE, _VERIFY_AFTER = _verify_template()
_BLOCK_TEMPLATE, _ITEM_ENDS = _block_template()
_LIST_OPEN: Final = b'{"data": ['
_LIST_CLOSE: Final = b"]}"


@functools.lru_cache(maxsize=2)
def _rendered_length(template: bytes) -> int:
    """A block's length once its number (6 digits) has replaced each placeholder."""
    return len(template) + template.count(_BLOCK_NUMBER) * (6 - len(_BLOCK_NUMBER))


def verify_body(reference: str) -> bytes:
    """Verify's 200 body for ``reference``: the sandbox's card payment under that reference."""
    return _VERIFY_BEFORE + json.dumps(reference).encode() + _VERIFY_AFTER


@dataclass(frozen=True)
class ListBody:
    """List's 200 body of ``count`` payments: its length up front, its bytes block by block."""

    count: int

    def __post_init__(self) -> None:
        if not 0 <= self.count < MAX_COUNT:
            raise ValueError(f"a list of 0 to {MAX_COUNT - 1} payments, not {self.count}")

    @property
    def length(self) -> int:
        """The body's size in bytes, known before any of it is rendered (for Content-Length)."""
        total = len(_LIST_OPEN) + len(_LIST_CLOSE)
        for block, template in enumerate(self._templates()):
            total += (1 if block else 0) + _rendered_length(template)
        return total

    def chunks(self) -> Iterator[bytes]:
        """The body in pieces of at most ``BLOCK`` payments, each rendered when asked for."""
        yield _LIST_OPEN
        for block, template in enumerate(self._templates()):
            yield (b"," if block else b"") + template.replace(_BLOCK_NUMBER, b"%06d" % block)
        yield _LIST_CLOSE

    def render(self) -> bytes:
        """The whole body at once: for parsing in-process and for tests, not for serving."""
        return b"".join(self.chunks())

    def _templates(self) -> Iterator[bytes]:
        full, rest = divmod(self.count, BLOCK)
        for _ in range(full):
            yield _BLOCK_TEMPLATE
        if rest:
            yield _BLOCK_TEMPLATE[: _ITEM_ENDS[rest - 1]]


# --- serving ----------------------------------------------------------------------------------


def _answer(status: str, body: bytes, *, keep_alive: bool = True) -> bytes:
    connection = b"" if keep_alive else b"Connection: close\r\n"
    return b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s" % (
        status.encode(),
        len(body),
        connection,
        body,
    )


_UNAUTHORIZED: Final = _answer("401 Unauthorized", b'{"error": "Unauthorized"}')
_NOT_FOUND: Final = _answer("404 Not Found", b'{"error": "Not Found"}')
_BAD_REQUEST: Final = _answer("400 Bad Request", b'{"error": "Bad Request"}', keep_alive=False)
_MAX_HEAD: Final = 64 * 1024


class _Connection(asyncio.Protocol):
    """One client connection: requests answered in order, list bodies streamed with backpressure."""

    def __init__(self, authorization: bytes) -> None:
        self._authorization = authorization
        self._buffer = bytearray()
        self._transport: asyncio.Transport | None = None
        self._writable = asyncio.Event()
        self._writable.set()
        self._streaming: asyncio.Task[None] | None = None
        self._closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self._writable.set()  # a stream waiting to write wakes up and sees the connection gone

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        self._serve_buffered()

    def _serve_buffered(self) -> None:
        while self._streaming is None and not self._closed:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > _MAX_HEAD:
                    self._write(_BAD_REQUEST, close=True)
                return
            head = bytes(self._buffer[:end])
            del self._buffer[: end + 4]
            self._respond(head)

    def _write(self, data: bytes, *, close: bool = False) -> None:
        assert self._transport is not None
        self._transport.write(data)
        if close:
            self._transport.close()
            self._closed = True

    def _respond(self, head: bytes) -> None:
        request_line, _, header_block = head.partition(b"\r\n")
        parts = request_line.split(b" ")
        if len(parts) != 3:
            self._write(_BAD_REQUEST, close=True)
            return
        method, target, _version = parts
        headers: dict[bytes, bytes] = {}
        for line in header_block.split(b"\r\n"):
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        close = headers.get(b"connection", b"").lower() == b"close"
        path = target.partition(b"?")[0]
        count = 0
        if path.startswith(b"/n/"):
            number, _, rest = path[3:].partition(b"/")
            if not number.isdigit() or int(number) >= MAX_COUNT:
                self._write(_NOT_FOUND, close=close)
                return
            count, path = int(number), b"/" + rest
        if path == b"/_stats":
            self._write(_answer("200 OK", json.dumps(_stats()).encode()), close=close)
        elif headers.get(b"authorization") != self._authorization:
            self._write(_UNAUTHORIZED, close=close)
        elif method != b"GET":
            self._write(_NOT_FOUND, close=close)
        elif path == b"/payments":
            self._streaming = asyncio.get_running_loop().create_task(
                self._stream(ListBody(count), close)
            )
        elif path.startswith(b"/payment/") and len(path) > len(b"/payment/"):
            reference = unquote(path[len(b"/payment/") :].decode("latin-1"))
            self._write(_answer("200 OK", verify_body(reference)), close=close)
        else:
            self._write(_NOT_FOUND, close=close)

    async def _stream(self, body: ListBody, close: bool) -> None:
        connection = b"Connection: close\r\n" if close else b""
        self._write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n"
            % (body.length, connection)
        )
        for chunk in body.chunks():
            await self._writable.wait()
            if self._closed:
                return
            self._write(chunk)
        self._streaming = None
        if close:
            self._write(b"", close=True)
        else:
            self._serve_buffered()


def _stats() -> dict[str, Any]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu_seconds": usage.ru_utime + usage.ru_stime, "peak_rss_bytes": peak_rss(usage)}


async def serve(key: str, port: int, tls: ssl.SSLContext | None = None) -> None:
    """Serve on 127.0.0.1 until standard input closes (the parent's lifeline), printing the URL;
    HTTPS with the server-side context ``tls``."""
    loop = asyncio.get_running_loop()
    authorization = f"Bearer {key}".encode()
    server = await loop.create_server(
        lambda: _Connection(authorization), "127.0.0.1", port, ssl=tls
    )
    host, bound = server.sockets[0].getsockname()[:2]
    scheme = "http" if tls is None else "https"
    print(f"{scheme}://{host}:{bound}", flush=True)
    parent_gone = asyncio.Event()

    def watch_parent() -> None:
        sys.stdin.buffer.read()
        loop.call_soon_threadsafe(parent_gone.set)

    threading.Thread(target=watch_parent, daemon=True).start()
    async with server:
        await parent_gone.wait()


# --- TLS -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Certificates:
    """PEM files of a throwaway CA and of a certificate it issued for 127.0.0.1."""

    ca: Path
    """What clients trust."""
    cert: Path
    """The server's certificate chain."""
    key: Path
    """The server's private key."""


def certificates(directory: Path) -> Certificates:
    """A new CA (trustme's) and a server certificate for 127.0.0.1, written to ``directory``."""
    import trustme

    ca = trustme.CA()
    issued = ca.issue_cert("127.0.0.1")
    files = Certificates(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    ca.cert_pem.write_to_path(str(files.ca))
    issued.private_key_pem.write_to_path(str(files.key))
    with files.cert.open("wb") as chain:
        for blob in issued.cert_chain_pems:
            chain.write(blob.bytes())
    return files


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server-side TLS context presenting ``cert`` (a PEM chain) with its ``key``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


# --- the parent's handle ----------------------------------------------------------------------


@dataclass(frozen=True)
class ServerStats:
    cpu_seconds: float
    peak_rss_bytes: int


class BenchServer:
    """The server in a child process on a free port of 127.0.0.1, for a ``with`` block; over
    HTTPS with ``tls``'s certificate."""

    def __init__(self, key: str, tls: Certificates | None = None) -> None:
        self._key = key
        self.tls = tls
        self._process: subprocess.Popen[bytes] | None = None
        self.url = ""

    def __enter__(self) -> Self:
        command = [sys.executable, "-m", "benchmarks._server", "--key", self._key]
        if self.tls is not None:
            command += ["--cert", str(self.tls.cert), "--key-file", str(self.tls.key)]
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT
        )
        self._process = process
        assert process.stdout is not None
        line = process.stdout.readline().decode().strip()
        if not line.startswith(("http://", "https://")):
            self.__exit__(None, None, None)
            raise RuntimeError(f"the benchmark server did not start (it said {line!r})")
        self.url = line
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()

    def pin(self, cores: set[int] | None) -> None:
        """Run the server on ``cores`` only; ``None``: on any core this process may use."""
        assert self._process is not None
        os.sched_setaffinity(self._process.pid, os.sched_getaffinity(0) if cores is None else cores)

    def base_url(self, count: int = 0) -> str:
        """The base_url to give a client: its list has ``count`` payments."""
        return f"{self.url}/n/{count}"

    def stats(self) -> ServerStats:
        import urllib.request

        context = None if self.tls is None else ssl.create_default_context(cafile=self.tls.ca)
        url = f"{self.url}/_stats"
        with urllib.request.urlopen(url, timeout=10, context=context) as answer:  # noqa: S310
            stats = json.loads(answer.read())
        return ServerStats(stats["cpu_seconds"], stats["peak_rss_bytes"])


def main() -> None:
    parser = argparse.ArgumentParser(description="the benchmarks' canned-answer server")
    parser.add_argument("--key", required=True, help="the secret key clients must send")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--cert", type=Path, help="serve HTTPS with this PEM certificate chain")
    parser.add_argument("--key-file", type=Path, help="the private key of --cert")
    args = parser.parse_args()
    if (args.cert is None) != (args.key_file is None):
        parser.error("--cert and --key-file go together")
    tls = None if args.cert is None else server_context(args.cert, args.key_file)
    asyncio.run(serve(args.key, args.port, tls))


if __name__ == "__main__":
    main()

"""A hostile HTTP/1.1 server on 127.0.0.1: each request gets the misbehaviour a test scripts.

::

    def test_x(hostile: HostileServer) -> None:      # the fixture, from tests/conftest.py
        hostile.script(respond(503, headers={"Retry-After": "1"}), respond_json(200, {}))
        ...                                           # 1st request: 503; 2nd and later: 200
        assert hostile.attempts == 2
        assert hostile.requests[0].headers["authorization"] == "Bearer ..."

Each function below builds a :data:`Behaviour`. Bodies are generated while they are sent (a
200 MB body is one 64 KiB block sent again and again), so the server's memory stays flat.
"""

from __future__ import annotations

import functools
import http
import json
import zlib
from collections.abc import Iterable, Iterator, Mapping

from tests.support.hostile_server import Behaviour, Connection, Gone, HostileServer, Request

__all__ = [
    "CORRUPT_GZIP",
    "Behaviour",
    "Connection",
    "Gone",
    "HostileServer",
    "Request",
    "corrupt_gzip",
    "cut_body",
    "echo_authorization",
    "endless_chunked",
    "gzip_bomb",
    "gzip_padded",
    "head",
    "large_body",
    "padded",
    "raw",
    "reset",
    "respond",
    "respond_json",
    "stall",
    "trickle_body",
    "trickle_head",
]

_BLOCK = 64 * 1024

CORRUPT_GZIP = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + b"this is not deflate data" * 4
"""A gzip header followed by bytes that do not inflate."""


def head(status: int, headers: Mapping[str, str] | None = None, *, reason: str = "") -> bytes:
    """A status line and headers, through the blank line; ``reason`` defaults to the standard."""
    if not reason:
        try:
            reason = http.HTTPStatus(status).phrase
        except ValueError:
            reason = "Unknown"
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _send_body(conn: Connection, pieces: Iterable[bytes], *, chunked: bool) -> None:
    for piece in pieces:
        if piece:
            conn.send(b"%x\r\n%b\r\n" % (len(piece), piece) if chunked else piece)
    if chunked:
        conn.send(b"0\r\n\r\n")


def _framing(length: int, chunked: bool) -> dict[str, str]:
    return {"Transfer-Encoding": "chunked"} if chunked else {"Content-Length": str(length)}


# --- fixed answers (8): script(respond(503), respond(503), respond_json(200, ...)) ------------


def respond(
    status: int = 200,
    body: bytes = b"",
    headers: Mapping[str, str] | None = None,
    *,
    keep_alive: bool = True,
) -> Behaviour:
    """A complete, well-formed answer; the connection stays open for the next request."""
    framing = {"Content-Length": str(len(body))}
    if not keep_alive:
        framing["Connection"] = "close"

    def behave(conn: Connection, request: Request) -> bool:
        conn.send(head(status, {**framing, **(headers or {})}) + body)
        return keep_alive

    return behave


def respond_json(
    status: int, document: object, headers: Mapping[str, str] | None = None
) -> Behaviour:
    """:func:`respond` with ``document`` as JSON."""
    content_type = {"Content-Type": "application/json"}
    return respond(status, json.dumps(document).encode(), {**content_type, **(headers or {})})


def echo_authorization(status: int = 401) -> Behaviour:
    """(6) An error body that quotes the request's Authorization header, as careless proxies do."""

    def behave(conn: Connection, request: Request) -> bool:
        said = request.headers.get("authorization", "")
        document = {"error": "bad header", "message": f"Authorization: {said}"}
        return respond_json(status, document)(conn, request)

    return behave


# --- broken connections (7) and broken heads --------------------------------------------------


def reset() -> Behaviour:
    """(7) Read the request, then reset the connection (SO_LINGER 0): not a byte of answer."""

    def behave(conn: Connection, request: Request) -> bool:
        conn.reset()
        return False

    return behave


def cut_body(
    body: bytes,
    *,
    sent: int | None = None,
    status: int = 200,
    chunked: bool = False,
    reset: bool = False,
) -> Behaviour:
    """(7) Announce ``body`` whole (its Content-Length, or chunked), send ``sent`` bytes of it
    (half by default), then close (or reset): a truncated answer."""
    cut = len(body) // 2 if sent is None else sent
    headers = {"Content-Type": "application/json", **_framing(len(body), chunked)}

    def behave(conn: Connection, request: Request) -> bool:
        conn.send(head(status, headers))
        if chunked:
            conn.send(b"%x\r\n%b" % (len(body), body[:cut]))  # the chunk never ends
        else:
            conn.send(body[:cut])
        if reset:
            conn.reset()
        return False

    return behave


def raw(data: bytes) -> Behaviour:
    """Send ``data`` as is, then close: bad status lines (``b"HTTP/1.1 abc\\r\\n\\r\\n"``), junk."""

    def behave(conn: Connection, request: Request) -> bool:
        conn.send(data)
        return False

    return behave


# --- slow servers (1), (9), (10) ----------------------------------------------------------------


def stall(seconds: float | None = None) -> Behaviour:
    """(9) Read the request and send nothing: until the client hangs up (or ``seconds``), then
    close."""

    def behave(conn: Connection, request: Request) -> bool:
        if seconds is None:
            conn.hold()
        else:
            conn.pause(seconds)
        return False

    return behave


def trickle_head(data: bytes | None = None, *, interval: float) -> Behaviour:
    """(10) Send ``data`` (default: a whole 200 answer with a ``{}`` body) one byte every
    ``interval`` seconds, status line and headers included."""
    answer = data if data is not None else head(200, {"Content-Length": "2"}) + b"{}"

    def behave(conn: Connection, request: Request) -> bool:
        for index in range(len(answer)):
            conn.send(answer[index : index + 1])
            conn.pause(interval)
        return False

    return behave


def trickle_body(
    *,
    interval: float,
    status: int = 200,
    byte: bytes = b" ",
    chunked: bool = False,
    declared: int = 1 << 30,
) -> Behaviour:
    """(1) Send the headers at once, then one byte of body every ``interval`` seconds, for ever
    (until the client hangs up or the server stops). ``declared``: the Content-Length announced;
    ``chunked``: each byte is a one-byte chunk instead."""
    headers = {"Content-Type": "application/json", **_framing(declared, chunked)}
    piece = b"1\r\n%b\r\n" % byte if chunked else byte

    def behave(conn: Connection, request: Request) -> bool:
        conn.send(head(status, headers))
        while True:
            conn.send(piece)
            conn.pause(interval)

    return behave


# --- big bodies (2), (3), (4), (5) -----------------------------------------------------------


def padded(document: bytes, size: int) -> Iterator[bytes]:
    """``document`` grown to ``size`` bytes with whitespace after its first byte, in 64 KiB pieces:
    still the same JSON (``b'{"data": []}'`` stays a list of nothing), however big."""
    if size < len(document):
        raise ValueError(f"size {size} is smaller than the document ({len(document)} bytes)")
    yield document[:1]
    padding, block = size - len(document), b" " * _BLOCK
    for _ in range(padding // _BLOCK):
        yield block
    yield block[: padding % _BLOCK]
    yield document[1:]


def large_body(
    size: int, *, document: bytes = b"{}", chunked: bool = False, status: int = 200
) -> Behaviour:
    """(3) A ``size``-byte body (``document`` padded with whitespace), with a Content-Length or
    chunked, generated as it is sent."""
    headers = {"Content-Type": "application/json", **_framing(size, chunked)}

    def behave(conn: Connection, request: Request) -> bool:
        conn.send(head(status, headers))
        _send_body(conn, padded(document, size), chunked=chunked)
        return False

    return behave


def endless_chunked(*, status: int = 200, prefix: bytes = b'{"data": [') -> Behaviour:
    """(2) A chunked body that never ends: ``prefix``, then 64 KiB chunks of spaces."""

    def behave(conn: Connection, request: Request) -> bool:
        conn.send(head(status, {"Content-Type": "application/json", **_framing(0, True)}))
        frame = b"%x\r\n%b\r\n" % (_BLOCK, b" " * _BLOCK)
        conn.send(b"%x\r\n%b\r\n" % (len(prefix), prefix) if prefix else b"")
        while True:
            conn.send(frame)

    return behave


_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
"""A gzip member's header: deflate, no name, no time, best compression, unknown system."""
_GZIP_PIECE = 1 << 20


@functools.lru_cache(maxsize=8)
def gzip_padded(document: bytes, size: int) -> bytes:
    """``padded(document, size)`` gzipped: 1 GiB gives about 1 MB, in about half a second.

    The padding's deflate stream is one MiB of spaces compressed once and repeated: each piece
    ends in a full flush, which makes the compressor forget what it saw, so every piece of the
    same spaces compresses to the same bytes. Only the checksum reads the whole size.
    """
    if size < len(document):
        raise ValueError(f"size {size} is smaller than the document ({len(document)} bytes)")
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)  # wbits -15: raw deflate, no wrapper
    spaces = b" " * _GZIP_PIECE
    count, rest = divmod(size - len(document), _GZIP_PIECE)
    opening, closing = document[:1], spaces[:rest] + document[1:]
    stream = [
        compressor.compress(opening) + compressor.flush(zlib.Z_FULL_FLUSH),
        (compressor.compress(spaces) + compressor.flush(zlib.Z_FULL_FLUSH)) * count,
        compressor.compress(closing) + compressor.flush(),
    ]
    checksum = zlib.crc32(opening)
    for _ in range(count):
        checksum = zlib.crc32(spaces, checksum)
    checksum = zlib.crc32(closing, checksum)
    trailer = checksum.to_bytes(4, "little") + (size & 0xFFFFFFFF).to_bytes(4, "little")
    return b"".join([_GZIP_HEADER, *stream, trailer])


def gzip_bomb(
    inflated_size: int, *, document: bytes = b"{}", chunked: bool = False, status: int = 200
) -> Behaviour:
    """(4) A small ``Content-Encoding: gzip`` body that inflates to ``inflated_size`` bytes,
    compressed when first served (seconds of CPU for a large one), not when a test is collected."""

    def behave(conn: Connection, request: Request) -> bool:
        body = gzip_padded(document, inflated_size)
        headers = {
            "Content-Type": "application/json",
            "Content-Encoding": "gzip",
            **_framing(len(body), chunked),
        }
        conn.send(head(status, headers))
        pieces = (body[i : i + _BLOCK] for i in range(0, len(body), _BLOCK))
        _send_body(conn, pieces, chunked=chunked)
        return False

    return behave


def corrupt_gzip(status: int = 200, *, body: bytes = CORRUPT_GZIP) -> Behaviour:
    """(5) ``Content-Encoding: gzip`` on a body that does not inflate."""
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    return respond(status, body, headers, keep_alive=False)

"""Content-Encoding decoded in bounded steps, so a compressed body cannot outgrow its cap: httpx
and aiohttp inflate each network chunk whole (64 KiB of deflate can become 64 MiB before any cap
is checked); here a chunk inflates at most ``STEP`` bytes at a time, so a gzip bomb costs the
client no more than its cap and one step. paysdk asks for ``gzip, deflate`` only; any other
coding is refused as undecodable."""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Final

ACCEPT_ENCODING: Final = "gzip, deflate"
READABLE_CODINGS: Final = frozenset({"identity", "gzip", "x-gzip", "deflate"})
STEP: Final = 64 * 1024


class DecodingError(ValueError):
    """The body is not in the Content-Encoding it claims (or one paysdk does not read)."""


class ContentDecoder:
    """Decodes one body's chunks; ``decode`` yields pieces of at most ``STEP`` bytes."""

    __slots__ = ("_encoding", "_inflater", "_started")

    def __init__(self, content_encoding: str | None) -> None:
        encoding = (content_encoding or "identity").strip().lower()
        if encoding not in READABLE_CODINGS:
            raise DecodingError(  # quoted as sent: a key it echoes is then blotted out
                f"a Content-Encoding paysdk does not read: {content_encoding!r}"
            )
        self._encoding = encoding
        self._inflater = _inflater(encoding)
        self._started = False

    def decode(self, data: bytes) -> Iterator[bytes]:
        if self._inflater is None:
            if data:
                yield data
            return
        if self._encoding == "deflate" and not self._started and data:
            self._started = True
            if (data[0] & 0x0F) != 8:  # no zlib header: servers often send raw deflate
                self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        pending = data
        try:
            while pending:
                if self._inflater.eof:  # zlib would keep whatever follows, uncounted by any cap
                    raise DecodingError("data after the end of the compressed body")
                piece = self._inflater.decompress(pending, STEP)
                if piece:
                    yield piece
                pending = self._inflater.unconsumed_tail or self._inflater.unused_data
        except zlib.error as exc:
            raise DecodingError(str(exc)) from None

    def flush(self) -> bytes:
        if self._inflater is None:
            return b""
        try:
            return self._inflater.flush(STEP)
        except zlib.error as exc:
            raise DecodingError(str(exc)) from None


def _inflater(encoding: str) -> zlib._Decompress | None:
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    return None


def decoded(content_encoding: str | None, raw: Iterable[bytes]) -> Iterator[bytes]:
    """The decoded pieces of a body arriving as ``raw`` chunks (``DecodingError`` if it is not).
    A raw chunk that inflates to nothing (a gzip header still arriving) yields ``b""``, so the
    reader gets control back and can look at its clock between chunks."""
    decoder = ContentDecoder(content_encoding)
    for chunk in raw:
        yield from _pieces(decoder, chunk)
    tail = decoder.flush()
    if tail:
        yield tail


async def async_decoded(
    content_encoding: str | None, raw: AsyncIterable[bytes]
) -> AsyncIterator[bytes]:
    """The async twin of ``decoded``, ``b""`` for chunks that inflate to nothing included."""
    decoder = ContentDecoder(content_encoding)
    async for chunk in raw:
        for piece in _pieces(decoder, chunk):
            yield piece
    tail = decoder.flush()
    if tail:
        yield tail


def _pieces(decoder: ContentDecoder, chunk: bytes) -> Iterator[bytes]:
    """What one raw chunk decodes to, or ``b""`` alone if it decodes to nothing yet."""
    inflated = False
    for piece in decoder.decode(chunk):
        inflated = True
        yield piece
    if not inflated:
        yield b""

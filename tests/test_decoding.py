"""Content-Encoding inflated in bounded steps: what a body may claim, and what it costs."""

from __future__ import annotations

import gzip
import zlib

import pytest

from paysdk._decoding import STEP, ContentDecoder, DecodingError, decoded

TEXT = b'{"data": []}' + b" " * 300_000


def chunks(data: bytes, size: int = 1000) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        (None, lambda b: b),
        ("identity", lambda b: b),
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("GZIP", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda b: zlib.compress(b)[2:-4]),  # raw deflate, as some servers send
    ],
)
def test_every_encoding_paysdk_asks_for_decodes(encoding: str | None, encode: object) -> None:
    assert callable(encode)
    assert b"".join(decoded(encoding, chunks(encode(TEXT)))) == TEXT


def test_no_piece_is_larger_than_a_step_however_well_it_compresses() -> None:
    bomb = gzip.compress(b"\0" * (20 * STEP))
    assert len(bomb) < STEP  # one network chunk...
    pieces = list(decoded("gzip", [bomb]))
    assert max(len(piece) for piece in pieces) <= STEP  # ...never inflated whole
    assert sum(len(piece) for piece in pieces) == 20 * STEP


@pytest.mark.parametrize("encoding", ["br", "zstd", "compress", "gzip, br"])
def test_codings_paysdk_does_not_ask_for_are_refused(encoding: str) -> None:
    with pytest.raises(DecodingError, match="does not read"):
        ContentDecoder(encoding)


def test_a_body_that_is_not_what_it_claims_is_refused() -> None:
    with pytest.raises(DecodingError):
        list(decoded("gzip", [b"this is not gzip"]))

"""Content-Encoding inflated in bounded steps: what a body may claim, and what it costs."""

from __future__ import annotations

import gzip
import time
import zlib

import pytest

from paysdk import _core
from paysdk._core.body import BodyReader
from paysdk._core.steps import Answer, Failure
from paysdk._parsing.decoding import STEP, ContentDecoder, DecodingError, decoded
from tests.conftest import make_config

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


# --- BodyReader: the one place every shell gathers a body ----------------------------------------


def reader(status: int, *, limit: int, encoding: str | None = None) -> BodyReader:
    request = _core.verify_request(make_config(), "order-1")._replace(max_body=limit, budget=None)
    headers = {"content-encoding": encoding} if encoding else {}
    return BodyReader(request, status, headers, time.monotonic(), encoding=encoding)


def test_a_successful_body_of_exactly_its_cap_is_taken_and_a_byte_more_refused() -> None:
    exact = reader(200, limit=10)
    assert exact.take(b"12345") is None
    assert exact.take(b"67890") is None
    done = exact.finish()
    assert isinstance(done, Answer) and done.content == b"1234567890"
    over = reader(200, limit=10).take(b"12345678901")
    assert isinstance(over, Failure) and over.kind == "too_large"
    assert over.content == b"1234567890"


def test_an_error_body_is_cut_at_its_cap_and_answered_at_once() -> None:
    cut = reader(503, limit=10)  # error bodies keep 64 KiB, whatever the success cap
    assert cut.take(b"x" * 60_000) is None
    done = cut.take(b"y" * 60_000)  # past 64 KiB: no need to read on
    assert isinstance(done, Answer)
    assert (done.status_code, len(done.content)) == (503, 64 * 1024)


def test_compressed_and_unreadable_bodies() -> None:
    gzipped = reader(200, limit=1_000_000, encoding="gzip")
    assert gzipped.take(gzip.compress(TEXT)) is None
    done = gzipped.finish()
    assert isinstance(done, Answer) and done.content == TEXT
    bomb = reader(200, limit=1_000, encoding="gzip").take(gzip.compress(b"\0" * 10 * STEP))
    assert isinstance(bomb, Failure) and bomb.kind == "too_large"
    for broken in (reader(200, limit=10, encoding="br"), reader(200, limit=10, encoding="gzip")):
        failure = broken.take(b"not what it claims")
        assert isinstance(failure, Failure) and failure.kind == "undecodable"
        assert failure.status_code == 200


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_bytes_after_the_end_of_a_compressed_body_are_refused_not_kept(encoding: str) -> None:
    # zlib puts whatever follows the end of the stream aside, uncounted by any cap: a server
    # could send gigabytes after a valid body. The first byte past the end is refused instead.
    body = gzip.compress(b'{"ok": true}') if encoding == "gzip" else zlib.compress(b"{}")
    decoder = ContentDecoder(encoding)
    with pytest.raises(DecodingError, match="after the end"):
        list(decoder.decode(body + b"junk"))
    decoder = ContentDecoder(encoding)
    assert b"".join(decoder.decode(body)) in (b'{"ok": true}', b"{}")
    with pytest.raises(DecodingError, match="after the end"):
        list(decoder.decode(b"x" * 1024))


def test_a_body_that_inflates_to_nothing_still_meets_its_deadline() -> None:
    # A gzip header with an endless file name yields no output: the deadline is checked on each
    # raw chunk, not only on what inflates, or a trickling server holds an injected client.
    request = _core.verify_request(make_config(), "order-1")._replace(budget=0.05)
    headers = {"content-encoding": "gzip"}
    reader = BodyReader(request, 200, headers, time.monotonic(), encoding="gzip")
    assert reader.take(b"\x1f\x8b\x08\x08\x00\x00\x00\x00\x00\xff") is None  # FNAME set
    time.sleep(0.06)
    outcome = reader.take(b"a-file-name-that-never-ends")
    assert isinstance(outcome, Failure)
    assert outcome.kind == "timeout"


def test_a_chunk_that_inflates_to_nothing_hands_control_back_as_an_empty_piece() -> None:
    body = gzip.compress(b'{"data": []}')
    pieces = list(decoded("gzip", [body[:5], body[5:]]))  # half a gzip header, then the rest
    assert pieces == [b"", b'{"data": []}']

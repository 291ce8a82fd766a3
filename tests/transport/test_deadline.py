"""The sync client's socket wrapper: each socket operation gets at most what is left of the
attempt's deadline (over real sockets: test_hostile_servers)."""

from __future__ import annotations

import time
from typing import Any

import httpcore
import pytest

from paysdk._transport.deadline import _deadline_backend, attempt_deadline


class _Recorded(httpcore.NetworkStream):
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, float | None]] = []

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.calls.append(("read", max_bytes, timeout))
        return b"data"

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.calls.append(("write", buffer, timeout))


def _wrapped(inner: httpcore.NetworkStream) -> httpcore.NetworkStream:
    class _Inner(httpcore.NetworkBackend):
        def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
            return inner

    stream: httpcore.NetworkStream = _deadline_backend()(_Inner()).connect_tcp("127.0.0.1", 1)
    return stream


def test_operations_get_what_is_left_of_the_attempt_or_their_own_timeout_if_shorter() -> None:
    inner = _Recorded()
    stream = _wrapped(inner)
    with attempt_deadline(time.monotonic() + 30):
        stream.read(10, timeout=60)
        stream.write(b"GET", timeout=1.0)
        stream.read(10, timeout=None)
    (_, _, clipped), (_, _, own), (_, _, unbounded) = inner.calls
    assert clipped is not None and 29 < clipped <= 30
    assert own == 1.0
    assert unbounded is not None and unbounded <= 30
    stream.read(10, timeout=60)  # outside any attempt: as given
    assert inner.calls[-1] == ("read", 10, 60)


def test_past_the_deadline_an_operation_fails_as_a_timeout_but_an_empty_write_is_no_operation() -> (
    None
):
    inner = _Recorded()
    stream = _wrapped(inner)
    with attempt_deadline(time.monotonic() - 1):
        stream.write(b"", timeout=5)  # h11 ends each request so: nothing to send, nothing to bound
        with pytest.raises(httpcore.WriteTimeout):
            stream.write(b"GET", timeout=5)
        with pytest.raises(httpcore.ReadTimeout):
            stream.read(10, timeout=5)
    assert inner.calls == []

"""The loopback ports tests/support/ports.py hands out: below the kernel's ephemeral range, where
neither an outgoing connection nor a server binding port 0 takes them, and free when handed out."""

from __future__ import annotations

import secrets
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import ports


def test_a_port_is_below_the_ephemeral_range_and_free() -> None:
    port = ports.unused_port()
    assert ports.LOWEST <= port < ports.ephemeral_start()
    with socket.socket() as server:
        server.bind(("127.0.0.1", port))
        server.listen()


def test_the_ports_outgoing_connections_take_are_never_handed_out() -> None:
    """Each outgoing connection's own port is in the ephemeral range: the race the helper avoids."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname()) as outgoing:
            assert outgoing.getsockname()[1] >= ports.ephemeral_start()


@pytest.fixture
def taken() -> Iterator[int]:
    """A port below the ephemeral range that a socket holds."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", ports.unused_port()))
        yield holder.getsockname()[1]


def test_a_port_something_holds_is_skipped(taken: int, monkeypatch: pytest.MonkeyPatch) -> None:
    free = ports.unused_port()
    picks = iter([taken - ports.LOWEST, free - ports.LOWEST])
    monkeypatch.setattr(secrets, "randbelow", lambda _: next(picks))
    assert ports.unused_port() == free


@pytest.mark.parametrize(
    ("written", "start"),
    [("32768\t60999\n", 32768), ("1024 65535", 1024), (None, ports.IANA_EPHEMERAL_START)],
    ids=["linux-default", "wide", "not-linux"],
)
def test_the_ephemeral_range_is_read_where_the_kernel_says_it(
    written: str | None, start: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = tmp_path / "ip_local_port_range"
    if written is not None:
        where.write_text(written, encoding="ascii")
    monkeypatch.setattr(ports, "EPHEMERAL_RANGE", where)
    assert ports.ephemeral_start() == start


def test_a_range_leaving_no_room_below_it_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = tmp_path / "ip_local_port_range"
    where.write_text("1024 65535", encoding="ascii")
    monkeypatch.setattr(ports, "EPHEMERAL_RANGE", where)
    with pytest.raises(RuntimeError, match="starts at 1024: no room below it"):
        ports.unused_port()

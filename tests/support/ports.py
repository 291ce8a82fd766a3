"""A loopback port for a test to listen on later, or to find nothing listening on.

A port the kernel picks for a bind to port 0 is in its ephemeral range, the range every outgoing
connection also takes its local port from, and every server of a parallel run binding port 0:
between the test closing its probe and its server binding the port, or its client connecting
to it, another process may hold it. This helper picks below that range instead, where only a
caller of this helper picks, at random so that two workers rarely pick the same port.
"""

from __future__ import annotations

import secrets
import socket
from pathlib import Path

LOWEST = 10_000
"""Above the ports well-known services listen on (PostgreSQL's 5432, a proxy's 8080)."""
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
IANA_EPHEMERAL_START = 49_152
"""Where the kernel's ephemeral range starts where it does not say (macOS, Windows)."""


def ephemeral_start() -> int:
    """The lowest port the kernel may hand an outgoing connection or a bind to port 0."""
    try:
        return int(EPHEMERAL_RANGE.read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError):
        return IANA_EPHEMERAL_START


def unused_port() -> int:
    """A loopback port nothing is bound to now, below the ephemeral range (the module says why)."""
    start = ephemeral_start()
    if start <= LOWEST + 1_000:  # a range starting that low leaves no room below it
        raise RuntimeError(f"the ephemeral port range starts at {start}: no room below it")
    while True:
        port = LOWEST + secrets.randbelow(start - LOWEST)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port

"""A delay proxy: a wide-area network's round trips between a client and the bench server, on
loopback, run in a child process by :class:`DelayProxy`.

    python -m benchmarks._delay --upstream HOST:PORT --delay 0.025

It accepts TCP on a free port of 127.0.0.1 (its first line of output is ``HOST:PORT``), opens a
connection upstream for each, and delivers every chunk read either way ``delay`` seconds after
it arrived: latency, not bandwidth. Chunks keep their order in each direction, and one that
arrived while another waited is not held a further ``delay`` behind it. A connection's first
bytes go upstream one round trip (``2 * delay``) after it was accepted at the earliest, as a real
TCP handshake would hold them, so opening a connection costs the round trip it costs on a WAN.
TLS passes through untouched (the proxy holds no key), so each connection accepted is one TLS
handshake.

On standard input, a line ``stats`` is answered with one JSON line: the connections accepted so
far and the proxy's CPU seconds. The end of standard input (the parent gone) stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import threading
from dataclasses import dataclass
from types import TracebackType
from typing import Final

from typing_extensions import Self

from ._measure import ROOT

__all__ = ["DelayProxy", "ProxyStats", "serve"]

CHUNK: Final = 64 * 1024
"""Bytes read at a time from either side."""
QUEUED_CHUNKS: Final = 256
"""Chunks a direction holds in flight at most: reading waits beyond, so a slow reader slows its
sender, as TCP's window would (256 x 64 KiB a delay of 25 ms is over 600 MB/s)."""


@dataclass
class _Counts:
    connections: int = 0


async def _read(
    reader: asyncio.StreamReader,
    queue: asyncio.Queue[tuple[float, bytes]],
    delay: float,
    not_before: float,
) -> None:
    """Queue every chunk ``reader`` gives with when it is due: ``delay`` after it arrived, and
    not before ``not_before`` + ``delay``; its end (``b""``) last."""
    loop = asyncio.get_running_loop()
    while True:
        data = await reader.read(CHUNK)
        await queue.put((max(loop.time(), not_before) + delay, data))
        if not data:
            return


async def _deliver(queue: asyncio.Queue[tuple[float, bytes]], writer: asyncio.StreamWriter) -> None:
    """Write each queued chunk once it is due, in order; the end as an end of writing."""
    loop = asyncio.get_running_loop()
    while True:
        due, data = await queue.get()
        wait = due - loop.time()
        if wait > 0:
            await asyncio.sleep(wait)
        if not data:
            if writer.can_write_eof():
                writer.write_eof()
            return
        writer.write(data)
        await writer.drain()


async def _proxy(
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
    upstream: tuple[str, int],
    delay: float,
) -> None:
    """One connection: both directions forwarded until each has ended, or either side fails."""
    opened = asyncio.get_running_loop().time() + 2 * delay  # when TCP's handshake would be done
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection(*upstream)
    except OSError:
        client_writer.close()
        return
    up: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue(maxsize=QUEUED_CHUNKS)
    down: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue(maxsize=QUEUED_CHUNKS)
    tasks = [
        asyncio.ensure_future(_read(client_reader, up, delay, opened)),
        asyncio.ensure_future(_deliver(up, upstream_writer)),
        asyncio.ensure_future(_read(upstream_reader, down, delay, 0.0)),
        asyncio.ensure_future(_deliver(down, client_writer)),
    ]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except asyncio.CancelledError:
        pass  # the proxy stopping
    finally:
        for task in tasks:  # a reset on either side ends both directions
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        client_writer.close()
        upstream_writer.close()


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def serve(upstream: tuple[str, int], delay: float, port: int = 0) -> None:
    """Proxy 127.0.0.1:``port`` to ``upstream`` until standard input ends, printing the address
    first and answering each ``stats`` line read with a JSON line."""
    loop = asyncio.get_running_loop()
    counts = _Counts()
    alive: set[asyncio.Task[None]] = set()  # the loop holds tasks weakly

    def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        counts.connections += 1
        task = loop.create_task(_proxy(reader, writer, upstream, delay))
        alive.add(task)
        task.add_done_callback(alive.discard)

    server = await asyncio.start_server(accept, "127.0.0.1", port)
    host, bound = server.sockets[0].getsockname()[:2]
    print(f"{host}:{bound}", flush=True)
    parent_gone = asyncio.Event()

    def control() -> None:
        for line in sys.stdin:
            if line.strip() == "stats":
                stats = {"connections": counts.connections, "cpu_seconds": _cpu_seconds()}
                print(json.dumps(stats), flush=True)
        loop.call_soon_threadsafe(parent_gone.set)

    threading.Thread(target=control, daemon=True).start()
    async with server:
        await parent_gone.wait()


# --- the parent's handle ----------------------------------------------------------------------


@dataclass(frozen=True)
class ProxyStats:
    connections: int
    """Connections accepted so far: each is one TCP connect and, for TLS, one handshake."""
    cpu_seconds: float


class DelayProxy:
    """The proxy in a child process on a free port of 127.0.0.1, for a ``with`` block."""

    def __init__(self, upstream: str, delay: float) -> None:
        """
        Args:
            upstream: ``HOST:PORT`` of the server every connection goes on to.
            delay: seconds each chunk takes one way; a round trip is twice that.
        """
        self._upstream = upstream
        self.delay = delay
        self._process: subprocess.Popen[str] | None = None
        self.address = ""

    @property
    def rtt(self) -> float:
        """Seconds of one round trip through the proxy."""
        return 2 * self.delay

    def __enter__(self) -> Self:
        command = [
            sys.executable, "-m", "benchmarks._delay",
            "--upstream", self._upstream, "--delay", repr(self.delay),
        ]  # fmt: skip
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT, text=True
        )
        self._process = process
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line.startswith("127.0.0.1:"):
            self.__exit__(None, None, None)
            raise RuntimeError(f"the delay proxy did not start (it said {line!r})")
        self.address = line
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

    def stats(self) -> ProxyStats:
        """The connections accepted so far and the proxy's CPU seconds."""
        process = self._process
        assert process is not None
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write("stats\n")
        process.stdin.flush()
        stats = json.loads(process.stdout.readline())
        return ProxyStats(int(stats["connections"]), float(stats["cpu_seconds"]))


def main() -> None:
    parser = argparse.ArgumentParser(description="the benchmarks' delay proxy")
    parser.add_argument("--upstream", required=True, metavar="HOST:PORT")
    parser.add_argument("--delay", type=float, required=True, help="seconds one way")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    args = parser.parse_args()
    host, _, port = args.upstream.rpartition(":")
    asyncio.run(serve((host, int(port)), args.delay, args.port))


if __name__ == "__main__":
    main()

"""What every row gets: how much work to do (the full run or ``--quick``'s) and the server."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from ._results import Result
from ._server import BenchServer

__all__ = ["FULL", "QUICK", "Bench", "Row", "Sizes"]


@dataclass(frozen=True)
class Sizes:
    """How much work each row does: the full run, or ``--quick``'s smoke run."""

    list_count: int
    list_rounds: int
    parse_count: int
    parse_rounds: int
    async_requests: int
    async_rounds: int
    concurrency: int
    import_pairs: int
    verify_calls: int
    verify_rounds: int
    reconcile_count: int
    wan_requests: int
    wan_threads: int
    wan_stream_count: int
    wan_rounds: int
    wan_delay: float
    """Seconds one way through the WAN rows' delay proxy: a round trip is twice that."""


FULL: Final = Sizes(
    list_count=1_000_000,
    list_rounds=1,
    parse_count=100_000,
    parse_rounds=9,
    async_requests=3_000,
    async_rounds=3,
    concurrency=50,
    import_pairs=24,  # a multiple of 6: each order of the import row's three commands as often
    verify_calls=50,
    verify_rounds=81,
    reconcile_count=1_000_000,
    wan_requests=2_000,
    wan_threads=8,
    wan_stream_count=200_000,
    wan_rounds=3,
    wan_delay=0.025,
)
QUICK: Final = Sizes(
    list_count=2_000,
    list_rounds=1,
    parse_count=1_000,
    parse_rounds=2,
    async_requests=100,
    async_rounds=1,
    concurrency=50,
    import_pairs=1,
    verify_calls=10,
    verify_rounds=2,
    reconcile_count=2_000,
    wan_requests=100,
    wan_threads=8,
    wan_stream_count=2_000,
    wan_rounds=1,
    wan_delay=0.025,
)


@dataclass(frozen=True)
class Bench:
    """What every row gets: the server, the key it checks and how much work to do."""

    server: BenchServer
    key: str
    sizes: Sizes


Row = Callable[[Bench], list[Result]]

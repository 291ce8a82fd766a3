"""Rows 7 and 8: what a merchant meets in production, round trips and TLS.

Both run against the bench server over HTTPS (a throwaway CA of trustme's), through the delay
proxy of :mod:`benchmarks._delay`, which holds every chunk 25 ms each way: a round trip (RTT) of
50 ms, on loopback, in the bench's own process tree.

Row 7 (``wan``) puts each client's throughput beside the physical limit: ``n`` verifies at
concurrency ``c`` take at least ``n / c`` round trips, and each connection opened takes two more
(TCP's, then TLS 1.3's), spread over the ``c`` calls at once. A client's share of the limit is
the limit's time over its own (higher is better, 1.00 is the wire's speed); the proxy counts the
connections (each one TLS handshake). Row 8 (``cold-start``) times a fresh process's import, client
and one verify over TLS against raw httpx doing the same.
"""

from __future__ import annotations

import contextlib
import functools
import statistics
import subprocess
import tempfile
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from ._bench import Bench
from ._delay import DelayProxy
from ._measure import JobFailed, JobResult, Paired, command_seconds, interleaved, paired, run_job
from ._pairs import pair_results, warm
from ._results import Goal, Result, failed, seconds_text
from ._server import BenchServer, Certificates, certificates

__all__ = ["cold_start", "wan"]

REFERENCE: Final = "order-1042"
WAN_JOBS: Final = "benchmarks._wan_jobs"
HANDSHAKE_RTTS: Final = 2
"""Round trips to open a connection before its first request: TCP's, then TLS 1.3's."""


@dataclass(frozen=True)
class Wan:
    """The TLS server behind the delay proxy, and the CA its clients trust."""

    server: BenchServer
    proxy: DelayProxy
    certificates: Certificates

    def base_url(self, count: int = 0) -> str:
        """The base_url to give a client: through the proxy, its list of ``count`` payments."""
        return f"https://{self.proxy.address}/n/{count}"

    @property
    def ca(self) -> str:
        return str(self.certificates.ca)


@contextlib.contextmanager
def wide_area(key: str, delay: float) -> Generator[Wan, None, None]:
    """Certificates in a temporary directory, the server over TLS, the proxy before it."""
    with tempfile.TemporaryDirectory(prefix="paysdk-bench-") as directory:
        files = certificates(Path(directory))
        with contextlib.ExitStack() as stack:
            server = stack.enter_context(BenchServer(key, tls=files))
            proxy = stack.enter_context(DelayProxy(server.url.removeprefix("https://"), delay))
            yield Wan(server, proxy, files)


@dataclass
class _Runs:
    """One client's jobs over the rounds: seconds, CPU seconds and connections opened."""

    label: str
    seconds: list[float] = field(default_factory=list[float])
    cpu: list[float] = field(default_factory=list[float])
    connections: list[int] = field(default_factory=list[int])
    others_cpu: list[float] = field(default_factory=list[float])
    """CPU seconds the server and the proxy spent meanwhile: the same 2 cores serve them."""
    error: str = ""


def _limit(requests: int, concurrency: int, connections: int, rtt: float) -> float:
    """The least time the wire allows: a round trip per call, ``concurrency`` at once, and the
    handshakes of ``connections``, spread over as many."""
    return requests / concurrency * rtt + connections / concurrency * HANDSHAKE_RTTS * rtt


def _measured(wan: Wan, runs: _Runs, job: Callable[[], JobResult]) -> None:
    """Run ``job``, adding its times and the connections the proxy accepted meanwhile."""
    if runs.error:
        return
    before, server_before = wan.proxy.stats(), wan.server.stats().cpu_seconds
    try:
        result = job()
    except JobFailed as exc:
        runs.error = str(exc)
        return
    after, server_after = wan.proxy.stats(), wan.server.stats().cpu_seconds
    runs.seconds.append(result.seconds)
    runs.cpu.append(result.details["cpu_seconds"])
    runs.connections.append(after.connections - before.connections)
    others = after.cpu_seconds - before.cpu_seconds + server_after - server_before
    runs.others_cpu.append(others)


def _rotated(clients: list[str], rounds: int) -> Iterator[str]:
    for round_ in range(rounds):
        shift = round_ % len(clients)
        yield from clients[shift:] + clients[:shift]


def _shares(
    row: str,
    runs: dict[str, _Runs],
    requests: int,
    concurrency: int,
    rtt: float,
    goals: dict[str, tuple[Goal, Goal]],
) -> list[Result]:
    """Each client's share of the limit and its connections (the most in a round); the goals
    for the clients in ``goals``, context for the others."""
    results: list[Result] = []
    for client, run in runs.items():
        share, conns = f"{run.label}: share of the limit", f"{run.label}: connections"
        goal_share, goal_conns = goals.get(client, (None, None))
        if run.error:
            print(f"  {run.label:<44} FAILED: {run.error}")
            results += [
                failed(row, share, "-", run.error),
                failed(row, conns, f"{concurrency} at once", run.error, unit="conns"),
            ]
            continue
        limits = [_limit(requests, concurrency, n, rtt) for n in run.connections]
        fractions = [limit / s for limit, s in zip(limits, run.seconds, strict=True)]
        cpu_each = statistics.median(run.cpu) / requests
        others_each = statistics.median(run.others_cpu) / requests
        print(
            f"  {run.label:<44} {statistics.median(fractions):.2f} of the limit"
            f" (rounds: {' '.join(f'{f:.2f}' for f in fractions)}),"
            f" {statistics.median(requests / s for s in run.seconds):,.0f} req/s,"
            f" {'/'.join(str(n) for n in run.connections)} connections,"
            f" CPU a request: {seconds_text(cpu_each)}, server and proxy"
            f" {seconds_text(others_each)}"
        )
        results += [
            Result(
                row,
                share,
                f"{seconds_text(statistics.median(limits))} (limit)",
                seconds_text(statistics.median(run.seconds)),
                statistics.median(fractions),
                goal=goal_share,
            ),
            Result(
                row,
                conns,
                f"{concurrency} at once",
                f"{max(run.connections)} opened",
                max(run.connections),
                unit="conns",
                goal=goal_conns,
            ),
        ]
    return results


def _versus(row: str, runs: dict[str, _Runs], candidate: str, baseline: str) -> Result:
    """The candidate's throughput over the baseline's, median of the rounds' ratios."""
    cand, base = runs[candidate], runs[baseline]
    measure = f"{cand.label} vs {base.label}"
    if cand.error or base.error:
        return failed(row, measure, "-", cand.error or base.error)
    pair = Paired(base.seconds, cand.seconds)
    rate = (
        seconds_text(statistics.median(base.seconds)),
        seconds_text(statistics.median(cand.seconds)),
    )
    return Result(row, measure, rate[0], rate[1], pair.speedup)


ASYNC_LABELS: Final = {
    "paysdk": "AsyncClient (httpx)",
    "paysdk-aiohttp": "AsyncClient (aiohttp)",
    "httpx": "raw httpx.AsyncClient",
    "aiohttp": "raw aiohttp",
}
SYNC_LABELS: Final = {"paysdk": "Client, threads", "httpx": "raw httpx.Client, threads"}


def wan(bench: Bench) -> list[Result]:
    """Verifies (async, then by threads) and a long list over TLS through 50 ms round trips."""
    sizes = bench.sizes
    with wide_area(bench.key, sizes.wan_delay) as network:
        rtt = network.proxy.rtt
        return [
            *_wan_async(bench, network, rtt),
            *_wan_sync(bench, network, rtt),
            *_wan_stream(bench, network, rtt),
        ]


def _wan_async(bench: Bench, network: Wan, rtt: float) -> list[Result]:
    sizes = bench.sizes
    requests, concurrency = sizes.wan_requests, sizes.concurrency
    row = f"7. WAN, {requests:,} verifies at {concurrency}"
    print(
        f"\n{row}: TLS, RTT {rtt * 1e3:.0f} ms; each client in a fresh process, from its first"
        f" connection; {sizes.wan_rounds} round(s), order rotated"
    )
    runs = {client: _Runs(label) for client, label in ASYNC_LABELS.items()}
    for client in _rotated(list(runs), sizes.wan_rounds):
        _measured(
            network,
            runs[client],
            functools.partial(
                run_job,
                "wan-async",
                module=WAN_JOBS,
                client=client,
                base_url=network.base_url(),
                key=bench.key,
                ca=network.ca,
                requests=requests,
                concurrency=concurrency,
            ),
        )
    goals = {"paysdk": (Goal(">=", 0.90), Goal("<=", concurrency, "conns"))}
    return [
        *_shares(row, runs, requests, concurrency, rtt, goals),
        _versus(row, runs, "paysdk", "httpx"),
        _versus(row, runs, "paysdk", "aiohttp"),
        _versus(row, runs, "paysdk-aiohttp", "aiohttp"),
    ]


def _wan_sync(bench: Bench, network: Wan, rtt: float) -> list[Result]:
    sizes = bench.sizes
    requests, threads = sizes.wan_requests, sizes.wan_threads
    row = f"7b. WAN, {requests:,} verifies by {threads} threads"
    print(f"\n{row}: one client shared, TLS, RTT {rtt * 1e3:.0f} ms; {sizes.wan_rounds} round(s)")
    runs = {client: _Runs(label) for client, label in SYNC_LABELS.items()}
    for client in _rotated(list(runs), sizes.wan_rounds):
        _measured(
            network,
            runs[client],
            functools.partial(
                run_job,
                "wan-sync",
                module=WAN_JOBS,
                client=client,
                base_url=network.base_url(),
                key=bench.key,
                ca=network.ca,
                requests=requests,
                threads=threads,
            ),
        )
    return [
        *_shares(row, runs, requests, threads, rtt, {}),
        _versus(row, runs, "paysdk", "httpx"),
    ]


def _wan_stream(bench: Bench, network: Wan, rtt: float) -> list[Result]:
    sizes = bench.sizes
    count = sizes.wan_stream_count
    row = f"7c. WAN, list {count:,} payments"
    print(
        f"\n{row}: TLS, RTT {rtt * 1e3:.0f} ms, from the first connection; each job in a fresh"
        f" process, {sizes.wan_rounds} round(s) alternating"
    )
    jobs: dict[str, list[JobResult]] = {"httpx": [], "paysdk": []}

    def job(client: str) -> Callable[[], float]:
        def run() -> float:
            result = run_job(
                "wan-stream",
                module=WAN_JOBS,
                client=client,
                base_url=network.base_url(count),
                key=bench.key,
                ca=network.ca,
            )
            if result.details["count"] != count:
                raise JobFailed(f"{client} saw {result.details['count']} payments, not {count}")
            jobs[client].append(result)
            return result.seconds

        return run

    time_measure, first_measure = "iter_payments vs httpx + json.loads", "first payment"
    try:
        wall = paired(job("httpx"), job("paysdk"), sizes.wan_rounds)
    except JobFailed as exc:
        return [
            failed(row, time_measure, "-", str(exc)),
            failed(row, first_measure, "-", str(exc), unit="RTT"),
        ]
    cpu = Paired(*([r.details["cpu_seconds"] for r in jobs[c]] for c in ("httpx", "paysdk")))
    first = {c: statistics.median(r.details["first_seconds"] for r in jobs[c]) for c in jobs}
    print(
        f"  first payment in hand: httpx + json.loads {seconds_text(first['httpx'])}"
        f" ({first['httpx'] / rtt:.1f} RTT), iter_payments {seconds_text(first['paysdk'])}"
        f" ({first['paysdk'] / rtt:.2f} RTT; the wire's least is"
        f" {HANDSHAKE_RTTS + 1} RTT: TCP, TLS, the request)"
    )
    return [
        *pair_results(
            row, time_measure, ("httpx get + json.loads", "Client.iter_payments()"), None, wall, cpu
        ),
        Result(
            row,
            first_measure,
            f"{seconds_text(first['httpx'])} (the whole body)",
            seconds_text(first["paysdk"]),
            first["paysdk"] / rtt,
            unit="RTT",
        ),
    ]


# --- 8. cold start ----------------------------------------------------------------------------


def cold_start(bench: Bench) -> list[Result]:
    """A fresh process: import, a client trusting the CA, one verify over TLS through the
    proxy; paysdk against raw httpx, and against raw httpx with pydantic imported."""
    pairs = bench.sizes.import_pairs
    with wide_area(bench.key, bench.sizes.wan_delay) as network:
        rtt = network.proxy.rtt
        row = f"8. cold start over TLS, RTT {rtt * 1e3:.0f} ms"
        print(f"\n{row}: python -c, {pairs} round(s) in turn, after one warm-up run of each")
        base_url, key, ca = network.base_url(), bench.key, network.ca
        raw = (
            "import json, ssl, httpx\n"
            f"with httpx.Client(verify=ssl.create_default_context(cafile={ca!r})) as client:\n"
            f"    response = client.get({base_url + '/payment/' + REFERENCE!r},"
            f" headers={{'Authorization': 'Bearer {key}'}})\n"
            "    response.raise_for_status()\n"
            "    json.loads(response.content)\n"
        )
        with_pydantic = "from pydantic import BaseModel\n" + raw
        sdk = (
            "import paysdk\n"
            f"with paysdk.Client(secret_key={key!r}, base_url={base_url!r}, verify={ca!r})"
            " as client:\n"
            f"    client.verify({REFERENCE!r})\n"
        )
        measure = "import, client, one verify vs httpx + json.loads"
        commands = (raw, with_pydantic, sdk)
        cpu: list[list[float]] = [[], [], []]
        try:
            warm(*commands)
            base, floor, candidate = interleaved(
                [
                    functools.partial(command_seconds, code, cpu[n])
                    for n, code in enumerate(commands)
                ],
                pairs,
            )
        except subprocess.CalledProcessError as exc:
            error = f"python -c failed with exit status {exc.returncode}"
            return [failed(row, measure, "-", error)]
    print(f"  the wire's least: {HANDSHAKE_RTTS + 1} RTT ({seconds_text(3 * rtt)}) to the answer")
    raw_label, floor_label = "python -c import httpx...", "... + from pydantic import BaseModel"
    sdk_label = "python -c import paysdk..."
    return [
        *pair_results(
            row,
            measure,
            (raw_label, sdk_label),
            Goal("<=", 1.05),
            Paired(base, candidate),
            Paired(cpu[0], cpu[2]),
        ),
        *pair_results(
            row,
            "import, client, one verify vs httpx + pydantic",
            (floor_label, sdk_label),
            None,
            Paired(floor, candidate),
        ),
    ]

"""The performance table's rows: each a function that measures, prints its detail, returns results.

A row runs alone with ``python -m benchmarks --only NAME``. A job that fails (a feature not there
yet, a server error) is reported as FAILED in its row and the run goes on with the next one.
"""

from __future__ import annotations

import functools
import os
import statistics
import subprocess
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from . import _reconcile, _wan
from ._bench import FULL, QUICK, Bench, Row, Sizes
from ._measure import JobFailed, JobResult, Paired, command_seconds, interleaved, paired, run_job
from ._pairs import compare_commands, pair_results, paired_job, warm
from ._results import MB, Goal, Result, failed, mb, seconds_text
from ._server import ListBody

__all__ = ["FULL", "QUICK", "ROWS", "Bench", "Row", "Sizes"]

REFERENCE: Final = "order-1042"


# --- 1. streaming list ------------------------------------------------------------------------


def stream_list(bench: Bench) -> list[Result]:
    """``iter_payments()`` of a long list: peak RSS, and time against httpx + ``json.loads``."""
    count, rounds = bench.sizes.list_count, bench.sizes.list_rounds
    url = bench.server.base_url(count)
    row = f"1. list {count:,} payments"
    print(f"\n{row} ({ListBody(count).length / MB:,.0f} MB body); each job in a fresh process")
    runs: dict[str, list[JobResult]] = {"list-json": [], "list-iter": [], "list-payments": []}

    def job(name: str) -> Callable[[], float]:
        def run() -> float:
            result = run_job(name, base_url=url, key=bench.key)
            if result.details["count"] != count:
                raise JobFailed(f"{name} saw {result.details['count']} payments, not {count}")
            runs[name].append(result)
            return result.seconds

        return run

    error = context_error = ""
    try:
        paired(job("list-json"), job("list-iter"), rounds)
    except JobFailed as exc:
        error = str(exc)
    if runs["list-json"]:
        try:
            job("list-payments")()
        except JobFailed as exc:
            context_error = str(exc)
    else:
        context_error = error
    _print_job("baseline", "httpx.Client.get + json.loads", runs["list-json"], error)
    _print_job("paysdk", "Client.iter_payments()", runs["list-iter"], error)
    _print_job("context", "Client.list_payments()", runs["list-payments"], context_error)
    baseline = runs["list-json"]
    goals = (Goal("<=", 2.0), Goal("<", 100, "MB"))
    return [
        *_list_results(row, "iter_payments()", baseline, runs["list-iter"], error, goals),
        *_list_results(row, "list_payments()", baseline, runs["list-payments"], context_error),
    ]


def _list_results(
    row: str,
    what: str,
    baseline: Sequence[JobResult],
    candidate: Sequence[JobResult],
    error: str,
    goals: tuple[Goal, Goal] | None = None,
) -> list[Result]:
    """Time (wall, then CPU) as the median per-round ratio to the baseline; peak RSS in MB.

    ``goals`` are for wall time and peak RSS; without them all three are context.
    """
    time, cpu, rss = f"{what} time", f"{what} CPU time", f"{what} peak RSS"
    base = {
        time: _median_seconds(r.seconds for r in baseline),
        cpu: _median_seconds(r.details["cpu_seconds"] for r in baseline),
        rss: mb(max(r.peak_rss_bytes for r in baseline)) if baseline else "-",
    }
    if not baseline or not candidate:
        return [failed(row, name, base[name], error, "MB" if name == rss else "x") for name in base]
    pairs = list(zip(baseline, candidate, strict=False))
    wall = Paired([b.seconds for b, _ in pairs], [c.seconds for _, c in pairs])
    on_cpu = Paired(
        [b.details["cpu_seconds"] for b, _ in pairs], [c.details["cpu_seconds"] for _, c in pairs]
    )
    base_peak = max(r.peak_rss_bytes for r in baseline)
    peak = max(r.peak_rss_bytes for r in candidate)
    time_goal, rss_goal = goals or (None, None)
    cand_time = _median_seconds(r.seconds for r in candidate)
    cand_cpu = _median_seconds(r.details["cpu_seconds"] for r in candidate)
    cand_rss = f"{mb(peak)} ({peak / base_peak:.2f}x)"
    return [
        Result(row, time, base[time], cand_time, wall.ratio, goal=time_goal),
        Result(row, cpu, base[cpu], cand_cpu, on_cpu.ratio),
        Result(row, rss, base[rss], cand_rss, peak / MB, unit="MB", goal=rss_goal),
    ]


def _median_seconds(values: Iterable[float]) -> str:
    listed = list(values)
    return seconds_text(statistics.median(listed)) if listed else "-"


def _print_job(role: str, what: str, runs: Sequence[JobResult], error: str = "") -> None:
    if not runs:
        print(f"  {role:<9} {what:<30} FAILED: {error}")
        return
    seconds = statistics.median(r.seconds for r in runs)
    peak = max(r.peak_rss_bytes for r in runs)
    ready = max(r.ready_rss_bytes for r in runs)
    cpu = statistics.median(r.details["cpu_seconds"] for r in runs)
    print(
        f"  {role:<9} {what:<30} {seconds_text(seconds):>8} (CPU {seconds_text(cpu)})"
        f"   peak RSS {mb(peak):>9} (after imports {mb(ready)})"
    )


# --- 2. typed parse ---------------------------------------------------------------------------


def parse(bench: Bench) -> list[Result]:
    """``_core.parse_list`` (what list_payments uses) against ``json.loads``, same bytes."""
    count, rounds = bench.sizes.parse_count, bench.sizes.parse_rounds
    row = f"2. parse {count:,}-payment list"
    size = ListBody(count).length / MB
    print(f"\n{row} body ({size:,.1f} MB); in a fresh process, {rounds} rounds alternating")
    return paired_job(
        row,
        "_core.parse_list vs json.loads",
        ("json.loads", "_core.parse_list"),
        Goal("<=", 1.1),
        run=lambda: run_job("parse", count=count, rounds=rounds),
    )


# --- 3. many async verifies -------------------------------------------------------------------

CLIENT_LABELS: Final = {
    "httpx": "default httpx.AsyncClient + json.loads",
    "aiohttp": "aiohttp ClientSession.get + json.loads",
    "paysdk": "paysdk AsyncClient (httpx)",
    "paysdk-aiohttp": 'paysdk AsyncClient(http_backend="aiohttp")',
    "paysdk-aiohttp-verify-many": '... (http_backend="aiohttp").verify_many',
}
UNPINNED: Final = "aiohttp-unpinned"
"""Raw aiohttp again, server and client free to run on any core: were the pinned server the
ceiling, this would be faster than the pinned run."""
UNPINNED_LABEL: Final = "aiohttp, server and client unpinned"
SERVER_MEASURE: Final = "raw aiohttp, server pinned vs unpinned"


def split_cores() -> tuple[set[int], list[int]] | None:
    """The server's core and the clients' (all the others), so that the server is never the
    ceiling of a client it shares no core with; ``None`` on fewer than 2 cores, or no way to pin."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        return None
    return {allowed[0]}, allowed[1:]


def async_verify(bench: Bench) -> list[Result]:
    """Verifies by ``concurrency`` workers sharing one queue, each client in a fresh process,
    the server on a core of its own."""
    sizes = bench.sizes
    row = f"3. async {sizes.async_requests:,} verifies at {sizes.concurrency}"
    print(f"\n{row}; each client in a fresh process, {sizes.async_rounds} round(s), order rotated")
    cores = split_cores()
    labels = dict(CLIENT_LABELS)
    if cores is None:
        print("  fewer than 2 cores (or no sched_setaffinity): the server and clients share them")
    else:
        server_cores, client_cores = cores
        print(f"  server pinned to core {min(server_cores)}, each client to core(s) {client_cores}")
        labels[UNPINNED] = UNPINNED_LABEL
    seconds: dict[str, list[float]] = {client: [] for client in labels}
    cpu: dict[str, list[float]] = {client: [] for client in labels}
    busy: dict[str, list[float]] = {client: [] for client in labels}
    errors: dict[str, str] = {}
    clients = list(labels)
    for round_ in range(sizes.async_rounds):
        shift = round_ % len(clients)
        for client in clients[shift:] + clients[:shift]:
            if client in errors:
                continue
            pinned = cores is not None and client != UNPINNED
            bench.server.pin(cores[0] if cores is not None and pinned else None)
            server_before = bench.server.stats().cpu_seconds
            try:
                job = run_job(
                    "async-verify",
                    client="aiohttp" if client == UNPINNED else client,
                    base_url=bench.server.base_url(),
                    key=bench.key,
                    requests=sizes.async_requests,
                    concurrency=sizes.concurrency,
                    warmup=2 * sizes.concurrency,
                    cores=cores[1] if cores is not None and pinned else None,
                )
            except JobFailed as exc:
                errors[client] = str(exc)
                continue
            finally:
                bench.server.pin(None)  # the other rows' server runs where it likes
            seconds[client].append(job.seconds)
            cpu[client].append(job.details["cpu_seconds"])
            server_cpu = bench.server.stats().cpu_seconds - server_before
            timed_share = sizes.async_requests / (sizes.async_requests + 2 * sizes.concurrency)
            busy[client].append(server_cpu * timed_share / job.seconds)  # warm-up left out
    for client, label in labels.items():
        if client in errors:
            print(f"  {label:<42} FAILED: {errors[client]}")
        else:
            rates = [sizes.async_requests / s for s in seconds[client]]
            each = " ".join(f"{r:,.0f}" for r in rates)
            per_request = statistics.median(cpu[client]) / sizes.async_requests
            print(
                f"  {label:<42} {statistics.median(rates):8,.0f} req/s (rounds: {each}),"
                f" {per_request * 1e6:,.0f} us CPU a request, server busy"
                f" {max(busy[client]):.0%} of a core at most"
            )

    def rate(client: str) -> str:
        if client in errors:
            return "-"
        return f"{statistics.median(sizes.async_requests / s for s in seconds[client]):,.0f} req/s"

    def cpu_each(client: str) -> str:
        return seconds_text(statistics.median(cpu[client]) / sizes.async_requests)

    def versus(
        candidate: str,
        baseline: str,
        measure: str,
        goal: Goal | None = None,
        cpu_too: bool = False,
    ) -> list[Result]:
        error = errors.get(baseline) or errors.get(candidate)
        if error:
            cpu_failed = [failed(row, f"{measure}, CPU a request", "-", error)] if cpu_too else []
            return [failed(row, measure, rate(baseline), error), *cpu_failed]
        pair = Paired(seconds[baseline], seconds[candidate])
        results = [Result(row, measure, rate(baseline), rate(candidate), pair.speedup, goal=goal)]
        if cpu_too:  # how many times less CPU a request takes: steadier under load than rates
            speedup = Paired(cpu[baseline], cpu[candidate]).speedup
            name = f"{measure}, CPU a request"
            results.append(Result(row, name, cpu_each(baseline), cpu_each(candidate), speedup))
        return results

    sdk = "paysdk-aiohttp"
    # raw aiohttp pinned against unpinned: near 1x or above, the server's own core is room enough
    ceiling = [] if cores is None else versus("aiohttp", UNPINNED, SERVER_MEASURE)
    return [
        *versus(sdk, "httpx", "paysdk aiohttp vs default httpx", Goal(">=", 10.0), cpu_too=True),
        *versus(sdk, "aiohttp", "paysdk aiohttp vs raw aiohttp", Goal(">=", 0.85), cpu_too=True),
        *versus("paysdk", "httpx", "paysdk (httpx) vs default httpx", cpu_too=True),
        *versus("paysdk-aiohttp-verify-many", "httpx", "verify_many vs default httpx"),
        *versus("aiohttp", "httpx", "raw aiohttp vs default httpx"),
        *ceiling,
    ]


# --- 4. import --------------------------------------------------------------------------------

IMPORT_BASELINE: Final = "import httpx; from pydantic import BaseModel"
IMPORT_PAYSDK: Final = "import paysdk; paysdk.Client; paysdk.AsyncClient; paysdk.VerifiedPayment"
IMPORT_ONE_MODEL: Final = (
    "import httpx\nfrom pydantic import BaseModel\n"
    "class Payment(BaseModel, defer_build=True):\n    reference: str\n"
)
"""The floor under any library with a pydantic model: defining one (its schema deferred, as
paysdk's are) imports ``pydantic.fields`` and what it imports, which the baseline never does."""


def import_time(bench: Bench) -> list[Result]:
    """A fresh ``python -c`` importing paysdk against one importing httpx and pydantic, and
    against one that also defines a single pydantic model: how much is paysdk's own."""
    pairs = bench.sizes.import_pairs
    row = "4. import"
    print(f"\n{row}: python -c, {pairs} round(s) in turn, after one warm-up run of each")
    measure = "import paysdk vs httpx + pydantic"
    commands = (IMPORT_BASELINE, IMPORT_ONE_MODEL, IMPORT_PAYSDK)
    cpu: list[list[float]] = [[], [], []]
    try:
        warm(*commands)
        base, model, sdk = interleaved(
            [functools.partial(command_seconds, code, cpu[n]) for n, code in enumerate(commands)],
            pairs,
        )
    except subprocess.CalledProcessError as exc:
        return [failed(row, measure, "-", f"python -c failed with exit status {exc.returncode}")]
    httpx_only, one_model = "python -c import httpx...", "... + one pydantic model"
    sdk_label = "python -c import paysdk..."
    return [
        *pair_results(
            row,
            measure,
            (httpx_only, sdk_label),
            Goal("<=", 1.10),
            Paired(base, sdk),
            Paired(*cpu[::2]),
        ),
        *pair_results(
            row,
            "one pydantic model vs httpx + pydantic",
            (httpx_only, one_model),
            None,
            Paired(base, model),
            roles=("baseline", "floor"),
        ),
        *pair_results(
            row,
            "import paysdk vs one pydantic model",
            (one_model, sdk_label),
            None,
            Paired(model, sdk),
            roles=("floor", "paysdk"),
        ),
    ]


def first_verify(bench: Bench) -> list[Result]:
    """Start-up to the first answer: a lazily built model must not just move the cost there."""
    pairs = bench.sizes.import_pairs
    row = "4b. import + first verify"
    print(f"\n{row}: python -c, {pairs} pair(s) alternating, after one warm-up run of each")
    base_url, key = bench.server.base_url(), bench.key
    raw = (
        "import json, httpx\nfrom pydantic import BaseModel\n"
        "with httpx.Client() as client:\n"
        f"    response = client.get({base_url + '/payment/' + REFERENCE!r},"
        f" headers={{'Authorization': 'Bearer {key}'}})\n"
        "    response.raise_for_status()\n"
        "    json.loads(response.content)\n"
    )
    sdk = (
        "import paysdk\n"
        f"with paysdk.Client(secret_key={key!r}, base_url={base_url!r}) as client:\n"
        f"    client.verify({REFERENCE!r})\n"
    )
    return compare_commands(row, "paysdk verify vs httpx get + json.loads", raw, sdk, pairs, None)


# --- 5. one sync verify -----------------------------------------------------------------------


def sync_verify(bench: Bench) -> list[Result]:
    """One verify after another on a kept-alive connection: paysdk against raw httpx."""
    calls, rounds = bench.sizes.verify_calls, bench.sizes.verify_rounds
    row = "5. sync verify, keep-alive"
    print(f"\n{row}: {rounds} rounds of {calls} calls alternating, in one fresh process")
    return paired_job(
        row,
        "Client.verify vs httpx get + json.loads",
        ("httpx get + json.loads", "paysdk Client.verify"),
        Goal("<=", 1.05),
        run=lambda: run_job(
            "sync-verify",
            base_url=bench.server.base_url(),
            key=bench.key,
            calls=calls,
            rounds=rounds,
        ),
        calls=calls,
    )


def overhead(bench: Bench) -> list[Result]:
    """paysdk's own CPU cost per verify, over httpx's in-memory transport (no network)."""
    calls, rounds = bench.sizes.verify_calls * 5, bench.sizes.verify_rounds
    row = "5b. verify, in-memory transport"
    print(f"\n{row}: {rounds} rounds of {calls} calls alternating, in one fresh process")
    return paired_job(
        row,
        "Client.verify vs httpx + json.loads",
        ("httpx get + json.loads", "paysdk Client.verify"),
        None,
        run=lambda: run_job("overhead", calls=calls, rounds=rounds),
        calls=calls,
        wall=False,
    )


ROWS: Final[dict[str, Row]] = {
    "stream-list": stream_list,
    "parse": parse,
    "async-verify": async_verify,
    "import": import_time,
    "first-verify": first_verify,
    "sync-verify": sync_verify,
    "overhead": overhead,
    "reconcile": _reconcile.reconcile,
    "wan": _wan.wan,
    "cold-start": _wan.cold_start,
}

"""A client used before a fork works in the parent and in every child, at once, over real sockets.

A forked child inherits the parent's kept-alive connections: two processes reading one socket take
each other's answers. Each run starts tests/support/fork_worker.py in a fresh interpreter, which
verifies once against the sandbox here, forks 5 children (4 call alongside it, one exits without
a call) and reports what every process got; the sandbox notes the client port of every request,
so the tests see which connection each process used. Every backend: sync httpx, async httpx,
aiohttp. The last test forks this process itself, to look at the objects a child inherited."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import gc
import json
import os
import subprocess
import sys
import threading
import warnings
import weakref
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

import aiohttp
import pytest

import paysdk
import tests
from paysdk._transport._async.pool import AsyncRoutes
from paysdk._transport.aiohttp_sender import AiohttpSender
from paysdk._transport.httpx_async import AsyncHttpxSender
from paysdk.sandbox import (
    COMPLETED,
    COMPLETED_REFERENCE,
    FAILED,
    FAILED_REFERENCE,
    PaymentRecord,
    Sandbox,
)
from tests.support.clients import sender_of, transport_of
from tests.support.fork_worker import Plan, Report, digest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the platform cannot fork")

PROCESSES = 5
"""The parent and the 4 children that call."""
SHARE = 50
"""How many references each of them verifies: none verifies another's."""
LISTS = 2
"""How many times each process lists every payment."""
REFERENCES = [f"fork-{n:04d}" for n in range(PROCESSES * SHARE + 2)]
WARM_UP, FINAL = REFERENCES[-2:]
SHARES = [REFERENCES[n * SHARE : (n + 1) * SHARE] for n in range(PROCESSES)]
EXITS: list[Literal["sys.exit", "os._exit", "idle"]] = [
    "sys.exit",
    "os._exit",
    "sys.exit",
    "os._exit",
    "idle",  # a fifth child that never calls: a worker that exits before its first request
]
START = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
T = TypeVar("T")


class Service:
    """The sandbox, and the client port each request to a path came from (its request log)."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    def verified_from(self, references: list[str]) -> set[int]:
        """The client ports the verifications of ``references`` came from."""
        paths = {f"/payment/{reference}" for reference in references}
        ports: set[int] = set()
        for request in self.sandbox.requests:
            if request.path in paths:
                assert request.client is not None
                ports.add(request.client[1])
        return ports


@dataclasses.dataclass(frozen=True)
class Run:
    """One run of the worker: the sandbox it called, its report and its stderr (children's
    included)."""

    service: Service
    report: Report
    stderr: str


@pytest.fixture(scope="module", params=["sync", "httpx", "aiohttp"])
def run(request: pytest.FixtureRequest) -> Iterator[Run]:
    """The worker run once per backend against a sandbox holding a payment for each reference,
    each with its own amount and time; the tests below read what happened."""
    payments = [
        PaymentRecord(
            reference=reference,
            amount=1000 + n,
            status=COMPLETED if n % 3 else FAILED,
            created_at=START + dt.timedelta(seconds=n),
        )
        for n, reference in enumerate(REFERENCES)
    ]
    with Sandbox(payments=payments) as sandbox:
        service = Service(sandbox)
        plan: Plan = {
            "backend": request.param,
            "base_url": sandbox.base_url,
            "secret_key": sandbox.secret_key,
            "timeout": 10,
            "warm_up": WARM_UP,
            "final": FINAL,
            "shares": [*SHARES, []],
            "lists": LISTS,
            "exits": EXITS,
        }
        report, stderr = run_worker(plan)
        yield Run(service, report, stderr)


def run_worker(plan: Plan) -> tuple[Report, str]:
    """Run tests/support/fork_worker.py on ``plan`` in a fresh interpreter that imports this
    checkout's paysdk; its report, and everything it and its children wrote to stderr."""
    paths = [str(Path(paysdk.__file__).parents[1]), str(Path(tests.__file__).parents[1])]
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    done = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-m", "tests.support.fork_worker"],
        input=json.dumps(plan),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: Report = json.loads(done.stdout)
    return report, done.stderr


def test_every_process_gets_the_answers_it_asked_for(run: Run) -> None:
    """Five processes calling at once through one client object, made and used before the fork:
    each verification returns the payment asked for, and each list every payment."""
    listed = digest([(p.reference, p.amount, p.status) for p in run.service.sandbox.payments])
    parent = run.report["parent"]
    assert parent["wrong"] == []
    assert parent["verified"] >= SHARE  # it kept calling until every child had exited
    assert parent["lists"] == [listed] * LISTS
    children = run.report["children"]
    assert [child["status"] for child in children] == [0] * len(EXITS)
    *calling, idle = children
    for child in calling:
        assert child["work"] is not None, "a child did not report"
        assert child["work"]["wrong"] == []
        assert child["work"]["verified"] == SHARE
        assert child["work"]["lists"] == [listed] * LISTS
    assert idle["work"] == {"verified": 0, "lists": [], "wrong": []}


def test_each_child_calls_over_connections_of_its_own(run: Run) -> None:
    """The sandbox saw each child's verifications come from ports no other process used: no
    child sent a request over the connection it inherited."""
    (kept,) = run.service.verified_from([WARM_UP])  # the connection open when the parent forked
    assert run.service.verified_from(SHARES[0]) == {kept}
    seen = {kept}
    for share in SHARES[1:]:
        own = run.service.verified_from(share)
        assert own, "the sandbox saw no verification from a child"
        assert not own & seen, "a child verified over a connection another process used"
        seen |= own


def test_children_that_exit_leave_the_parents_connection_working(run: Run) -> None:
    """After its children exited (three through the interpreter's finalisation, one of them
    without a call; two by ``os._exit``), the parent's next call returns, over the connection
    it had before the fork: no child closed it, cut it or took it out of the parent's loop."""
    assert run.report["final"] == "ok"
    (kept,) = run.service.verified_from([WARM_UP])
    assert run.service.verified_from([FINAL]) == {kept}


def test_no_process_writes_a_warning_or_an_error_on_its_way_out(run: Run) -> None:
    """No unclosed socket, session or loop was collected in any process, and nothing failed
    in a finaliser: the inherited connections were left alone, the children's own closed."""
    assert run.stderr == ""


# --- in this process: what a child inherited survives the child's collections -----------------


def held(client: paysdk.AsyncClient) -> object:
    """The value the client's connections live in for this process: the aiohttp session, or
    the httpx transport's pools."""
    sender = sender_of(client)
    if isinstance(sender, AiohttpSender):
        return sender._sessions.current()
    assert isinstance(sender, AsyncHttpxSender)
    routes = transport_of(client).routes
    assert isinstance(routes, AsyncRoutes)
    return routes._pools.current()


@pytest.mark.parametrize("backend", ["httpx", "aiohttp"])
def test_a_child_that_lets_go_of_the_client_collects_nothing_it_inherited(
    sandbox: Sandbox, backend: Literal["httpx", "aiohttp"]
) -> None:
    """A forked child that drops the client and collects garbage (as any child may, at exit or
    on an allocation) keeps what it inherited alive: collecting an aiohttp session closes its
    transports, which takes the parent's sockets out of the epoll instance both processes
    share. The parent's next call, which reuses its kept-alive connection, returns."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def call(coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(30)

    client = paysdk.AsyncClient(
        secret_key=sandbox.secret_key,
        base_url=sandbox.base_url,
        http_backend=backend,
        max_retries=0,
        timeout=10,
    )
    try:
        assert call(client.verify(COMPLETED_REFERENCE)).reference == COMPLETED_REFERENCE
        inherited = weakref.ref(held(client))
        with warnings.catch_warnings():
            # Python 3.12+ warns that forking with threads running (the sandbox, the loop) may
            # deadlock a child that takes a lock one of them holds; this child takes none.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            status = 3
            try:
                del client
                gc.collect()
                kept = inherited()
                status = 0 if kept is not None else 1
                if isinstance(kept, aiohttp.ClientSession) and kept.closed:
                    status = 2
            finally:
                os._exit(status)
        _, status = os.waitpid(pid, 0)
        after = call(client.verify(FAILED_REFERENCE))  # APITimeoutError if its socket was lost
        assert after.reference == FAILED_REFERENCE
        assert os.waitstatus_to_exitcode(status) == 0, "the child collected what it inherited"
    finally:
        call(client.close())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()

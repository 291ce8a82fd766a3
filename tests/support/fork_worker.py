"""A process that forks workers after its client was used, as gunicorn ``--preload`` or celery do.

Run by tests/transport/test_forks.py in a fresh interpreter (``-m tests.support.fork_worker``), so
a child that ends with ``sys.exit`` goes through the interpreter's whole finalisation (atexit, the
last collections, module teardown) as a server's worker does, and pytest is not in its stack.
Reads its :class:`Plan` as JSON on stdin; prints its :class:`Report` as JSON on stdout.

The parent verifies once (a kept-alive connection is open), forks the children, releases them all
at once, and calls alongside them; each process verifies its own share of references and lists
the payments, stopping at the first wrong answer or error (a child with no share makes no call).
The parent keeps calling until every child has exited, then calls once more over the connection
it had before the fork.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Coroutine, Sequence
from itertools import cycle
from typing import Any, Literal, TypedDict, TypeVar

import paysdk

T = TypeVar("T")

Client = paysdk.Client | paysdk.AsyncClient
WAIT = 60.0
"""How long the parent waits for its children's reports, and for any one call in its loop."""


class Plan(TypedDict):
    backend: Literal["sync", "httpx", "aiohttp"]
    base_url: str
    secret_key: str
    timeout: float
    """The client's timeout: a call whose answer another process took fails within it."""
    warm_up: str
    """Verified by the parent before the fork: it leaves a kept-alive connection open."""
    final: str
    """Verified by the parent after the children exited, over that same connection."""
    shares: list[list[str]]
    """The references each process verifies: the parent's, then each child's."""
    lists: int
    """How many times each process lists the payments, spread among its verifications."""
    exits: list[Literal["sys.exit", "os._exit", "idle"]]
    """How each child ends: ``sys.exit`` after closing its client (a worker shutting down),
    ``os._exit`` without closing anything (a worker killed, a multiprocessing target), or
    ``idle``: ``sys.exit`` without having used the client at all (its share is empty)."""


class Work(TypedDict):
    verified: int
    """How many verifications returned the payment asked for."""
    lists: list[str]
    """A digest of each list answer (:func:`digest`)."""
    wrong: list[str]
    """The first wrong answer or error, if any: the process stops there."""


class Child(TypedDict):
    status: int
    """The child's exit status, from ``waitpid`` (0: exited with 0)."""
    work: Work | None


class Report(TypedDict):
    pid: int
    parent: Work
    children: list[Child]
    final: str
    """``"ok"`` if the parent's call after the children exited returned the payment asked for;
    otherwise what happened."""


def digest(rows: Sequence[tuple[str, int, str]]) -> str:
    """What a list answer says, in short: its (reference, amount, status) rows in order."""
    return hashlib.sha256(json.dumps(list(rows)).encode()).hexdigest()


def make_client(plan: Plan) -> Client:
    options: dict[str, Any] = {
        "secret_key": plan["secret_key"],
        "base_url": plan["base_url"],
        "allow_insecure_http": True,
        "max_retries": 0,  # a retry would hide an answer another process took
        "timeout": plan["timeout"],
    }
    if plan["backend"] == "sync":
        return paysdk.Client(**options)
    return paysdk.AsyncClient(**options, http_backend=plan["backend"])


async def verify(client: Client, reference: str) -> paysdk.VerifiedPayment:
    if isinstance(client, paysdk.AsyncClient):
        return await client.verify(reference)
    return client.verify(reference)


async def listing(client: Client) -> list[paysdk.ListedPayment]:
    if isinstance(client, paysdk.AsyncClient):
        return await client.list_payments()
    return client.list_payments()


async def close(client: Client) -> None:
    if isinstance(client, paysdk.AsyncClient):
        await client.close()
    else:
        client.close()


async def work(
    client: Client, share: Sequence[str], lists: int, until: Callable[[], bool] | None = None
) -> Work:
    """Verify each reference of ``share`` in turn, listing ``lists`` times along the way; with
    ``until``, go round ``share`` again until it says to stop."""
    done: Work = {"verified": 0, "lists": [], "wrong": []}
    every = max(1, len(share) // max(1, lists))
    try:
        for index, reference in enumerate(cycle(share) if until else share):
            if until is not None and index >= len(share):
                # Its share done, the parent keeps its connection in use (lightly, well within
                # the pool's keep-alive expiry) until ``until`` says the children are done.
                if until():
                    break
                await asyncio.sleep(0.02)
            payment = await verify(client, reference)
            if payment.reference != reference:
                done["wrong"].append(f"asked {reference}, got {payment.reference}")
                break
            done["verified"] += 1
            if index % every == 0 and len(done["lists"]) < lists:
                rows = [(p.reference, p.amount, str(p.status)) for p in await listing(client)]
                done["lists"].append(digest(rows))
    except paysdk.PaySDKError as exc:
        done["wrong"].append(f"{type(exc).__name__}: {exc}")
    return done


def run_child(plan: Plan, client: Client, index: int, go: int, report: int) -> int:
    """A child's life: wait for the go, work, report; then end as ``plan["exits"]`` says."""
    os.read(go, 1)  # b"" once the parent closes its end: every child starts at once
    ending = plan["exits"][index - 1]

    async def life() -> Work:
        try:
            return await work(client, plan["shares"][index], plan["lists"])
        finally:
            if ending == "sys.exit":
                await close(client)  # in this child's loop: its own connections only

    done: Work = {"verified": 0, "lists": [], "wrong": []}
    if ending != "idle":
        done = asyncio.run(life())
    os.write(report, json.dumps(done).encode())
    os.close(report)
    if ending == "os._exit":
        os._exit(0)
    return 0  # main() returns it, and the module's caller passes it to sys.exit


class LoopThread:
    """The parent's event loop, running in a thread so it stays alive across the fork."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = WAIT) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(WAIT)
        self.loop.close()


class Children:
    """The forked children: the pipes they report on, and their exit statuses once reaped."""

    def __init__(self) -> None:
        self.pipes: dict[int, int] = {}
        """Each child's pid, and the end of its report pipe the parent reads."""
        self.statuses: dict[int, int] = {}
        self.deadline = time.monotonic() + WAIT

    def fork(self) -> int:
        """Fork a child: 0 in the child (its report pipe's end is ``self.writer``)."""
        reader, self.writer = os.pipe()
        with warnings.catch_warnings():
            # Python 3.12+ warns that forking a process with threads (the parent's event loop)
            # may deadlock a child that takes a lock another thread holds: these take none.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            os.close(reader)
        else:
            os.close(self.writer)
            self.pipes[pid] = reader
        return pid

    def exited(self) -> bool:
        """Reap the children that exited; whether all have. Past the deadline, the rest are
        killed first: no child outlives the test."""
        for pid in self.pipes.keys() - self.statuses.keys():
            reaped, status = os.waitpid(pid, os.WNOHANG)
            if reaped:
                self.statuses[pid] = status
            elif time.monotonic() > self.deadline:
                os.kill(pid, signal.SIGKILL)
                self.statuses[pid] = os.waitpid(pid, 0)[1]
        return len(self.statuses) == len(self.pipes)

    def wait(self) -> None:
        while not self.exited():
            time.sleep(0.01)

    def reports(self) -> list[Child]:
        """What each child reported (``None`` for one that did not), once all have exited."""
        children: list[Child] = []
        for pid, reader in self.pipes.items():
            data = b""
            while chunk := os.read(reader, 65536):
                data += chunk
            os.close(reader)
            children.append({"status": self.statuses[pid], "work": json.loads(data or b"null")})
        return children


def main() -> int:
    plan: Plan = json.load(sys.stdin)
    client = make_client(plan)
    loop = None if plan["backend"] == "sync" else LoopThread()

    def call(coroutine: Coroutine[Any, Any, T], timeout: float = WAIT) -> T:
        return asyncio.run(coroutine) if loop is None else loop.run(coroutine, timeout)

    call(verify(client, plan["warm_up"]))
    go, release = os.pipe()
    children = Children()
    for index in range(1, len(plan["shares"])):
        if children.fork() == 0:
            os.close(release)
            return run_child(plan, client, index, go, children.writer)
    os.close(go)
    os.close(release)  # the go: every child's read returns at once
    parent = call(work(client, plan["shares"][0], plan["lists"], until=children.exited))
    children.wait()
    try:  # bounded: the client's timeout, or the loop's if it cannot be woken any more
        payment = call(verify(client, plan["final"]), timeout=3 * plan["timeout"])
        final = "ok" if payment.reference == plan["final"] else f"got {payment.reference}"
    except Exception as exc:
        final = f"{type(exc).__name__}: {exc}"
    if final == "ok":  # otherwise the loop may be stuck: leave it to the interpreter's exit
        call(close(client))
        if loop is not None:
            loop.stop()
    report: Report = {
        "pid": os.getpid(),
        "parent": parent,
        "children": children.reports(),
        "final": final,
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A merchant's process that snapshots the interpreter's process-wide state around paysdk's calls.

Run by tests/client/test_process_state.py in a fresh interpreter (``-m tests.support.state_child``),
so the modules paysdk imports lazily are seen being imported. Reads its :class:`Plan` as JSON on
stdin; prints what changed between the two snapshots as JSON on stdout: ``{}`` when nothing did.

Before the first snapshot it does what the merchant's program does on its own: imports paysdk,
its framework helpers and the frameworks, and runs one event loop (``asyncio.run`` has lasting
effects of its own). Between the snapshots it makes clients and calls every public call, sync
and async, against the sandbox at ``base_url``, then closes them.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.metadata
import json
import logging
import os
import re
import signal
import socket
import sys
import threading
import warnings
from typing import Any, TypedDict

import flask
import starlette.applications
import starlette.requests
import starlette.responses
import starlette.routing

import paysdk
import paysdk.testing
from paysdk.integrations import fastapi as paysdk_fastapi
from paysdk.integrations import flask as paysdk_flask


class Plan(TypedDict):
    base_url: str
    secret_key: str
    reference: str
    """A completed payment of 10000 NGN."""
    payments: int
    """How many payments the sandbox lists."""
    freeze: bool
    """Whether the application froze its objects first (``gc.freeze()``, as pre-forking servers
    do): paysdk must then leave them frozen."""


def _event_loop_policy() -> object:
    with warnings.catch_warnings():  # deprecated from Python 3.14, and still what asyncio uses
        warnings.simplefilter("ignore", DeprecationWarning)
        return asyncio.get_event_loop_policy()


def _wakeup_fd() -> int:
    old = signal.set_wakeup_fd(-1)  # the only way to read it: put it straight back
    signal.set_wakeup_fd(old)
    return old


def snapshot() -> dict[str, Any]:
    """Everything process-wide a library could change and leave changed, comparable with ==."""
    gc.collect()  # CPython 3.12.0 and 3.12.1 freeze their immortal objects again at each one
    root = logging.getLogger()
    return {
        "gc.isenabled": gc.isenabled(),
        "gc.get_threshold": gc.get_threshold(),
        # frozen objects leave the count as they are freed: whether any are frozen is the state
        "gc has frozen objects": gc.get_freeze_count() > 0,
        "gc.callbacks": list(gc.callbacks),
        "signal handlers": {int(s): signal.getsignal(s) for s in signal.valid_signals()},
        "signal wakeup fd": _wakeup_fd(),
        "root logger level": root.level,
        "root logger handlers": list(root.handlers),
        "root logger filters": list(root.filters),
        "logging.disable": root.manager.disable,
        "logger class": logging.getLoggerClass(),
        "warnings.filters": list(warnings.filters),
        "warnings.showwarning": warnings.showwarning,
        "os.environ": dict(os.environ),
        "cwd": os.getcwd(),
        "sys.path": list(sys.path),
        "sys.meta_path": list(sys.meta_path),
        "sys.path_hooks": list(sys.path_hooks),
        "sys.modules": set(sys.modules),
        "sys hooks": (sys.excepthook, sys.unraisablehook, threading.excepthook),
        "sys.getrecursionlimit": sys.getrecursionlimit(),
        "sys.getswitchinterval": sys.getswitchinterval(),
        "trace and profile": (sys.gettrace(), sys.getprofile()),
        "socket default timeout": socket.getdefaulttimeout(),
        "asyncio event loop policy": _event_loop_policy(),
        "threads": {thread.name for thread in threading.enumerate()},
    }


def _dependency_modules() -> set[str]:
    """The top-level modules of paysdk's distribution and everything it requires, extras
    included: the modules paysdk may fairly import on first use. Names are compared normalized
    (PEP 503), since Python 3.10's ``importlib.metadata`` does not find ``python_paysdk`` by
    ``python-paysdk``."""

    def normal(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    installed = {normal(dist.metadata["Name"]): dist for dist in importlib.metadata.distributions()}
    wanted, seen = ["python-paysdk"], set[str]()
    while wanted:
        name = normal(re.split(r"[\s;<>=!~\[(]", wanted.pop(), maxsplit=1)[0])
        if name in seen:
            continue
        seen.add(name)
        if name in installed:  # else an extra's dependency not installed here: nothing loads
            wanted += installed[name].requires or []
    modules = {"paysdk"}
    for name in seen & installed.keys():
        modules |= _top_level_modules(installed[name])
    return modules


def _top_level_modules(dist: importlib.metadata.Distribution) -> set[str]:
    """The top-level modules a distribution installs, read from its files (Python 3.10's
    ``packages_distributions`` reads only ``top_level.txt``, which most wheels no longer have)."""
    modules = set()
    for file in dist.files or []:
        first = file.parts[0]
        if first == ".." or first.endswith((".dist-info", ".egg-info", ".data", ".pth")):
            continue
        if len(file.parts) > 1:
            modules.add(first)
        elif file.suffix in (".py", ".so", ".pyd"):
            modules.add(first.partition(".")[0])
    return modules


def changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, str]:
    """What differs, as text; new modules are fair when they are the standard library's, or
    belong to paysdk, its dependencies, or a package the application had already imported (or
    are the runtime modules of their Cython extensions: ``cython_runtime``, ``_cython_3_1_4``)."""
    fair = set(sys.stdlib_module_names) | _dependency_modules() | {"cython_runtime"}
    fair |= {name.partition(".")[0] for name in before["sys.modules"]}
    changed = {
        key: _difference(before[key], after[key])
        for key in before
        if key != "sys.modules" and before[key] != after[key]
    }
    added = {
        module
        for module in after["sys.modules"] - before["sys.modules"]
        if module.partition(".")[0] not in fair and not re.fullmatch(r"_cython_[\d_]+", module)
    }
    removed = before["sys.modules"] - after["sys.modules"]
    if added or removed:
        changed["sys.modules"] = f"added {sorted(added)}, removed {sorted(removed)}"
    return changed


def _difference(before: object, after: object) -> str:
    """How a value changed; of a mapping (the environment), only the names, never the values."""
    if isinstance(before, dict) and isinstance(after, dict):
        names = {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}
        return f"changed: {sorted(map(str, names))}"
    return f"{before!r} -> {after!r}"


def flask_app(client: paysdk.Client) -> flask.Flask:
    app = flask.Flask("shop")

    @app.get("/cb")
    @paysdk_flask.verified_callback(client, lookup=lambda _: {"amount": 10000, "currency": "NGN"})
    def paid(payment: paysdk.VerifiedPayment) -> str:
        return payment.reference

    return app


def starlette_app(client: paysdk.AsyncClient) -> starlette.applications.Starlette:
    """Also ``/close``, which closes the client on the app's own event loop."""

    @paysdk_fastapi.verified_callback(client, lookup=lambda _: {"amount": 10000, "currency": "NGN"})
    async def paid(
        payment: paysdk.VerifiedPayment, request: starlette.requests.Request
    ) -> starlette.responses.Response:
        return starlette.responses.PlainTextResponse(payment.reference)

    async def close(request: starlette.requests.Request) -> starlette.responses.Response:
        await client.close()
        return starlette.responses.PlainTextResponse("closed")

    routes = [starlette.routing.Route("/cb", paid), starlette.routing.Route("/close", close)]
    return starlette.applications.Starlette(routes=routes)


def call_sync(plan: Plan, results: list[object]) -> None:
    ref = plan["reference"]
    with paysdk.Client(base_url=plan["base_url"], secret_key=plan["secret_key"]) as client:
        results.append(client.verify(ref).reference)
        results.append(len(client.list_payments()))
        results.append(len(client.with_raw_response.list_payments().parse()))
        with client.iter_payments() as payments:
            results.append(sum(1 for _ in payments))
        results.append(client.confirm(ref, amount=10000, currency="NGN").reference)
        found = client.verify_callback(f"reference={ref}", amount=10000, currency="NGN")
        results.append(found.succeeded)
        with client.verify_many([ref, "no-such-order"], concurrency=2) as many:
            results.append([result.ok for result in many])
        with paysdk.testing.CallbackSender() as sender:
            results.append(sender.send(flask_app(client), "/cb", ref).text)


async def call_async(plan: Plan, results: list[object], backend: paysdk.HttpBackend) -> None:
    ref = plan["reference"]
    client = paysdk.AsyncClient(
        base_url=plan["base_url"], secret_key=plan["secret_key"], http_backend=backend
    )
    async with client:
        results.append((await client.verify(ref)).reference)
        results.append(len(await client.list_payments()))
        async with client.iter_payments() as payments:
            results.append(len([p async for p in payments]))
        found = await client.verify_callback(f"reference={ref}", amount=10000, currency="NGN")
        results.append(found.succeeded)
        async with client.verify_many([ref, "no-such-order"], concurrency=2) as many:
            results.append([result.ok async for result in many])
        with paysdk.testing.CallbackSender() as sender:
            results.append((await sender.asend(starlette_app(client), "/cb", ref)).text)


def call_async_app_from_sync(plan: Plan, results: list[object]) -> None:
    """The sync sender runs an ASGI app on an event loop of its own, in a thread."""
    client = paysdk.AsyncClient(base_url=plan["base_url"], secret_key=plan["secret_key"])
    with paysdk.testing.CallbackSender() as sender:
        app = starlette_app(client)
        results.append(sender.send(app, "/cb", plan["reference"]).text)
        results.append(sender.send(app, "/close", plan["reference"]).text)


def main() -> None:
    plan: Plan = json.load(sys.stdin)
    asyncio.run(asyncio.sleep(0))  # the application's own loop, once: its lasting effects
    if plan["freeze"]:
        gc.freeze()
    before = snapshot()
    results: list[object] = []
    call_sync(plan, results)
    asyncio.run(call_async(plan, results, "httpx"))
    asyncio.run(call_async(plan, results, "aiohttp"))
    call_async_app_from_sync(plan, results)
    after = snapshot()
    json.dump({"changed": changes(before, after), "results": results}, sys.stdout)


if __name__ == "__main__":
    main()

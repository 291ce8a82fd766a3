"""Process-wide state stays the application's: no call leaves the interpreter changed.

paysdk pauses the cyclic garbage collector while it parses a large list (a documented choice,
``pause_gc=False`` turns it off); everything else process-wide (the collector's state and
thresholds, signal handlers, the root logger, warnings filters, the environment, the import
path, the asyncio policy...) is checked before and after every public call, sync and async,
in a fresh interpreter (tests/support/state_child.py) so lazy imports are seen too.
"""

from __future__ import annotations

import gc
import inspect
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

import paysdk
import tests
from paysdk.sandbox import PaymentRecord, Sandbox
from tests.conftest import BASE_URL, SECRET, MakeClient, listed_body
from tests.support.state_child import Plan

pytestmark = pytest.mark.anyio

REFERENCE = "state-0000"
PAYMENTS = 4000
"""Enough for a list body past 1 MiB, which ``list_payments`` parses with the collector paused."""


@pytest.fixture(scope="module")
def big_sandbox() -> Iterator[Sandbox]:
    records = [PaymentRecord(reference=f"state-{n:04}") for n in range(PAYMENTS)]
    with Sandbox(payments=records) as running:
        yield running


def run_child(plan: Plan) -> dict[str, Any]:
    """Run tests/support/state_child.py on ``plan`` in a fresh interpreter importing this
    checkout's paysdk; its report."""
    paths = [str(Path(paysdk.__file__).parents[1]), str(Path(tests.__file__).parents[1])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    env.pop("PAYSDK_LOG", None)
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.state_child"],
        input=json.dumps(plan),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize("freeze", [False, True], ids=["plain", "app-froze-its-objects"])
def test_no_public_call_leaves_process_wide_state_changed(
    big_sandbox: Sandbox, freeze: bool
) -> None:
    body = httpx.get(
        f"{big_sandbox.base_url}/payments",
        headers={"Authorization": f"Bearer {big_sandbox.secret_key}"},
    ).content
    assert len(body) > 1024 * 1024  # so the collector is paused while the list is parsed
    plan: Plan = {
        "base_url": big_sandbox.base_url,
        "secret_key": big_sandbox.secret_key,
        "reference": REFERENCE,
        "payments": PAYMENTS,
        "freeze": freeze,
    }

    report = run_child(plan)

    assert report["changed"] == {}
    sync = [REFERENCE, PAYMENTS, PAYMENTS, PAYMENTS, REFERENCE, True, [True, False], REFERENCE]
    asynchronous = [REFERENCE, PAYMENTS, PAYMENTS, True, [True, False], REFERENCE]
    assert report["results"] == [*sync, *asynchronous, *asynchronous, REFERENCE, "closed"]


# --- pause_gc: the pause is the client's choice --------------------------------------------------


@pytest.fixture
def gc_disables(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each ``gc.disable()`` call, recorded (and carried out)."""
    calls: list[bool] = []
    real: Callable[[], None] = gc.disable

    def disable() -> None:
        calls.append(True)
        real()

    monkeypatch.setattr(gc, "disable", disable)
    return calls


LARGE_LIST = {"data": [listed_body(f"o-{n}") for n in range(3000)]}


@pytest.mark.parametrize("pause_gc", [True, False])
async def test_pause_gc_decides_whether_a_large_list_pauses_the_collector(
    make_client: MakeClient, respx_mock: respx.Router, gc_disables: list[bool], pause_gc: bool
) -> None:
    respx_mock.get(f"{BASE_URL}/payments").respond(200, json=LARGE_LIST)
    client = make_client(pause_gc=pause_gc)

    assert len(await client.list_payments()) == 3000
    assert len(gc_disables) == pause_gc
    raw = client.client.with_raw_response.list_payments()
    assert len((await raw if inspect.isawaitable(raw) else raw).parse()) == 3000
    assert len(gc_disables) == 2 * pause_gc
    assert gc.isenabled()


def test_a_copy_made_with_options_keeps_the_choice(
    respx_mock: respx.Router, gc_disables: list[bool]
) -> None:
    respx_mock.get(f"{BASE_URL}/payments").respond(200, json=LARGE_LIST)
    with paysdk.Client(secret_key=SECRET, base_url=BASE_URL, pause_gc=False) as client:
        assert len(client.with_options(max_retries=0).list_payments()) == 3000
    assert gc_disables == []


@pytest.mark.parametrize("given", [0, 1, None, "false", "False", 0.0])
@pytest.mark.parametrize("cls", [paysdk.Client, paysdk.AsyncClient])
def test_pause_gc_takes_true_or_false_only(
    cls: type[paysdk.Client] | type[paysdk.AsyncClient], given: object
) -> None:
    with pytest.raises(paysdk.ConfigurationError, match=r"^pause_gc must be True or False, not "):
        cls(secret_key=SECRET, base_url=BASE_URL, pause_gc=given)  # type: ignore[arg-type]

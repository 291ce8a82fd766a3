"""End to end: the sandbox sends real callbacks over loopback to the example merchant apps."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from fastapi.testclient import TestClient
from werkzeug.serving import make_server

import paysdk
from paysdk.sandbox import Sandbox
from tests.support.ports import unused_port

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load_example(name: str, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """Import ``examples/<name>.py`` afresh, configured by PAYSDK_* for ``sandbox``."""
    monkeypatch.setenv("PAYSDK_SECRET_KEY", sandbox.secret_key)
    monkeypatch.setenv("PAYSDK_BASE_URL", sandbox.base_url)
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclasses.dataclass(frozen=True)
class Merchant:
    """A running example app: its module (ORDERS, FULFILLED) and its callback URL."""

    example: ModuleType
    callback_url: str

    @property
    def fulfilled(self) -> list[str]:
        fulfilled: list[str] = self.example.FULFILLED
        return fulfilled


@pytest.fixture
def flask_merchant(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Merchant]:
    """The Flask example app, served by a real WSGI server on a free loopback port."""
    monkeypatch.setenv("LEDGER_URL", f"sqlite:///{tmp_path / 'fulfilments.db'}")
    example = load_example("flask_callback", sandbox, monkeypatch)
    server = make_server("127.0.0.1", 0, example.app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield Merchant(example, f"http://127.0.0.1:{server.server_port}/payments/callback")
    server.shutdown()
    thread.join()
    example.client.close()
    example.ledger.close()


def test_a_callback_sent_twice_is_fulfilled_once(
    sandbox: Sandbox, flask_merchant: Merchant
) -> None:
    first = sandbox.send_callback(flask_merchant.callback_url, "order-1042")
    second = sandbox.send_callback(flask_merchant.callback_url, "order-1042")
    assert (first.status_code, second.status_code) == (200, 200)
    assert flask_merchant.fulfilled == ["order-1042"]
    verified = [request.path for request in sandbox.requests]
    assert verified == ["/payment/order-1042", "/payment/order-1042"]


def test_spoofed_callbacks_ship_nothing(sandbox: Sandbox, flask_merchant: Merchant) -> None:
    sandbox.add_payment("order-9001", amount=1, currency="NGN")  # paid, but not an order
    answers = {
        reference: sandbox.send_callback(flask_merchant.callback_url, reference).status_code
        for reference in ["order-1043", "order-9001", "order-0000"]
    }
    assert answers == {"order-1043": 200, "order-9001": 404, "order-0000": 404}
    assert flask_merchant.fulfilled == []
    assert [request.path for request in sandbox.requests] == ["/payment/order-1043"]


def test_a_paid_order_with_the_wrong_amount_is_not_shipped(
    sandbox: Sandbox, flask_merchant: Merchant
) -> None:
    sandbox.add_payment("order-1042", amount=100, currency="NGN")  # not the order's 2_500_000
    answer = sandbox.send_callback(flask_merchant.callback_url, "order-1042")
    assert (answer.status_code, json.loads(answer.body)) == (409, {"status": "mismatch"})
    assert flask_merchant.fulfilled == []


def test_a_view_answering_5xx_is_not_recorded_and_the_retry_ships_it(
    sandbox: Sandbox, flask_merchant: Merchant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(flask_merchant.example, "WAREHOUSE_OPEN", False)
    closed = sandbox.send_callback(flask_merchant.callback_url, "order-1042")
    row = flask_merchant.example.ledger.row("order-1042")
    monkeypatch.setattr(flask_merchant.example, "WAREHOUSE_OPEN", True)
    retried = [sandbox.send_callback(flask_merchant.callback_url, "order-1042") for _ in range(2)]
    assert (closed.status_code, json.loads(closed.body)) == (503, {"status": "warehouse_closed"})
    assert row is not None and row.state == "released"
    assert [(answer.status_code, json.loads(answer.body)) for answer in retried] == [
        (200, {"status": "ok"}),
        (200, {"status": "already_fulfilled"}),
    ]
    assert flask_merchant.fulfilled == ["order-1042"]


def test_refusals_are_recorded_in_the_ledger_with_why(
    sandbox: Sandbox, flask_merchant: Merchant
) -> None:
    flask_merchant.example.OUT_OF_STOCK.add("order-1042")
    out_of_stock = sandbox.send_callback(flask_merchant.callback_url, "order-1042")
    failed = sandbox.send_callback(flask_merchant.callback_url, "order-1043")
    rows = flask_merchant.example.ledger.rows(["order-1042", "order-1043"])
    assert (out_of_stock.status_code, failed.status_code) == (409, 200)
    assert {ref: (row.state, row.reason) for ref, row in rows.items()} == {
        "order-1042": ("refused", 'the callback view answered 409: {"status":"out_of_stock"}'),
        "order-1043": ("refused", "the service reports the payment failed"),
    }
    assert flask_merchant.fulfilled == []


def test_the_fastapi_example_fulfils_once(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    example = load_example("fastapi_callback", sandbox, monkeypatch)
    with TestClient(example.app) as browser:
        answers = [browser.get("/payments/callback?reference=order-1042") for _ in range(2)]
        failed = browser.get("/payments/callback?reference=order-1043")
    assert [answer.status_code for answer in answers] == [200, 200]
    assert (failed.status_code, failed.json()) == (200, {"status": "failed"})
    assert example.FULFILLED == ["order-1042"]


def test_the_fastapi_example_closes_its_client_when_the_app_stops(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    example = load_example("fastapi_callback", sandbox, monkeypatch)
    with TestClient(example.app) as browser:
        assert browser.get("/payments/callback?reference=order-1042").status_code == 200
    with pytest.raises(paysdk.ClientClosedError):
        asyncio.run(example.client.verify("order-1042"))


DJANGO_EXAMPLE_AT_WORK = """
import importlib.util, json, sys

import django
from django.test import Client

spec = importlib.util.spec_from_file_location("django_callback", sys.argv[1])
example = importlib.util.module_from_spec(spec)
sys.modules["django_callback"] = example  # its settings name it as the URLconf
spec.loader.exec_module(example)
django.setup()
browser = Client()
answers = [browser.get("/payments/callback?reference=" + ref) for ref in sys.argv[2:]]
print(json.dumps([[a.status_code, json.loads(a.content)] for a in answers]))
print(json.dumps(example.FULFILLED))
example.client.close()
"""


def test_the_django_example_fulfils_a_paid_order_once(sandbox: Sandbox) -> None:
    """In a process of its own: the example configures Django's settings, once per process."""
    env = os.environ | {
        "PAYSDK_SECRET_KEY": sandbox.secret_key,
        "PAYSDK_BASE_URL": sandbox.base_url,
    }
    references = ["order-1042", "order-1042", "order-1043", "order-0000"]
    example = str(EXAMPLES / "django_callback.py")
    done = subprocess.run(
        [sys.executable, "-c", DJANGO_EXAMPLE_AT_WORK, example, *references],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers, fulfilled = (json.loads(line) for line in done.stdout.splitlines())
    assert answers == [
        [200, {"status": "ok"}],
        [200, {"status": "ok"}],
        [200, {"status": "failed"}],
        [404, {"status": "unknown_order"}],
    ]
    assert fulfilled == ["order-1042"]


def listens(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
        return True
    return False


@pytest.mark.parametrize("example", ["flask_callback", "django_callback", "fastapi_callback"])
def test_each_callback_example_serves_on_the_port_given_by_PORT(
    example: str, sandbox: Sandbox, tmp_path: Path
) -> None:
    """Run as the docs say (``python examples/NAME.py``), with ``PORT`` set: the sandbox's
    callback reaches it there."""
    port = unused_port()
    env = os.environ | {
        "PAYSDK_SECRET_KEY": sandbox.secret_key,
        "PAYSDK_BASE_URL": sandbox.base_url,
        "PORT": str(port),
        "LEDGER_URL": f"sqlite:///{tmp_path / 'fulfilments.db'}",
    }
    log = tmp_path / "log"
    with log.open("w") as output:
        app = subprocess.Popen(
            [sys.executable, str(EXAMPLES / f"{example}.py")],
            cwd=tmp_path, env=env, stdout=output, stderr=output, start_new_session=True,
        )  # fmt: skip
    try:
        for _ in range(600):
            if listens(port) or app.poll() is not None:
                break
            time.sleep(0.1)
        assert listens(port), f"{example} is not listening on PORT={port}:\n{log.read_text()}"
        answer = sandbox.send_callback(f"http://127.0.0.1:{port}/payments/callback", "order-1042")
        assert (answer.status_code, json.loads(answer.body)) == (200, {"status": "ok"})
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(app.pid, signal.SIGKILL)
        app.wait(timeout=30)

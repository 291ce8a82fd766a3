"""Fixtures of the command-line tests that run ``paysdk sandbox`` and ``paysdk pay``
(``tests/cli/sandbox_cli.py``)."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from werkzeug.serving import make_server

import paysdk
from paysdk.cli._background import alive
from paysdk.integrations.flask import verified_callback
from tests.cli.sandbox_cli import KEY, Merchant, Paysdk
from tests.support.ports import unused_port


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Paysdk]:
    """The command, and at the end every sandbox it left running stopped (killed if need be)."""
    runtime = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    paysdk_ = Paysdk(runtime, {**env, "PAYSDK_SANDBOX_DIR": str(runtime)})
    yield paysdk_
    for pid_file in runtime.glob("sandbox-*.pid"):
        pid = json.loads(pid_file.read_text())["pid"]
        if type(pid) is int and pid > 0 and alive(pid):  # 0 or -1 would be a group, or all
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def port() -> int:
    """A free port for the test's sandbox."""
    return unused_port()


@pytest.fixture
def merchant(port: int) -> Iterator[Merchant]:
    orders = {
        "order-1042": {"amount": 2_500_000, "currency": "NGN"},
        "order-1043": {"amount": 4_999, "currency": "USD"},
        "order-7": {"amount": 500, "currency": "USD"},
    }
    fulfilled: list[str] = []
    failed: list[str] = []
    client = paysdk.Client(secret_key=KEY, base_url=f"http://127.0.0.1:{port}")
    app = Flask(__name__)

    def on_failed(error: paysdk.PaymentFailedError) -> None:
        failed.append(error.reference)

    @app.get("/payments/callback")
    @verified_callback(client, lookup=orders.get, on_failed=on_failed)
    def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        fulfilled.append(payment.reference)
        return {"status": "ok"}

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Merchant(
            f"http://127.0.0.1:{server.server_port}/payments/callback", fulfilled, failed
        )
    finally:
        server.shutdown()
        thread.join()
        client.close()

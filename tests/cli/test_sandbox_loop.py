"""The callback loop in one command, over real processes: ``paysdk sandbox --detach`` in the
background, ``paysdk pay`` delivering to a merchant's Flask app on a real server on 127.0.0.1,
``paysdk sandbox stop`` and ``status``, and the state file across restarts."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from flask import Flask
from werkzeug.serving import make_server

import paysdk
from paysdk.cli._background import alive
from paysdk.integrations.flask import verified_callback

KEY = "sk_sandbox_loop_test"


@dataclass
class Paysdk:
    """Runs ``python -m paysdk ...`` with its own runtime directory and no PAYSDK_ variables."""

    runtime: Path
    env: dict[str, str] = field(default_factory=dict[str, str])

    def __call__(self, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "paysdk", *argv],
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def pid_file(self, port: int) -> Path:
        return self.runtime / f"sandbox-{port}.pid"

    def pid(self, port: int) -> int:
        pid: int = json.loads(self.pid_file(port).read_text())["pid"]
        return pid

    def start(self, port: int, *argv: str) -> subprocess.CompletedProcess[str]:
        done = self("sandbox", "--detach", "--port", str(port), "--key", KEY, *argv)
        assert done.returncode == 0, done.stderr
        return done


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Paysdk]:
    """The command, and at the end every sandbox it left running stopped (killed if need be)."""
    runtime = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    paysdk_ = Paysdk(runtime, {**env, "PAYSDK_SANDBOX_DIR": str(runtime)})
    yield paysdk_
    for pid_file in runtime.glob("sandbox-*.pid"):
        pid = json.loads(pid_file.read_text())["pid"]
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return True
    except ConnectionRefusedError:
        return False


@pytest.fixture
def port() -> int:
    """A free port for the test's sandbox."""
    return free_port()


@dataclass
class Merchant:
    """A merchant's Flask callback view (``verified_callback``) on a real server, its client
    pointed at the test's sandbox: what it fulfilled, and which payments it saw failed."""

    url: str
    fulfilled: list[str]
    failed: list[str]


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


def pay(cli: Paysdk, port: int, *argv: str) -> subprocess.CompletedProcess[str]:
    """``paysdk pay ...`` against the sandbox on ``port``, found through the environment."""
    return cli("pay", *argv, PAYSDK_BASE_URL=f"http://127.0.0.1:{port}", PAYSDK_SECRET_KEY=KEY)


# --- the loop ---------------------------------------------------------------------------------


def test_detach_pay_and_stop(cli: Paysdk, port: int, merchant: Merchant, tmp_path: Path) -> None:
    started = cli.start(port, "--state", str(tmp_path / "state.json"))
    assert started.stdout == (
        f"export PAYSDK_BASE_URL=http://127.0.0.1:{port}\nexport PAYSDK_SECRET_KEY={KEY}\n"
    )
    assert f"pid file: {cli.pid_file(port)}" in started.stderr
    assert f"log: {cli.runtime / f'sandbox-{port}.log'}" in started.stderr
    assert listening(port)

    paid = pay(cli, port, "order-7", "--amount", "500", "--currency", "USD",
               "--callback", merchant.url)  # fmt: skip
    assert (paid.returncode, paid.stderr) == (0, "")
    assert paid.stdout.splitlines() == [
        f"paid: order-7 500 USD (COMPLETED) at http://127.0.0.1:{port}",
        f"callback: GET {merchant.url}?reference=order-7 -> 200",
        '{"status":"ok"}',
    ]
    assert merchant.fulfilled == ["order-7"]

    stopped = cli("sandbox", "stop", "--port", str(port))
    assert stopped.returncode == 0
    assert f"stopped the sandbox on port {port}" in stopped.stderr
    assert not listening(port)
    assert not cli.pid_file(port).exists()


def test_the_state_survives_stop_and_start(
    cli: Paysdk, port: int, merchant: Merchant, tmp_path: Path
) -> None:
    state = tmp_path / "state.json"
    cli.start(port, "--state", str(state))
    paid = pay(cli, port, "order-7", "--amount", "500", "--currency", "USD",
               "--callback", merchant.url)  # fmt: skip
    assert paid.returncode == 0
    assert cli("sandbox", "stop", "--port", str(port)).returncode == 0
    cli.start(port, "--state", str(state))
    with paysdk.Client(secret_key=KEY, base_url=f"http://127.0.0.1:{port}") as client:
        payment = client.verify("order-7")
    assert (payment.succeeded, payment.amount, payment.currency) == (True, 500, "USD")


def test_fail_makes_a_failed_payment_the_merchants_verify_sees_failed(
    cli: Paysdk, port: int, merchant: Merchant
) -> None:
    cli.start(port)
    paid = pay(cli, port, "order-7", "--amount", "500", "--currency", "USD",
               "--callback", merchant.url, "--fail")  # fmt: skip
    assert paid.returncode == 0  # the handler answered 200: it took the news
    assert "paid: order-7 500 USD (FAILED)" in paid.stdout
    assert '{"status":"failed"}' in paid.stdout
    assert (merchant.failed, merchant.fulfilled) == (["order-7"], [])


def test_a_handler_answering_other_than_2xx_exits_1_and_shows_its_answer(
    cli: Paysdk, port: int, merchant: Merchant
) -> None:
    cli.start(port)
    paid = pay(cli, port, "order-7", "--amount", "499", "--currency", "USD",
               "--callback", merchant.url)  # fmt: skip
    assert paid.returncode == 1
    assert f"callback: GET {merchant.url}?reference=order-7 -> 409" in paid.stdout
    assert '{"status":"mismatch"}' in paid.stdout
    assert merchant.fulfilled == []


def test_a_handler_that_cannot_be_reached_exits_3(cli: Paysdk, port: int) -> None:
    cli.start(port)
    nobody = f"http://127.0.0.1:{free_port()}/cb"
    paid = pay(cli, port, "order-7", "--amount", "5", "--currency", "USD", "--callback", nobody)
    assert paid.returncode == 3
    assert f"callback to {nobody}?reference=order-7 failed" in paid.stderr


def test_pay_without_a_running_sandbox_exits_3_saying_how_to_start_one(
    cli: Paysdk, port: int
) -> None:
    paid = pay(cli, port, "order-7", "--amount", "5", "--currency", "USD",
               "--callback", "http://127.0.0.1:9/cb")  # fmt: skip
    assert paid.returncode == 3
    assert f"no sandbox answered at http://127.0.0.1:{port}" in paid.stderr
    assert "paysdk sandbox --detach" in paid.stderr


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("--callback", "ftp://127.0.0.1/cb"), "--callback: callback URL must be"),
        (("--callback", "http://127.0.0.1:9/cb", "--amount", "-5"), "amount must be a non-neg"),
        (("--callback", "http://127.0.0.1:9/cb", "--callback-timeout", "61"), "at most 60"),
    ],
)
def test_pay_usage_errors_exit_2(cli: Paysdk, port: int, argv: tuple[str, ...], says: str) -> None:
    cli.start(port)
    paid = pay(cli, port, "order-7", "--amount", "5", "--currency", "USD", *argv)
    assert paid.returncode == 2
    assert says in paid.stderr


def test_pay_with_the_wrong_key_exits_2(cli: Paysdk, port: int) -> None:
    cli.start(port)
    paid = pay(cli, port, "order-7", "--amount", "5", "--currency", "USD",
               "--callback", "http://127.0.0.1:9/cb", "--secret-key", "sk_wrong")  # fmt: skip
    assert paid.returncode == 2
    assert "refused the secret key" in paid.stderr
    assert "sk_wrong" not in paid.stderr + paid.stdout


# --- starting, stopping, status ---------------------------------------------------------------


def test_a_second_sandbox_on_the_same_port_is_refused(cli: Paysdk, port: int) -> None:
    cli.start(port)
    again = cli("sandbox", "--detach", "--port", str(port))
    assert again.returncode == 2
    assert f"a sandbox is already running on port {port} (pid {cli.pid(port)}" in again.stderr
    assert f"paysdk sandbox stop --port {port}" in again.stderr


def test_a_port_in_use_by_another_program_is_an_error_and_leaves_no_pid_file(
    cli: Paysdk,
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = cli("sandbox", "--detach", "--port", str(port))
    assert done.returncode == 2
    assert f"the sandbox did not start: cannot listen on 127.0.0.1:{port}" in done.stderr
    assert not cli.pid_file(port).exists()


def test_stop_after_the_sandbox_died_removes_its_stale_pid_file(cli: Paysdk, port: int) -> None:
    cli.start(port)
    pid = cli.pid(port)
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    status = cli("sandbox", "status", "--port", str(port))
    assert status.returncode == 1
    assert f"port {port}: not running (stale pid file" in status.stdout
    stopped = cli("sandbox", "stop", "--port", str(port))
    assert stopped.returncode == 0
    assert f"the sandbox on port {port} (pid {pid}) was not running" in stopped.stderr
    assert not cli.pid_file(port).exists()
    assert cli("sandbox", "stop", "--port", str(port)).returncode == 0  # nothing left to stop


def test_stop_never_signals_a_live_process_that_is_not_the_sandbox(cli: Paysdk, port: int) -> None:
    cli.runtime.mkdir()
    record = {"pid": os.getpid(), "port": port, "base_url": f"http://127.0.0.1:{port}",
              "secret_key": KEY, "log": ""}  # fmt: skip
    cli.pid_file(port).write_text(json.dumps(record))
    stopped = cli("sandbox", "stop", "--port", str(port))
    assert stopped.returncode == 1
    assert f"pid {os.getpid()} is running but no sandbox answers for it" in stopped.stderr
    assert cli.pid_file(port).exists()  # left for the user to look into
    cli.pid_file(port).unlink()  # so that the fixture does not stop this process


def test_status_and_stop_find_the_only_sandbox_and_its_port_from_the_environment(
    cli: Paysdk, port: int
) -> None:
    started = cli("sandbox", "--detach", PAYSDK_SANDBOX_PORT=str(port),
                  PAYSDK_SANDBOX_SECRET_KEY=KEY)  # fmt: skip
    assert started.returncode == 0
    assert started.stdout.splitlines() == [
        f"export PAYSDK_BASE_URL=http://127.0.0.1:{port}",
        f"export PAYSDK_SECRET_KEY={KEY}",
    ]
    status = cli("sandbox", "status")
    assert status.returncode == 0
    assert status.stdout.startswith(f"port {port}: running, pid {cli.pid(port)}, ")
    assert cli("sandbox", "stop").returncode == 0
    assert cli("sandbox", "status").returncode == 1


def test_a_corrupt_state_file_is_an_error_naming_it(cli: Paysdk, port: int, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text("[{")
    for argv in (("--detach", "--port", str(port)), ("--port", str(port))):
        done = cli("sandbox", *argv, "--state", str(state))
        assert done.returncode == 2
        assert f"the state file {str(state)!r}: not valid JSON" in done.stderr
    assert not cli.pid_file(port).exists()


# --- the walkthrough of docs/sandbox.md -------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def walkthrough() -> str:
    """The shell block of docs/sandbox.md's "A callback loop in one command"."""
    page = (ROOT / "docs" / "sandbox.md").read_text(encoding="utf-8")
    section = page.split("## A callback loop in one command\n", 1)[1]
    return section.split("```sh\n", 1)[1].split("```", 1)[0]


def test_the_walkthrough_of_the_docs_runs_as_written(
    cli: Paysdk, port: int, tmp_path: Path
) -> None:
    app_port = free_port()
    script = (
        walkthrough()
        .replace("8321", str(port))
        .replace("8000", str(app_port))
        .replace(".paysdk-sandbox.json", str(tmp_path / "state.json"))
    )
    wait_for_app = (
        f"for _ in $(seq 600); do (exec 3<>/dev/tcp/127.0.0.1/{app_port}) 2>/dev/null && break;"
        " sleep 0.1; done"
    )
    lines = [
        line + ("\n" + wait_for_app if line.endswith("&") else "") for line in script.splitlines()
    ]
    bin_dir = tmp_path / "bin"  # `python` and `paysdk` as the docs mean them: this Python's
    bin_dir.mkdir()
    for name, command in [("python", ""), ("paysdk", " -m paysdk")]:
        (bin_dir / name).write_text(f'#!/bin/sh\nexec "{sys.executable}"{command} "$@"\n')
        (bin_dir / name).chmod(0o755)
    env = {
        **cli.env,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "LEDGER_URL": f"sqlite:///{tmp_path / 'fulfilments.db'}",  # a fresh ledger each run
    }
    preamble = ["set -e", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"]
    done = subprocess.run(
        ["bash", "-c", "\n".join([*preamble, *lines])],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    ours = [line for line in done.stdout.splitlines() if not line.startswith(" * ")]  # Flask's
    callback = f"callback: GET http://127.0.0.1:{app_port}/payments/callback?reference="
    assert ours[:6] == [
        f"paid: order-1042 2500000 NGN (COMPLETED) at http://127.0.0.1:{port}",
        f"{callback}order-1042 -> 200",
        '{"status":"ok"}',
        f"paid: order-1043 4999 USD (FAILED) at http://127.0.0.1:{port}",
        f"{callback}order-1043 -> 200",
        '{"status":"failed"}',
    ]
    assert ours[6].startswith(f"port {port}: running, pid ")
    assert f"stopped the sandbox on port {port}" in done.stderr
    assert not listening(port)
    saved = json.loads((tmp_path / "state.json").read_text())
    assert {"order-1042", "order-1043"} <= {record["reference"] for record in saved}


# --- pay finds the detached sandbox -----------------------------------------------------------


def test_pay_without_a_base_url_pays_in_the_only_detached_sandbox(
    cli: Paysdk, port: int, merchant: Merchant
) -> None:
    cli.start(port)
    paid = cli("pay", "order-7", "--amount", "500", "--currency", "USD", "--callback", merchant.url)
    assert (paid.returncode, paid.stderr) == (0, "")
    assert paid.stdout.splitlines()[0] == (
        f"paid: order-7 500 USD (COMPLETED) at http://127.0.0.1:{port}"
    )
    assert merchant.fulfilled == ["order-7"]


def test_pay_without_a_base_url_and_two_detached_sandboxes_asks_which(
    cli: Paysdk, port: int
) -> None:
    other = free_port()
    cli.start(port)
    cli.start(other)
    paid = cli("pay", "order-7", "--amount", "5", "--currency", "USD",
               "--callback", "http://127.0.0.1:9/cb")  # fmt: skip
    assert paid.returncode == 2
    assert "choose one with --base-url" in paid.stderr
    assert f"http://127.0.0.1:{port}" in paid.stderr
    assert f"http://127.0.0.1:{other}" in paid.stderr


def test_pay_without_a_base_url_or_a_detached_sandbox_says_how_to_start_one(cli: Paysdk) -> None:
    paid = cli("pay", "order-7", "--amount", "5", "--currency", "USD",
               "--callback", "http://127.0.0.1:9/cb")  # fmt: skip
    assert paid.returncode == 2
    assert "paysdk sandbox --detach" in paid.stderr
    assert "--base-url" in paid.stderr


def readme_pay_command() -> list[str]:
    """The README's ``paysdk pay ...`` command, as its words."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = readme.split("`paysdk pay ", 1)[1].split("`", 1)[0]
    return ["pay", *command.split()]


def test_the_readme_pay_command_runs_as_written_against_the_flask_example(
    cli: Paysdk, port: int, tmp_path: Path
) -> None:
    app_port = free_port()
    cli.start(port)
    app = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "flask_callback.py")],
        env={**cli.env, "PORT": str(app_port), "PAYSDK_BASE_URL": f"http://127.0.0.1:{port}",
             "PAYSDK_SECRET_KEY": KEY, "LEDGER_URL": f"sqlite:///{tmp_path / 'ledger.db'}"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not listening(app_port):
            assert time.monotonic() < deadline, "the Flask example did not start"
            time.sleep(0.1)
        argv = [word.replace("8000", str(app_port)) for word in readme_pay_command()]
        paid = cli(*argv)
    finally:
        app.terminate()
        app.wait(timeout=30)
    assert (paid.returncode, paid.stderr) == (0, "")
    assert paid.stdout.splitlines()[1:] == [
        f"callback: GET http://127.0.0.1:{app_port}/payments/callback?reference={argv[1]} -> 200",
        '{"status":"ok"}',
    ]


# --- what pay records -------------------------------------------------------------------------


@pytest.mark.parametrize("currency", ["DOLLARS", "US", "U$D", "ÜSD", "US1", ""])
def test_pay_refuses_a_currency_that_is_not_three_ascii_letters(
    cli: Paysdk, port: int, currency: str
) -> None:
    cli.start(port)
    paid = pay(cli, port, "order-7", "--amount", "5", "--currency", currency,
               "--callback", "http://127.0.0.1:9/cb")  # fmt: skip
    assert paid.returncode == 2
    assert "expected a currency code of three letters such as NGN or USD" in paid.stderr
    client = paysdk.Client(secret_key=KEY, base_url=f"http://127.0.0.1:{port}")
    with client, pytest.raises(paysdk.PaymentNotFoundError):
        client.verify("order-7")


def test_pay_takes_a_lower_case_currency_in_upper_case(
    cli: Paysdk, port: int, merchant: Merchant
) -> None:
    cli.start(port)
    paid = pay(cli, port, "order-7", "--amount", "500", "--currency", "usd",
               "--callback", merchant.url)  # fmt: skip
    assert (paid.returncode, paid.stderr) == (0, "")
    assert paid.stdout.startswith("paid: order-7 500 USD (COMPLETED)")
    assert merchant.fulfilled == ["order-7"]


def test_pay_replaces_a_payment_the_sandbox_holds_only_when_told(
    cli: Paysdk, port: int, merchant: Merchant
) -> None:
    cli.start(port)  # seeded: order-1042, 2500000 NGN, completed
    argv = ("order-1042", "--amount", "5", "--currency", "NGN", "--callback", merchant.url)
    paid = pay(cli, port, *argv, "--fail")
    assert (paid.returncode, paid.stdout) == (2, "")
    assert "already holds a payment for 'order-1042': pass --replace" in paid.stderr
    with paysdk.Client(secret_key=KEY, base_url=f"http://127.0.0.1:{port}") as client:
        kept = client.verify("order-1042")
        assert (kept.succeeded, kept.amount) == (True, 2_500_000)
        assert merchant.failed == []  # no callback was sent

        replaced = pay(cli, port, *argv, "--fail", "--replace")
        assert replaced.returncode == 0, replaced.stderr
        now = client.verify("order-1042")
        assert (now.succeeded, now.amount) == (False, 5)
    assert merchant.failed == ["order-1042"]

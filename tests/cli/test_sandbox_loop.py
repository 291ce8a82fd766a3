"""The callback loop in one command, over real processes: ``paysdk sandbox --detach`` in the
background, ``paysdk pay`` delivering to a merchant's Flask app on a real server on 127.0.0.1,
and docs/sandbox.md's walkthrough as written."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import paysdk
from tests.cli.sandbox_cli import KEY, ROOT, Merchant, Paysdk, listening, pay
from tests.support.ports import unused_port

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


def test_a_sandbox_that_cannot_save_its_state_says_why_and_exits_3(
    cli: Paysdk, port: int, merchant: Merchant, tmp_path: Path
) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    cli.start(port, "--state", str(kept / "state.json"))
    kept.rmdir()  # the state file's directory is gone: the sandbox cannot write its state
    paid = pay(cli, port, "order-7", "--amount", "500", "--currency", "USD",
               "--callback", merchant.url)  # fmt: skip
    assert (paid.returncode, paid.stdout) == (3, "")  # its 500: nothing paid, try again later
    assert paid.stderr.startswith(
        f"paysdk: error: the sandbox at http://127.0.0.1:{port} failed: cannot write the state "
        f"file {str(kept / 'state.json')!r}"
    )
    assert paid.stderr.count("\n") == 1
    assert merchant.fulfilled == []


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
    nobody = f"http://127.0.0.1:{unused_port()}/cb"
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


@pytest.mark.parametrize("timeout", ["86400.5", "10000000000", "100000"])
def test_a_pay_timeout_past_a_day_is_a_usage_error_before_anything_is_sent(
    cli: Paysdk, port: int, merchant: Merchant, timeout: str
) -> None:
    cli.start(port)
    paid = pay(cli, port, "order-7", "--amount", "500", "--currency", "USD",
               "--callback", merchant.url, "--timeout", timeout)  # fmt: skip
    assert (paid.returncode, paid.stdout) == (2, "")
    assert paid.stderr == (
        "paysdk: error: --timeout must be more than 0 and at most 86400 seconds, got "
        f"{float(timeout)!r}\n"
    )
    assert merchant.fulfilled == []


def test_pay_with_the_wrong_key_exits_2(cli: Paysdk, port: int) -> None:
    cli.start(port)
    paid = pay(cli, port, "order-7", "--amount", "5", "--currency", "USD",
               "--callback", "http://127.0.0.1:9/cb", "--secret-key", "sk_wrong")  # fmt: skip
    assert paid.returncode == 2
    assert "refused the secret key" in paid.stderr
    assert "sk_wrong" not in paid.stderr + paid.stdout


# --- the walkthrough of docs/sandbox.md -------------------------------------------------------


def walkthrough() -> str:
    """The shell block of docs/sandbox.md's "A callback loop in one command"."""
    page = (ROOT / "docs" / "sandbox.md").read_text(encoding="utf-8")
    section = page.split("## A callback loop in one command\n", 1)[1]
    blocks = [block.split("```", 1)[0] for block in section.split("```sh\n")[1:]]
    (loop,) = [block for block in blocks if "paysdk sandbox --detach" in block]
    return loop


def test_the_walkthrough_of_the_docs_runs_as_written(
    cli: Paysdk, port: int, tmp_path: Path
) -> None:
    """The block pasted whole into ``sh``: nothing added to it (no wait for the app, which the
    block does itself), only its two ports and its state file moved so that runs in parallel
    never meet."""
    app_port = unused_port()
    written = walkthrough()
    moved = {"8321": str(port), "8000": str(app_port), ".paysdk-sandbox.json": f"{tmp_path}/s.json"}
    script = written
    for old, new in moved.items():
        script = script.replace(old, new)
    back = script
    for old, new in moved.items():
        back = back.replace(new, old)
    assert back == written  # only those were changed
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
    # Its output to files, not pipes: an app the block failed to stop would hold a pipe open.
    # The block and all it started are a process group of their own, ended after it.
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("w") as stdout, err.open("w") as stderr:
        block = subprocess.Popen(
            ["sh", "-c", script], cwd=ROOT, env=env, stdout=stdout, stderr=stderr,
            start_new_session=True,
        )  # fmt: skip
        try:
            returncode = block.wait(timeout=120)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(block.pid, signal.SIGKILL)
    done = subprocess.CompletedProcess(block.args, returncode, out.read_text(), err.read_text())
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
    assert not listening(app_port), "the block left the app running"
    saved = json.loads((tmp_path / "s.json").read_text())
    assert {"order-1042", "order-1043"} <= {record["reference"] for record in saved}

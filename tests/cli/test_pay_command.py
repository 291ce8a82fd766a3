"""``paysdk pay`` against a detached sandbox over real processes: finding the sandbox without a
base URL, the README's command against the Flask example, and what it records."""

from __future__ import annotations

import contextlib
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from werkzeug.serving import make_server

import paysdk
from paysdk.cli._pay import HELPER_ERROR, HELPER_RETRY_LATER, _why_not_taken
from paysdk.integrations.flask import verified_callback
from tests.cli.sandbox_cli import KEY, ROOT, Merchant, Paysdk, listening, pay
from tests.support.ports import unused_port

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
    other = unused_port()
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


def test_pay_to_a_base_url_holding_the_key_is_refused_without_showing_it(cli: Paysdk) -> None:
    """``pay`` names its base URL in every message: one holding the key is refused, as a
    client refuses it, before anything is sent, and the key is shown nowhere."""
    key = "sk_test_pasted_key_42"
    paid = cli("pay", "order-7", "--amount", "5", "--currency", "USD",
               "--callback", "http://127.0.0.1:9/cb", "--secret-key", key,
               "--base-url", f"http://127.0.0.1:{unused_port()}/{key}")  # fmt: skip
    assert (paid.returncode, paid.stdout) == (2, "")
    assert "base_url contains the secret key" in paid.stderr
    assert key not in paid.stderr


def readme_pay_command() -> list[str]:
    """The README's ``paysdk pay ...`` command, as its words."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = readme.split("`paysdk pay ", 1)[1].split("`", 1)[0]
    return ["pay", *command.split()]


def test_the_readme_pay_command_runs_as_written_against_the_flask_example(
    cli: Paysdk, port: int, tmp_path: Path
) -> None:
    app_port = unused_port()
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


@pytest.mark.parametrize(
    "url",
    [
        "http://u:s3cret@[bad/cb",  # an unclosed IPv6 bracket
        "http://u:s3cret@host:99999/cb",
        "http://u:s3cret@host:abc/cb",
        "http://u:s3cret@ho st/cb",
        "http://u:s3cret@xn--zz/cb",
        "ftp://u:s3cret@host/cb",
        "http:u:s3cret@host/cb",
        "http://u:s3\tcret@host:99999/cb",  # a tab, which URL parsers drop
        "http://a@b:s3cret@host:99999/cb",  # the user info's last "@" ends the password
    ],
)
@pytest.mark.parametrize("command", ["pay", "trigger-callback"])
def test_the_password_of_a_callback_url_that_is_not_valid_is_never_printed(
    cli: Paysdk, url: str, command: str
) -> None:
    """The usage error for a malformed callback URL shows it, its password as ``***``."""
    if command == "pay":
        argv = ["pay", "order-7", "--amount", "5", "--currency", "USD", "--callback", url]
    else:
        argv = ["trigger-callback", url, "--reference", "order-7"]
    refused = cli(*argv)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert "not a valid URL" in refused.stderr or "absolute http(s) URL" in refused.stderr
    assert "cret" not in refused.stderr
    assert ":***@" in refused.stderr


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


HIDDEN = "the reference contains control or invisible formatting characters"


@pytest.mark.parametrize(
    ("reference", "problem"),
    [
        ("order-7 ", "the reference has leading or trailing whitespace: 'order-7 '"),
        (" order-7", "the reference has leading or trailing whitespace: ' order-7'"),
        ("..", "'..' is not a reference"),
        ("order-\u200b7", f"{HIDDEN}: 'order-\\u200b7'"),
        ("order-7\x1b[2J", f"{HIDDEN}: 'order-7\\x1b[2J'"),
        ("7" * 257, "the reference is 257 characters long; at most 256"),
    ],
)
def test_pay_refuses_a_reference_verify_refuses_before_anything_is_sent(
    cli: Paysdk, port: int, merchant: Merchant, reference: str, problem: str
) -> None:
    """A payment made with such a reference is one the merchant's handler can never verify:
    the command says why, as verify would, and the sandbox records nothing."""
    cli.start(port)
    paid = pay(cli, port, reference, "--amount", "500", "--currency", "USD",
               "--callback", merchant.url)  # fmt: skip
    assert (paid.returncode, paid.stdout) == (2, "")
    assert f"argument reference: {problem}" in paid.stderr
    assert paid.stderr.rstrip().endswith("(verify refuses it)")
    assert (merchant.fulfilled, merchant.failed) == ([], [])
    with paysdk.Client(secret_key=KEY, base_url=f"http://127.0.0.1:{port}") as client:
        assert reference not in [p.reference for p in client.list_payments()]


# --- a callback the app cannot take: what to change -------------------------------------------


def test_pay_to_a_port_nothing_listens_on_says_so_and_how_to_send_the_callback_again(
    cli: Paysdk, port: int, merchant: Merchant
) -> None:
    """The newcomer's app is not started yet, or on another port: the payment is recorded all
    the same, so the command says where nothing listens and how to deliver that callback later
    (paying again would be refused without --replace)."""
    cli.start(port)
    nowhere = f"http://127.0.0.1:{unused_port()}/payments/callback"
    paid = pay(cli, port, "order-7", "--amount", "500", "--currency", "USD", "--callback", nowhere)
    assert paid.returncode == 3
    assert "Connection refused; nothing listens at 127.0.0.1:" in paid.stderr
    assert "is your app running, on that port?" in paid.stderr
    again = f"`paysdk trigger-callback {nowhere} --reference=order-7`"
    assert again in paid.stderr
    assert KEY not in paid.stderr
    argv = [word.strip("`") for word in again.split()]
    delivered = cli(*argv[1:-1], "--reference", "order-7")
    assert delivered.returncode == 3  # the app is still not there: the same words
    assert "nothing listens at 127.0.0.1:" in delivered.stderr
    resent = cli("trigger-callback", merchant.url, "--reference", "order-7")
    assert (resent.returncode, merchant.fulfilled) == (0, ["order-7"]), resent.stderr


def test_the_command_to_send_a_callback_again_runs_for_a_reference_starting_with_a_dash(
    cli: Paysdk, port: int
) -> None:
    """A reference may start with ``-``: the command pay prints gives it as
    ``--reference=REF``, which argparse never reads as another option."""
    cli.start(port)
    nowhere = f"http://127.0.0.1:{unused_port()}/payments/callback"
    paid = pay(cli, port, "--amount", "500", "--currency", "USD", "--callback", nowhere, "--",
               "-order-7")  # fmt: skip
    assert paid.returncode == 3, paid.stderr
    [again] = [part for part in paid.stderr.split("`") if part.startswith("paysdk trigger")]
    delivered = cli(*shlex.split(again)[1:])
    assert delivered.returncode == 3, delivered.stderr  # sent, and nothing listens yet
    assert "nothing listens at 127.0.0.1:" in delivered.stderr


def test_trigger_callback_in_tls_to_an_app_that_speaks_plain_http_says_to_use_http(
    cli: Paysdk, merchant: Merchant
) -> None:
    """A development server speaks plain HTTP: a callback URL written with https:// is told
    to use http://, not left with the TLS library's 'wrong version number'."""
    sent = cli("trigger-callback", merchant.url.replace("http://", "https://"),
               "--reference", "order-7")  # fmt: skip
    assert sent.returncode == 3
    assert "did not answer in TLS" in sent.stderr
    assert "give the callback URL with http://" in sent.stderr
    assert merchant.fulfilled == []


def test_a_callback_view_routed_for_post_is_told_the_service_calls_back_with_get(
    cli: Paysdk, port: int, tmp_path: Path
) -> None:
    """The Flask example with ``@app.post``: Flask's router answers the service's GET 405
    before the helper runs; both commands say the view must be routed for GET."""
    example = (ROOT / "examples" / "flask_callback.py").read_text(encoding="utf-8")
    assert example.count('@app.get("/payments/callback")') == 1
    (tmp_path / "post_callback.py").write_text(
        example.replace('@app.get("/payments/callback")', '@app.post("/payments/callback")'),
        encoding="utf-8",
    )
    app_port = unused_port()
    cli.start(port)
    app = subprocess.Popen(
        [sys.executable, str(tmp_path / "post_callback.py")],
        env={**cli.env, "PORT": str(app_port), "PAYSDK_BASE_URL": f"http://127.0.0.1:{port}",
             "PAYSDK_SECRET_KEY": KEY, "LEDGER_URL": f"sqlite:///{tmp_path / 'ledger.db'}"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not listening(app_port):
            assert time.monotonic() < deadline, "the Flask example did not start"
            time.sleep(0.1)
        url = f"http://127.0.0.1:{app_port}/payments/callback"
        paid = pay(cli, port, "order-7", "--amount", "500", "--currency", "USD", "--callback", url)
        sent = cli("trigger-callback", url, "--reference", "order-7")
    finally:
        app.terminate()
        app.wait(timeout=30)
    for done in (paid, sent):
        assert done.returncode == 1
        assert "-> 405" in done.stdout
        assert "the service calls back with GET" in done.stderr
        assert "@app.get, not @app.post" in done.stderr


@contextlib.contextmanager
def flask_callback_app(client: paysdk.Client) -> Iterator[str]:
    """A Flask app whose callback helper verifies order-7 with ``client``, served on 127.0.0.1
    while the block runs: its callback URL. ``client`` is closed after."""
    app = Flask(__name__)

    @app.get("/payments/callback")
    @verified_callback(client, lookup={"order-7": {"amount": 500, "currency": "USD"}}.get)
    def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        return {"status": "ok"}

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/payments/callback"
    finally:
        server.shutdown()
        thread.join()
        client.close()


def test_a_helper_s_500_error_says_the_reason_is_in_the_app_s_log(
    cli: Paysdk, port: int, caplog: pytest.LogCaptureFixture
) -> None:
    """An app started in a terminal where the sandbox's variables are not exported (or with an
    earlier sandbox's key): the helper answers 500 ``error`` and logs why; the command says
    where to look, since the body says no more."""
    cli.start(port)
    client = paysdk.Client(
        secret_key="sk_sandbox_of_yesterday", base_url=f"http://127.0.0.1:{port}"
    )
    with flask_callback_app(client) as url:
        paid = pay(cli, port, "order-7", "--amount", "500", "--currency", "USD", "--callback", url)
        sent = cli("trigger-callback", url, "--reference", "order-7")
    for done in (paid, sent):
        assert done.returncode == 1
        assert "-> 500" in done.stdout
        assert "the helper logged the reason on the paysdk.callbacks logger" in done.stderr
    assert "the secret key was not accepted" in caplog.text
    assert "sk_sandbox_of_yesterday" not in caplog.text + paid.stderr + sent.stderr


def test_a_helper_s_503_says_to_check_the_app_s_base_url(
    cli: Paysdk, port: int, caplog: pytest.LogCaptureFixture
) -> None:
    """The app still points at a sandbox that has stopped: the helper answers 503
    ``retry_later`` and logs why; the command says where to look and what to check."""
    cli.start(port)
    client = paysdk.Client(secret_key=KEY, base_url=f"http://127.0.0.1:{unused_port()}")
    with flask_callback_app(client) as url:
        paid = pay(cli, port, "order-7", "--amount", "500", "--currency", "USD", "--callback", url)
    assert paid.returncode == 1
    assert "-> 503" in paid.stdout
    assert "started with this sandbox's PAYSDK_BASE_URL" in paid.stderr
    assert "nothing listens at 127.0.0.1:" in caplog.text


def test_an_answer_that_is_not_the_helper_s_is_not_said_to_be() -> None:
    """Only the helper's own bodies name its logger: an app's own 500 page is the app's."""
    assert _why_not_taken(500, '{"status": "error"}\n') is HELPER_ERROR
    assert _why_not_taken(503, '{"status":"retry_later"}') is HELPER_RETRY_LATER
    for status, body in [(500, "<h1>Internal Server Error</h1>"), (503, '{"status": "error"}'),
                         (500, '{"status": "retry_later"}'), (503, '{"status": "in_progress"}'),
                         (500, "[" * 100_000)]:  # fmt: skip
        assert _why_not_taken(status, body) is None

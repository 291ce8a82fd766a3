"""The sandbox's state file (payments kept between runs) and ``pay`` (record a payment, then send
its callback), in Python and over ``POST /_sandbox/pay``, against a real handler on 127.0.0.1."""

from __future__ import annotations

import http.server
import json
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from paysdk.sandbox import (
    COMPLETED_REFERENCE,
    FAILED,
    CallbackDeliveryError,
    Sandbox,
    StateFileError,
    default_payments,
)


class Handler:
    """A merchant's callback endpoint on a real port: records each reference, answers ``status``."""

    def __init__(self) -> None:
        self.references: list[str] = []
        self.status = 200
        handler = self

        class Answer(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                query = urllib.parse.urlsplit(self.path).query
                handler.references += urllib.parse.parse_qs(query)["reference"]
                body = json.dumps({"status": "ok" if handler.status == 200 else "no"}).encode()
                self.send_response(handler.status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/payments/callback"


@pytest.fixture
def handler() -> Iterator[Handler]:
    running = Handler()
    thread = threading.Thread(target=running.server.serve_forever, daemon=True)
    thread.start()
    yield running
    running.server.shutdown()
    running.server.server_close()
    thread.join()


def test_without_a_state_file_yet_the_seed_is_served_and_the_first_change_writes_it(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state.json"
    with Sandbox(state_file=state) as sandbox:
        assert len(sandbox.payments) == len(default_payments())
        assert not state.exists()  # written on change only
        sandbox.add_payment("order-7", amount=500, currency="USD", status=FAILED)
        saved = json.loads(state.read_text())
        assert {record["reference"] for record in saved} >= {"order-7", COMPLETED_REFERENCE}
    assert [path.name for path in tmp_path.iterdir()] == ["state.json"]  # no temporary left


def test_payments_survive_a_restart_and_a_removal_is_remembered(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    with Sandbox(state_file=state, payments=[]) as first:
        first.add_payment("order-7", amount=500, currency="USD")
        first.add_payment("order-8")
        first.remove_payment("order-8")
    again = Sandbox(state_file=state)  # the seed is not used: the state file is
    assert [(p.reference, p.amount, p.currency) for p in again.payments] == [
        ("order-7", 500, "USD")
    ]
    assert again.get_payment("order-7") == first.get_payment("order-7")


def test_a_customer_name_holding_half_an_emoji_is_saved_and_later_changes_too(
    tmp_path: Path,
) -> None:
    """``"Ada \\ud83d"`` (an emoji cut in half, as JSON allows) cannot be written as UTF-8: the
    state file carries it as JSON's own escape, and reads it back the same."""
    state = tmp_path / "state.json"
    name = "Ada \ud83d"
    customer = {"name": name, "email": "ada@example.com", "phone": "+2348000000000"}
    with Sandbox(state_file=state, payments=[]) as sandbox:
        answer = httpx.post(
            f"{sandbox.base_url}/_sandbox/payments",
            content=json.dumps([{"reference": "order-half", "customer": customer}]),
            headers={"Authorization": f"Bearer {sandbox.secret_key}"},
        )
        assert answer.status_code == 201, answer.text
        sandbox.add_payment("order-8")  # a later change is saved as well
    again = Sandbox(state_file=state)
    assert [p.reference for p in again.payments] == ["order-8", "order-half"]
    half = again.get_payment("order-half")
    assert half is not None
    assert half.customer["name"] == name


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("[{", "not valid JSON"),
        ('{"reference": "x"}', "expected a JSON array"),
        ('[{"reference": "x", "amount": "many"}]', "record 0: amount must be"),
    ],
)
def test_a_corrupt_state_file_is_an_error_naming_it(
    tmp_path: Path, content: str, says: str
) -> None:
    state = tmp_path / "state.json"
    state.write_text(content)
    with pytest.raises(StateFileError, match=says) as raised:
        Sandbox(state_file=state)
    assert f"the state file {str(state)!r}" in str(raised.value)
    assert "delete it to start from the seed again" in str(raised.value)


def test_a_state_file_that_cannot_be_read_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(StateFileError, match=f"cannot read the state file {str(tmp_path)!r}"):
        Sandbox(state_file=tmp_path)  # a directory


def test_pay_records_the_payment_then_sends_its_callback(handler: Handler) -> None:
    with Sandbox() as sandbox:
        result = sandbox.pay("order-7", amount=500, currency="USD", callback=handler.url)
        assert (result.status_code, json.loads(result.body)) == (200, {"status": "ok"})
        assert result.url == f"{handler.url}?reference=order-7"
        assert handler.references == ["order-7"]
        payment = sandbox.get_payment("order-7")
        assert payment is not None and (payment.amount, payment.status) == (500, "COMPLETED")


def test_pay_checks_the_callback_url_before_recording_anything() -> None:
    with Sandbox() as sandbox, pytest.raises(ValueError, match="absolute http"):
        sandbox.pay("order-7", callback="ftp://127.0.0.1/cb")
    assert sandbox.get_payment("order-7") is None


def test_a_handler_that_cannot_be_reached_still_leaves_the_payment_recorded(
    handler: Handler,
) -> None:
    unreachable = handler.url
    handler.server.shutdown()
    handler.server.server_close()
    with Sandbox() as sandbox:
        with pytest.raises(CallbackDeliveryError, match="Connection refused"):
            sandbox.pay("order-7", callback=unreachable, timeout=5)
        assert sandbox.get_payment("order-7") is not None


def test_pay_over_http_answers_with_the_payment_and_the_handlers_answer(
    handler: Handler,
) -> None:
    handler.status = 409
    with Sandbox() as sandbox, httpx.Client(base_url=sandbox.base_url) as http:
        key = {"Authorization": f"Bearer {sandbox.secret_key}"}
        body = {
            "payment": {"reference": "order-9", "amount": 5, "status": FAILED},
            "callback": handler.url,
        }
        answer = http.post("/_sandbox/pay", json=body, headers=key)
        assert answer.status_code == 201
        data = answer.json()
        assert (data["payment"]["reference"], data["payment"]["success"]) == ("order-9", False)
        assert data["callback"]["status_code"] == 409
        assert json.loads(data["callback"]["body"]) == {"status": "no"}
        assert http.get("/_sandbox/status", headers=key).json()["payments"] == 9
        assert http.post("/_sandbox/pay", json=body).status_code == 401


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"payment": {"reference": "x"}}, "callback must be the callback URL"),
        ({"payment": {"reference": "x"}, "callback": "http://h/", "timeout": 0}, "timeout must"),
        ({"payment": {"reference": "x"}, "callback": "http://h/", "timeout": 61}, "timeout must"),
        ({"payment": {"reference": "x"}, "callback": "http://h/", "timeout": 10**400}, "timeout"),
        (
            {"payment": {"reference": "x"}, "callback": "http://h/", "timeout": -(10**400)},
            "timeout",
        ),
        ({"payment": {}, "callback": "http://h/"}, "missing field reference"),
        ({"payment": {"reference": "x"}, "callback": "http://h/", "extra": 1}, "unknown field"),
        ([{"payment": {"reference": "x"}, "callback": "http://h/"}], "a JSON object"),
    ],
)
def test_a_bad_pay_request_is_a_400_and_records_nothing(
    body: object, says: str, capfd: pytest.CaptureFixture[str]
) -> None:
    with Sandbox(payments=[]) as sandbox, httpx.Client(base_url=sandbox.base_url) as http:
        key = {"Authorization": f"Bearer {sandbox.secret_key}"}
        answer = http.post("/_sandbox/pay", json=body, headers=key)
        assert answer.status_code == 400
        assert says in answer.json()["message"]
        assert sandbox.payments == []
    assert "Traceback" not in capfd.readouterr().err


def test_a_pay_timeout_of_thousands_of_digits_is_refused_saying_so() -> None:
    with (
        Sandbox(payments=[]) as sandbox,
        pytest.raises(ValueError, match="not an integer of 16,610 bits") as caught,
    ):
        sandbox.pay("order-7", callback="http://127.0.0.1:1/", timeout=10**5000)
    assert len(str(caught.value)) < 200

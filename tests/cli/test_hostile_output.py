"""What the ``paysdk`` command prints of hostile service strings, where the merchant meets it: the
real command on a pseudo-terminal against the sandbox, and its CSV read back with ``csv``."""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import io
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from paysdk.cli._escape import Code, cell_text, json_text, printable, spreadsheet_cell, table_cell
from paysdk.cli._report import print_table
from paysdk.ledger import Ledger
from paysdk.sandbox import Fault, Sandbox
from paysdk.testing import payment_record
from tests.support.hostile import (
    Behaviour,
    HostileServer,
    endless_chunked,
    gzip_bomb,
    head,
    raw,
    respond,
    respond_json,
)
from tests.support.ports import unused_port

NAME = (
    "Ada\x1b[2J\x1b[H\x1b[1Asuccess: yes\n"  # clear the screen, home, a line of its own
    "success:         yes\r\u202eon\u2066\x9b2K\x7f\x00\u2028end"  # CR, bidi, C1 CSI, DEL, NUL
)
"""A customer name that, printed raw, makes a failed payment read ``success: yes``."""
EMAIL = '=HYPERLINK("http://evil.example/refund","Refund")'
QUOTED_EMAIL = '"=HYPERLINK(""http://evil.example/refund"",""Refund"")"'
"""``EMAIL`` as ``verify`` shows it: quoted, for the marks its parts are told apart by."""
HOSTILE_REFERENCE = "@SUM(1+1)\x1b[8m\u202e"
"""A reference the service lists: a formula to a spreadsheet, and hidden text to a terminal."""

CREATED = dt.datetime(2026, 11, 5, 9, 0, tzinfo=dt.timezone.utc)
HOSTILE = payment_record(
    reference="order-hostile",
    created_at=CREATED,
    status="FAILED",
    customer={"name": NAME, "email": EMAIL, "phone": "+234\x1b]0;pwned\x07"},
    products=[{"name": "Gift\x9b2J", "amount": 500, "description": "\x1b[5mblink"}],
    metadata={"note": "\x1b]8;;http://evil.example\x07click\x1b]8;;\x07", "count": -5},
)
LISTED = payment_record(
    reference=HOSTILE_REFERENCE,
    created_at=CREATED + dt.timedelta(minutes=1),
    status="COMPLETED",
    amount=700,
    currency="NGN\x1b[31m",
    customer={"name": "B", "email": "-2+3@example.com", "phone": "+1"},
)
REFUSED = payment_record(
    reference="order-refused", created_at=CREATED + dt.timedelta(minutes=2), amount=900
)
"""A completed payment the ledger refused, for reconcile to list with the ledger's reason."""


def raw_controls(text: str) -> list[str]:
    """Every character in ``text`` a terminal acts on (or shows as nothing: bidi controls and
    the other format characters), but for the line ends of its lines."""
    text = text.replace("\r\n", "\n")  # a terminal's line end (ONLCR)
    return [
        char
        for char in text
        if char != "\n" and unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp")
    ]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    """The module's sandbox, serving the hostile payments."""
    with Sandbox(payments=[HOSTILE, LISTED, REFUSED]) as running:
        yield running


@pytest.fixture
def env(sandbox: Sandbox) -> dict[str, str]:
    sandbox.reset()
    others = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    return {**others, "PAYSDK_BASE_URL": sandbox.base_url, "PAYSDK_SECRET_KEY": sandbox.secret_key}


def start_on_terminal(env: dict[str, str], *argv: str) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``paysdk argv`` with a pseudo-terminal as its stdin, stdout and stderr; return the
    process and the terminal's end to read what reaches it from."""
    main_fd, sub_fd = os.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "paysdk", *argv],
            stdin=sub_fd,
            stdout=sub_fd,
            stderr=sub_fd,
            env=env,
            start_new_session=True,
        )
    except BaseException:
        os.close(main_fd)
        raise
    finally:
        os.close(sub_fd)
    return process, main_fd


def read_to_end(main_fd: int, received: bytearray, deadline: float) -> None:
    """Add what reaches the terminal to ``received`` until its last writer has gone, or the
    deadline (``time.monotonic()``) has passed."""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main_fd], [], [], deadline - time.monotonic())
        if not ready:
            continue
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # EIO: the command, the terminal's last writer, has gone
            return
        if not chunk:
            return
        received += chunk


def on_terminal(env: dict[str, str], *argv: str) -> tuple[int, str]:
    """Run ``paysdk argv`` on a pseudo-terminal (``start_on_terminal``); return its exit code
    and what reached the terminal (line ends as the terminal sends them, ``\\r\\n``), read in
    the terminal's encoding (``PYTHONIOENCODING``, or UTF-8)."""
    process, main_fd = start_on_terminal(env, *argv)
    received = bytearray()
    deadline = time.monotonic() + 30
    try:
        read_to_end(main_fd, received, deadline)
    finally:
        os.close(main_fd)
        if process.poll() is None and time.monotonic() >= deadline:
            process.kill()
    return process.wait(timeout=30), received.decode(env.get("PYTHONIOENCODING", "utf-8"))


def lines_of(screen: str) -> list[str]:
    assert screen.endswith("\r\n")
    return screen[: -len("\r\n")].split("\r\n")


# --- on a terminal ----------------------------------------------------------------------------


def test_verify_shows_every_control_character_as_an_escape_on_one_line(
    env: dict[str, str],
) -> None:
    code, screen = on_terminal(env, "verify", "order-hostile")
    assert code == 0
    assert raw_controls(screen) == []
    lines = lines_of(screen)
    labels = ["reference", "success", "amount", "fee", "transaction_id", "customer", "products",
              "card", "metadata"]  # fmt: skip
    assert [line.split(":", 1)[0] for line in lines] == labels  # no line of the customer's
    assert lines[1] == "success:         no"
    customer = lines[5].removeprefix("customer:").strip()
    assert customer == (
        "Ada\\x1b[2J\\x1b[H\\x1b[1Asuccess: yes\\nsuccess:         yes\\r\\u202eon\\u2066"
        f"\\x9b2K\\x7f\\x00\\u2028end <{QUOTED_EMAIL}> +234\\x1b]0;pwned\\x07"
    )
    assert lines[6].endswith("Gift\\x9b2J (500)")
    assert "note=\\x1b]8;;http://evil.example\\x07click\\x1b]8;;\\x07, count=-5" in lines[8]


def test_verify_quotes_a_part_holding_the_marks_between_parts(
    sandbox: Sandbox, env: dict[str, str]
) -> None:
    """Shown as it is, a metadata value ``A1, refund_approved=true`` reads as a second key, a
    product named ``Gift (0), Laptop`` as a second product and a name ending in an address as a
    second address: such a part is shown in double quotes, a quote within doubled."""
    record = payment_record(
        reference="order-parts",
        created_at=CREATED,
        customer={
            "name": 'Ada "A" <refunds@evil.example>',
            "email": "ada@example.com",
            "phone": "+1",
        },
        products=[
            {"name": "Gift (0), Laptop", "amount": 500, "description": ""},
            {"name": "Mug", "amount": 200, "description": ""},
        ],
        metadata={"order_id": "A1, refund_approved=true", "a=b": 7, "note": "plain words"},
    )
    sandbox.add_payment(record)
    code, screen = on_terminal(env, "verify", "order-parts")
    assert code == 0
    lines = lines_of(screen)
    customer = 'customer:        "Ada ""A"" <refunds@evil.example>" <ada@example.com> +1'
    assert customer in lines
    assert 'products:        "Gift (0), Laptop" (500), Mug (200)' in lines
    metadata = 'metadata:        order_id="A1, refund_approved=true", "a=b"=7, note=plain words'
    assert metadata in lines


def test_verify_shows_a_card_or_product_part_left_out_as_a_dash(
    sandbox: Sandbox, env: dict[str, str]
) -> None:
    """A card without its expiry and with its first digits as a number, a product whose amount
    is text: each part left out or unreadable is ``-``, as any missing value, never Python's
    ``None``."""
    shape = HOSTILE.verify_shape()
    shape["products"] = [{"name": "Gift", "amount": "500", "description": ""}, {"amount": 7}]
    shape["authorization"] = {"card_type": "visa", "first_six": 408408, "last_four": "4081"}
    body = json.dumps({"status": True, "message": "ok", "data": shape})
    sandbox.inject(Fault(status=200, body=body), path="/payment/order-hostile")
    code, screen = on_terminal(env, "verify", "order-hostile")
    assert code == 0
    lines = lines_of(screen)
    assert "products:        Gift (-), - (7)" in lines
    assert "card:            visa -...4081 expires -" in lines
    assert "None" not in screen


def test_verify_json_on_a_terminal_is_the_exact_payment_with_nothing_raw(
    env: dict[str, str],
) -> None:
    code, screen = on_terminal(env, "verify", "order-hostile", "--json")
    assert (code, raw_controls(screen)) == (0, [])
    assert json.loads(screen) == HOSTILE.verify_shape()


def test_list_json_on_a_terminal_is_the_exact_list_with_nothing_raw(
    sandbox: Sandbox, env: dict[str, str]
) -> None:
    code, screen = on_terminal(env, "list", "--json")
    assert (code, raw_controls(screen)) == (0, [])
    assert json.loads(screen) == [record.list_shape() for record in sandbox.payments]


def test_list_shows_one_line_per_payment_with_nothing_raw(env: dict[str, str]) -> None:
    code, screen = on_terminal(env, "list")
    assert (code, raw_controls(screen)) == (0, [])
    lines = lines_of(screen)
    assert len(lines) == 4
    references = [line.split()[0] for line in lines[1:]]
    assert references == ["order-refused", "@SUM(1+1)\\x1b[8m\\u202e", "order-hostile"]
    assert "NGN\\x1b[31m" in lines[2]


def test_a_long_cell_pads_no_other_row_to_its_width(sandbox: Sandbox, env: dict[str, str]) -> None:
    """One payment whose address is 20,000 characters long: padded to it, each of the other
    200 rows would be as long, 4 MB for a list of 200 (a 1 MB address in a list of 100,000
    would be 100 GB). It overflows its own row; the others keep their width."""
    wide = "a" * 20_000 + "@example.com"
    customer = {"name": "B", "email": wide, "phone": "+1"}
    sandbox.add_payment(
        payment_record(reference="order-wide", customer=customer, created_at=CREATED)
    )
    for number in range(200):
        created = CREATED + dt.timedelta(days=1, seconds=number)
        sandbox.add_payment(payment_record(reference=f"order-{number}", created_at=created))
    code, screen = on_terminal(env, "list")
    assert (code, raw_controls(screen)) == (0, [])
    lines = lines_of(screen)
    assert len(lines) == 1 + 204
    [long_line] = [line for line in lines if wide in line]
    assert long_line.split()[0] == "order-wide"
    assert max(len(line) for line in lines if line is not long_line) < 300


def test_a_table_aligns_a_hangul_syllable_written_as_its_letters(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A Hangul syllable may come decomposed (NFD, as macOS writes names): its leading letter
    takes the two columns, the vowel and final letters joined to it none, as a terminal shows
    the syllable they make."""
    name = "\u1112\u1161\u11ab-1"  # the syllable U+D55C as its three letters, then -1
    print_table([(name, "COMPLETED"), ("ab-1", "FAILED")], header=("reference", "status"))
    assert capsys.readouterr().out.splitlines() == [
        "REFERENCE  STATUS",
        f"{name}       COMPLETED",
        "ab-1       FAILED",
    ]


def test_a_table_aligns_wide_and_combining_characters_by_the_columns_they_take(
    env: dict[str, str],
) -> None:
    """A CJK reference takes two columns a character, a fullwidth address too, and an accent
    combined with the letter before it none: padded by their length, each would shift the
    rest of its row (the status under another heading); padded by their width, none does."""
    rows = [
        ("\u6ce8\u6587-1042", "a@example.com"),  # two CJK characters
        ("order-2" + "\u0301" * 8, "b@example.com"),  # eight combining acute accents
        ("order-3", "\uff41\uff44\uff41\uff20\uff45\uff58.com"),  # fullwidth letters
        ("order-4", "d@example.com"),
    ]
    records = [
        payment_record(
            reference=reference,
            customer={"name": "B", "email": email, "phone": "+1"},
            created_at=CREATED + dt.timedelta(minutes=number),
        )
        for number, (reference, email) in enumerate(rows)
    ]
    with Sandbox(payments=records) as own:
        env = {**env, "PAYSDK_BASE_URL": own.base_url, "PAYSDK_SECRET_KEY": own.secret_key}
        code, screen = on_terminal(env, "list")
    assert (code, raw_controls(screen)) == (0, [])
    # the address of six fullwidth letters and ".com" takes 16 columns: the others pad to it
    assert lines_of(screen) == [
        "REFERENCE  STATUS     AMOUNT   FEE  CURRENCY  CUSTOMER EMAIL    CREATED AT",
        "order-4    COMPLETED  250000  3750  NGN       d@example.com     "
        "2026-11-05T09:03:00.000000Z",
        "order-3    COMPLETED  250000  3750  NGN       \uff41\uff44\uff41\uff20\uff45\uff58.com  "
        "2026-11-05T09:02:00.000000Z",
        "order-2" + "\u0301" * 8 + "    COMPLETED  250000  3750  NGN       b@example.com     "
        "2026-11-05T09:01:00.000000Z",
        "\u6ce8\u6587-1042  COMPLETED  250000  3750  NGN       a@example.com     "
        "2026-11-05T09:00:00.000000Z",
    ]


def test_an_error_quoting_the_service_is_one_line_with_nothing_raw(
    sandbox: Sandbox, env: dict[str, str]
) -> None:
    body = {"success": False, "error": "\x1b[2J\x1b]0;x\x07\u202e\x9b1A\nsuccess: yes",
            "message": "reference not found"}  # fmt: skip
    sandbox.inject(Fault(status=404, body=json.dumps(body)), path="/payment/order-hostile")
    code, screen = on_terminal(env, "verify", "order-hostile")
    assert (code, raw_controls(screen)) == (1, [])
    [line] = lines_of(screen)
    assert line.startswith("paysdk: error: ")
    assert "'order-hostile': \\x1b[2J\\x1b]0;x\\x07\\u202e\\x9b1A\\nsuccess: yes" in line


def test_a_list_not_json_for_a_byte_not_utf8_names_the_byte_and_where(
    hostile: HostileServer,
) -> None:
    """The body's text, as read, holds U+FFFD; the service sent 0xff, which the error names."""
    body = b'{"data": []}\xff'
    hostile.script(respond(200, body, {"Content-Type": "application/json"}))
    others = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    env = {**others, "PAYSDK_BASE_URL": hostile.base_url,
           "PAYSDK_SECRET_KEY": "sk_test_Zq3Jv9WmX4pL7tR2", "PAYSDK_MAX_RETRIES": "0"}  # fmt: skip
    code, screen = on_terminal(env, "list")
    assert (code, raw_controls(screen)) == (3, [])  # an answer paysdk cannot read
    [line] = lines_of(screen)
    assert line.startswith(
        "paysdk: error: the service answered with a body that is not JSON (application/json), "
        "holding bytes that are not UTF-8 (the first, 0xff, at byte 12), shown as \\ufffd: "
        '{"data": []}\\ufffd (HTTP 200 from GET '
    )


def test_trigger_callbacks_error_quotes_the_start_of_a_long_refused_line(
    hostile: HostileServer,
) -> None:
    """A handler's answer whose chunk header is 60,000 bytes: the HTTP parser quotes it whole,
    and the error line quotes its start and says how long it was."""
    hostile.script(raw(head(200, {"Transfer-Encoding": "chunked"}) + b"z" * 60_000 + b"\r\n"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    url = f"{hostile.base_url}/cb"
    code, screen = on_terminal(env, "trigger-callback", url, "--reference", "order-1")
    assert (code, raw_controls(screen)) == (3, [])
    [line] = lines_of(screen)
    assert line.startswith(f"paysdk: error: callback to {url}?reference=order-1 failed: illegal")
    assert line.endswith(" characters)")
    assert len(line) < 1_000


def test_trigger_callback_reads_an_answer_in_a_charset_that_is_no_text_one_as_utf8(
    hostile: HostileServer,
) -> None:
    """A handler's Content-Type naming a codec that decodes no bytes to text (``rot13``) is
    reported with its body read as UTF-8, not as paysdk's internal error."""
    content_type = {"Content-Type": "application/json; charset=rot13"}
    hostile.script(respond(200, b'{"status": "ok"}', content_type))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    url = f"{hostile.base_url}/cb"
    code, screen = on_terminal(env, "trigger-callback", url, "--reference", "order-1")
    assert (code, raw_controls(screen)) == (0, [])
    assert lines_of(screen) == [f"GET {url}?reference=order-1 -> 200", '{"status": "ok"}']


@pytest.mark.parametrize("status", [400, 500])
def test_pay_quotes_the_start_of_a_long_message_from_a_server_that_is_no_sandbox(
    hostile: HostileServer, status: int
) -> None:
    """``PAYSDK_BASE_URL`` names a server that answers ``POST /_sandbox/pay`` with a message of
    100,000 characters: the error line quotes its start, and says how long it was."""
    hostile.script(respond_json(status, {"message": "refused\x1b[2J" + "x" * 100_000}))
    others = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    env = {**others, "PAYSDK_BASE_URL": hostile.base_url,
           "PAYSDK_SECRET_KEY": "sk_test_Zq3Jv9WmX4pL7tR2"}  # fmt: skip
    code, screen = on_terminal(env, "pay", "order-7", "--amount", "500", "--currency", "USD",
                               "--callback", "http://127.0.0.1:9/cb")  # fmt: skip
    assert (code, raw_controls(screen)) == ({400: 2, 500: 3}[status], [])
    [line] = lines_of(screen)
    assert "refused\\x1b[2Jxxx" in line
    assert line.endswith(" (100,011 characters)")
    assert len(line) < 1_000


@pytest.mark.parametrize("status", [400, 500])
def test_pay_blots_the_key_a_server_that_is_no_sandbox_echoes(
    hostile: HostileServer, status: int
) -> None:
    """A server (or a proxy before it) answers ``POST /_sandbox/pay`` quoting the request's
    ``Authorization`` header, JSON-escaped, and again across the 500-character cut: the error
    line shows neither the key nor a piece of it."""
    key = "sk_test_Zq3Jv9/WmX4pL7tR2"
    escaped = key.replace("/", "\\/")
    said = f"bad header Bearer {escaped}; " + "x" * 440 + f" Bearer {key} again"
    hostile.script(respond_json(status, {"message": said}))
    others = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    env = {**others, "PAYSDK_BASE_URL": hostile.base_url, "PAYSDK_SECRET_KEY": key}
    code, screen = on_terminal(env, "pay", "order-7", "--amount", "500", "--currency", "USD",
                               "--callback", "http://127.0.0.1:9/cb")  # fmt: skip
    assert code == {400: 2, 500: 3}[status]
    [line] = lines_of(screen)
    assert "bad header Bearer <secret key>; xxx" in line
    assert "sk_test_" not in line


@pytest.mark.parametrize(
    "behaviour",
    [
        endless_chunked(status=201, prefix=b'{"callback": {"body": "'),
        gzip_bomb(64 << 20, document=b'{"callback": {"body": "x"}}', status=201),
    ],
    ids=["endless", "gzip-bomb"],
)
def test_pay_reads_a_bounded_part_of_the_answer_of_a_server_that_is_no_sandbox(
    hostile: HostileServer, behaviour: Behaviour
) -> None:
    """``PAYSDK_BASE_URL`` names a server that answers ``POST /_sandbox/pay`` 201 with a body
    that never ends (or inflates to 64 MiB): ``pay`` reads the first MiB, no more, and says the
    server is no sandbox, at once rather than at its timeout."""
    hostile.script(behaviour)
    others = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    env = {**others, "PAYSDK_BASE_URL": hostile.base_url,
           "PAYSDK_SECRET_KEY": "sk_test_Zq3Jv9WmX4pL7tR2"}  # fmt: skip
    started = time.monotonic()
    argv = ["pay", "order-7", "--amount", "500", "--currency", "USD", "--timeout", "60"]
    code, screen = on_terminal(env, *argv, "--callback", "http://127.0.0.1:9/cb")
    assert time.monotonic() - started < 20
    assert code == 2
    [line] = lines_of(screen)
    assert line == (
        f"paysdk: error: {hostile.base_url} is not a paysdk sandbox (POST /_sandbox/pay answered "
        "201): `paysdk pay` pays in `paysdk sandbox` only"
    )


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    """A ledger that refused the hostile payment for a hostile reason."""
    path = tmp_path / "ledger.db"
    with Ledger(path) as made:
        made.create_table()
        made.refuse("order-refused", REASON)
    return path


REASON = "customer says\x1b[2J\x1b[Hall clear\u202e\x85\nline"
SHOWN_REASON = "customer says\\x1b[2J\\x1b[Hall clear\\u202e\\x85\\nline"


def without_progress(screen: str) -> str:
    """The screen without reconcile's own progress line (``\\rchecked N payments``, then
    ``\\r ESC [K`` to clear it): the one control sequence the command itself writes."""
    return re.sub(r"\rchecked \d+ payments|\r\x1b\[K", "", screen)


def test_reconcile_shows_nothing_raw_but_its_own_progress(
    env: dict[str, str], ledger: Path
) -> None:
    code, screen = on_terminal(env, "reconcile", "--ledger", str(ledger))
    assert (code, raw_controls(without_progress(screen))) == (4, [])
    lines = lines_of(without_progress(screen))
    assert lines[1].split()[:5] == ["missed", "@SUM(1+1)\\x1b[8m\\u202e", "COMPLETED", "700",
                                    "NGN\\x1b[31m"]  # fmt: skip
    assert lines[2].startswith("refused")
    assert lines[2].endswith(SHOWN_REASON)


def test_ledger_list_shows_nothing_raw(env: dict[str, str], ledger: Path) -> None:
    code, screen = on_terminal(env, "ledger", "list", "--ledger", str(ledger))
    assert (code, raw_controls(screen)) == (0, [])
    assert lines_of(screen)[1].endswith(SHOWN_REASON)


def test_ledger_list_json_is_exact_with_nothing_raw(env: dict[str, str], ledger: Path) -> None:
    code, screen = on_terminal(env, "ledger", "list", "--ledger", str(ledger), "--json")
    assert (code, raw_controls(screen)) == (0, [])
    assert json.loads(screen)["reason"] == REASON


def test_pay_shows_the_handlers_answer_with_nothing_raw_but_its_lines(
    sandbox: Sandbox, env: dict[str, str]
) -> None:
    answer = "ok\x1b[2J\x1b[H\r\nsecond line\rpaid: yes\u202e"
    sandbox.inject(Fault(status=200, body=answer), path="/cb")
    code, screen = on_terminal(env, "pay", "order-7", "--amount", "500", "--currency", "USD",
                               "--callback", f"{sandbox.base_url}/cb")  # fmt: skip
    assert (code, raw_controls(screen)) == (0, [])
    assert lines_of(screen)[2:] == ["ok\\x1b[2J\\x1b[H", "second line\\rpaid: yes\\u202e"]


def test_sandbox_status_shows_a_pid_files_values_with_nothing_raw(
    sandbox: Sandbox, env: dict[str, str], tmp_path: Path
) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    record = {"pid": os.getpid(), "port": sandbox.port, "base_url": sandbox.base_url,
              "secret_key": sandbox.secret_key, "log": "/tmp/x\x1b[2J.log"}  # fmt: skip
    (runtime / f"sandbox-{sandbox.port}.pid").write_text(json.dumps(record))
    code, screen = on_terminal({**env, "PAYSDK_SANDBOX_DIR": str(runtime)}, "sandbox", "status")
    assert (code, raw_controls(screen)) == (0, [])
    assert lines_of(screen)[0].endswith("log /tmp/x\\x1b[2J.log")


@contextlib.contextmanager
def foreground_sandbox(env: dict[str, str], *argv: str) -> Iterator[bytearray]:
    """``paysdk sandbox ARGV`` on a pseudo-terminal: what it wrote up to its announcement's end,
    and, once the block ends, all it wrote; stopped then with Ctrl-C, which must end it with 0."""
    process, main_fd = start_on_terminal(env, "sandbox", *argv)
    received = bytearray()
    try:
        while b"Press Ctrl-C" not in received:
            ready, _, _ = select.select([main_fd], [], [], 30)
            assert ready, received
            received += os.read(main_fd, 65536)
        yield received
        process.send_signal(signal.SIGINT)
        read_to_end(main_fd, received, time.monotonic() + 30)
    finally:
        os.close(main_fd)
        if process.poll() is None:
            process.kill()
    assert process.wait(timeout=30) == 0


def test_the_sandboxs_request_log_shows_a_clients_request_line_with_nothing_raw(
    env: dict[str, str],
) -> None:
    with foreground_sandbox(env, "--port", "0") as received:
        found = re.search(rb"listening on http://127[.]0[.]0[.]1:([0-9]+)", received)
        assert found is not None, received
        with socket.create_connection(("127.0.0.1", int(found[1])), timeout=30) as hostile:
            # ESC [2J, an OSC title, and C1 CSI (latin-1 0x9b), as raw bytes of a request line
            hostile.sendall(b"GET /payment/x\x1b[2J\x1b]0;pwned\x07\x9b2J HTTP/1.1\r\n")
            hostile.sendall(b"Host: 127.0.0.1\r\n\r\n")
            hostile.recv(65536)
    screen = received.decode("utf-8")
    assert raw_controls(screen) == []
    assert '"GET /payment/x\\x1b[2J\\x1b]0;pwned\\x07\\x9b2J HTTP/1.1" 401' in screen


def test_the_sandbox_shows_a_state_file_named_with_control_characters_as_escapes(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A file's name may hold any character but ``/`` and NUL: the announcement's ``state
    file:`` line shows its control characters as escapes, as every other line of it does."""
    state = tmp_path / "state\x1b[2J\x1b]0;pwned\x07\u202e\nsecret key: sk_forged.json"
    with foreground_sandbox(env, "--port", "0", "--state", str(state)) as received:
        pass
    screen = received.decode("utf-8")
    assert raw_controls(screen) == []
    shown = "state\\x1b[2J\\x1b]0;pwned\\x07\\u202e\\nsecret key: sk_forged.json"
    assert f"state file: {tmp_path}/{shown}\r\n" in screen
    assert "\r\nsecret key: sk_forged" not in screen


@pytest.mark.parametrize("command", ["status", "stop"])
def test_sandbox_status_and_stop_show_nothing_raw_of_a_pid_file_of_another_shape(
    env: dict[str, str], tmp_path: Path, command: str
) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    record = {"pid": "1\x1b[2J", "port": "8\x1b]0;pwned\x07", "base_url": "http://127.0.0.1:9",
              "secret_key": "sk_x", "log": "/tmp/x.log"}  # fmt: skip
    (runtime / "sandbox-9.pid").write_text(json.dumps(record))
    code, screen = on_terminal({**env, "PAYSDK_SANDBOX_DIR": str(runtime)}, "sandbox", command)
    assert (code, raw_controls(screen)) == ({"status": 1, "stop": 0}[command], [])
    assert "Traceback" not in screen


def test_sandbox_detach_status_and_stop_show_a_runtime_directory_name_with_nothing_raw(
    env: dict[str, str], tmp_path: Path
) -> None:
    """``PAYSDK_SANDBOX_DIR`` names any directory: a name holding ESC or a newline is shown
    escaped where ``--detach``, ``status`` and ``stop`` name its log, pid file or directory."""
    runtime = tmp_path / "run\x1b[2J\x1b]0;pwned\x07\u202e\nsecret key: sk_forged"
    runtime.mkdir(mode=0o700)
    env = {**env, "PAYSDK_SANDBOX_DIR": str(runtime)}
    port = str(unused_port())
    screens = []
    try:
        screens.append(on_terminal(env, "sandbox", "--detach", "--port", port))
        screens.append(on_terminal(env, "sandbox", "status"))
        screens.append(on_terminal(env, "sandbox", "--detach", "--port", port))  # names its log
    finally:
        screens.append(on_terminal(env, "sandbox", "stop"))
    screens.append(on_terminal(env, "sandbox", "stop"))  # nothing to stop: names the directory
    screens.append(on_terminal(env, "sandbox", "status"))
    (runtime / f"sandbox-{port}.pid").write_text("not a pid file")
    screens.append(on_terminal(env, "sandbox", "stop"))  # removes it, naming it
    unanswered = {"pid": os.getpid(), "port": int(port), "base_url": f"http://127.0.0.1:{port}",
                  "secret_key": "sk_x", "log": str(runtime / "x.log")}  # fmt: skip
    (runtime / f"sandbox-{port}.pid").write_text(json.dumps(unanswered))
    screens.append(on_terminal(env, "sandbox", "stop"))  # a live pid no sandbox answers for
    assert [code for code, _ in screens] == [0, 0, 2, 0, 0, 1, 0, 1]
    for _, screen in screens:
        assert raw_controls(screen) == []
        assert "\nsecret key: sk_forged" not in screen.replace("\r\n", "\n")
    shown = "run\\x1b[2J\\x1b]0;pwned\\x07\\u202e\\nsecret key: sk_forged"
    named = [screens[0], screens[2], *screens[4:]]
    assert [shown in screen for _, screen in named] == [True] * len(named), named


TYPED = "x\x1b[2J\x1b]0;pwned\x07\u202e\x9b1A\rpaid"
"""An argument a script passed on from a customer: each usage error quotes it."""


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("ledger", "list", TYPED), id="unrecognized-argument"),
        pytest.param(("verify", "order-1", TYPED), id="a-second-reference"),
        pytest.param(("list", f"--s={TYPED}"), id="ambiguous-option"),
        pytest.param((f"--{TYPED}", "list"), id="top-level-parser"),
    ],
)
def test_a_usage_error_quoting_an_argument_shows_nothing_raw(
    env: dict[str, str], argv: tuple[str, ...]
) -> None:
    code, screen = on_terminal(env, *argv)
    assert (code, raw_controls(screen)) == (2, [])
    assert lines_of(screen)[-1].startswith("paysdk")
    assert "\\x1b[2J\\x1b]0;pwned\\x07\\u202e\\x9b1A\\rpaid" in screen


LOOKALIKES = [
    "order-1042\u200b",  # zero-width space
    "order-\u200d1042",  # zero-width joiner
    "order-1042\u2060",  # word joiner
    "\ufefforder-1042",  # byte order mark
    "order-10\u00ad42",  # soft hyphen
    "order-1042\U000e0041",  # a tag character
]
"""References the service may list that a terminal shows as ``order-1042``: each character
between is one of those ``paysdk verify`` refuses in a reference as invisible formatting."""


@pytest.fixture
def lookalikes(sandbox: Sandbox, tmp_path: Path) -> Path:
    """The service lists ``order-1042`` and its look-alikes; a ledger fulfilled ``order-1042``."""
    for offset, reference in enumerate(["order-1042", *LOOKALIKES]):
        created = CREATED + dt.timedelta(hours=1, minutes=offset)
        sandbox.add_payment(payment_record(reference=reference, created_at=created, amount=700))
    path = tmp_path / "ledger.db"
    with Ledger(path) as made:
        made.create_table()
        made.refuse("order-1042", "seen")
    return path


@pytest.mark.parametrize("command", ["list", "reconcile"])
def test_references_that_differ_by_invisible_characters_are_told_apart(
    env: dict[str, str], lookalikes: Path, command: str
) -> None:
    """Shown raw, a reconcile report would list ``order-1042`` as missed beside the row that
    set it aside, and ``paysdk list`` would show it seven times: each invisible character is an
    escape, as a control character is."""
    argv = ["list"] if command == "list" else ["reconcile", "--ledger", str(lookalikes)]
    code, screen = on_terminal(env, *argv)
    assert code == (0 if command == "list" else 4)
    assert raw_controls(without_progress(screen)) == []
    lines = lines_of(without_progress(screen))
    shown = [
        cell
        for line in lines
        for cell in line.split()
        if cell.startswith(("order-1", "order-\\u", "\\ufeff"))
    ]
    assert sorted(shown) == sorted(
        ["order-1042", "order-1042\\u200b", "order-\\u200d1042", "order-1042\\u2060",
         "\\ufefforder-1042", "order-10\\xad42", "order-1042\\U000e0041"]
    )  # fmt: skip


IGNORABLES = {
    "order-1042\u3164": "order-1042\\u3164",  # Hangul filler: a blank as wide as a letter
    "order-1042\uffa0": "order-1042\\uffa0",  # halfwidth Hangul filler
    "order-\u115f1042": "order-\\u115f1042",  # Hangul choseong filler
    "order-1042\u034f": "order-1042\\u034f",  # combining grapheme joiner
    "order-1042\ufe0f": "order-1042\\ufe0f",  # variation selector-16
    "order-1042\U000e0100": "order-1042\\U000e0100",  # variation selector-17
    "order-1042\u17b4": "order-1042\\u17b4",  # Khmer inherent vowel
}
"""References the service may list, and ``paysdk verify`` takes, that a terminal shows as
``order-1042`` (and a blank): each character between is a letter or mark Unicode names
default-ignorable, shown as nothing; and how the tables show them."""


@pytest.fixture
def ignorables(sandbox: Sandbox, tmp_path: Path) -> Path:
    """The service lists ``order-1042`` and the ``IGNORABLES``; a ledger refused ``order-1042``."""
    for offset, reference in enumerate(["order-1042", *IGNORABLES]):
        created = CREATED + dt.timedelta(hours=3, minutes=offset)
        sandbox.add_payment(payment_record(reference=reference, created_at=created, amount=700))
    path = tmp_path / "ledger.db"
    with Ledger(path) as made:
        made.create_table()
        made.refuse("order-1042", "seen")
    return path


@pytest.mark.parametrize("command", ["list", "reconcile"])
def test_references_that_differ_by_a_default_ignorable_character_are_told_apart(
    env: dict[str, str], ignorables: Path, command: str
) -> None:
    """A Hangul filler, a variation selector or the combining grapheme joiner is no format
    character, but a terminal shows it as nothing (or a blank), as it does one: each is an
    escape, so the report never lists ``order-1042`` as missed beside the row that refused it."""
    argv = ["list"] if command == "list" else ["reconcile", "--ledger", str(ignorables)]
    code, screen = on_terminal(env, *argv)
    assert code == (0 if command == "list" else 4)
    invisible = set("".join(IGNORABLES)) - set("order-1042")
    assert invisible.isdisjoint(screen)
    shown = [
        cell
        for line in lines_of(without_progress(screen))
        for cell in line.split()
        if cell.startswith("order-") and "1042" in cell
    ]
    assert sorted(shown) == sorted(["order-1042", *IGNORABLES.values()])


@pytest.mark.parametrize("command", ["list", "verify"])
def test_json_of_invisible_characters_beyond_the_basic_plane_reads_back_the_same(
    sandbox: Sandbox, env: dict[str, str], lookalikes: Path, command: str
) -> None:
    """A tag character (U+E0041) is escaped in ``--json`` as JSON spells it, a surrogate pair:
    five hex digits after ``\\u`` would read back as U+E004 and a ``1``: another reference,
    another name."""
    name = "Ada\U000e0041\U000110bd"
    customer = {"name": name, "email": "ada@example.com", "phone": "+1"}
    sandbox.add_payment(
        payment_record(reference="order-tagged", customer=customer, created_at=CREATED)
    )
    argv = ["list", "--json"] if command == "list" else ["verify", "order-tagged", "--json"]
    code, screen = on_terminal(env, *argv)
    assert (code, raw_controls(screen)) == (0, [])
    assert "\\udb40\\udc41" in screen
    shown = json.loads(screen)
    if command == "list":
        assert shown == [record.list_shape() for record in sandbox.payments]
        assert "order-1042\U000e0041" in [payment["reference"] for payment in shown]
    else:
        assert shown["customer"]["name"] == name


SPACED = {
    "order 1042": "order 1042",
    "order  1042": "order  1042",
    "order\u00a01042": "order\\xa01042",  # no-break space
    "order\u20071042": "order\\u20071042",  # figure space
    "order\u202f1042": "order\\u202f1042",  # narrow no-break space
    "order\u30001042": "order\\u30001042",  # ideographic space, as wide as two
    "order-1042 ": "order-1042\\x20",
    " order-1042": "\\x20order-1042",
    "order-1042\u200b": "order-1042\\u200b",  # a zero-width space
    "order-1042\\u200b": "order-1042\\\\u200b",  # the text of its escape
    "order-1042\u2800": "order-1042\\u2800",  # the blank Braille pattern, drawn as a space
    "order\u28001042": "order\\u28001042",  # ... and between its words
}
"""References the service may list, each shown raw as another one or as ``order-1042`` (a
table pads cells with spaces), and how the table shows them."""


@pytest.fixture
def spaced(sandbox: Sandbox, tmp_path: Path) -> Path:
    """The service lists ``order-1042`` and the ``SPACED`` references; a ledger refused
    ``order-1042``."""
    for offset, reference in enumerate(["order-1042", *SPACED]):
        created = CREATED + dt.timedelta(hours=2, minutes=offset)
        customer = {"name": "Ada  Lovelace", "email": "ada@example.com", "phone": "+1 555"}
        record = payment_record(
            reference=reference, created_at=created, amount=700, customer=customer
        )
        sandbox.add_payment(record)
    path = tmp_path / "ledger.db"
    with Ledger(path) as made:
        made.create_table()
        made.refuse("order-1042", "seen")
    return path


def column(lines: list[str], name: str, after: str) -> list[str]:
    """The cells of the column headed ``name`` (the next one headed ``after``), each line's."""
    start, end = lines[0].index(name), lines[0].index(after)
    return [line[start:end].rstrip() for line in lines[1:] if line[start:end].strip()]


@pytest.mark.parametrize("command", ["list", "reconcile"])
def test_references_that_differ_by_a_space_or_its_look_alike_are_told_apart(
    env: dict[str, str], spaced: Path, command: str
) -> None:
    """Shown raw, ``order-1042 `` would read as the ``order-1042`` the ledger refused, and a
    no-break space as a space, and the text ``\\u200b`` as the escape of a zero-width space: a
    space at either end of a cell, any space but the ASCII one and a backslash of the text are
    escapes, while spaces within stay spaces."""
    argv = ["list"] if command == "list" else ["reconcile", "--ledger", str(spaced)]
    code, screen = on_terminal(env, *argv)
    assert code == (0 if command == "list" else 4)
    lines = [line for line in lines_of(without_progress(screen)) if line][: -2 if code else None]
    shown = column(lines, "REFERENCE", "STATUS")
    expected = ["order-1042", *SPACED.values()]  # reconcile: the one refused, the others missed
    assert sorted(cell for cell in shown if "1042" in cell) == sorted(expected)
    assert all(line.rstrip() == line for line in lines)


def test_verify_keeps_the_spaces_within_a_customers_name(env: dict[str, str], spaced: Path) -> None:
    code, screen = on_terminal(env, "verify", "order\u00a01042")
    assert code == 0
    lines = lines_of(screen)
    assert "reference:       order\\xa01042" in lines
    assert "customer:        Ada  Lovelace <ada@example.com> +1 555" in lines


def test_a_status_or_currency_of_look_alike_letters_is_escaped_whole(
    sandbox: Sandbox, env: dict[str, str], tmp_path: Path
) -> None:
    """``COMPLETED`` spelt with a Cyrillic E is not completed (``--status completed`` leaves it
    out), and ``USD`` with a Cyrillic S not ``USD`` (``confirm`` refuses it): the tables show
    each such letter of a status or currency as an escape, while an address keeps its
    letters."""
    record = payment_record(reference="order-cyr", created_at=CREATED, amount=700)
    listed = {**record.list_shape(), "status": "COMPL\u0415TED", "currency": "U\u0405D"}
    listed["customer"] = {**listed["customer"], "email": "zo\u00eb@example.com"}
    sandbox.inject(Fault.json(200, {"data": [listed]}), path="/payments")
    code, screen = on_terminal(env, "list")
    assert code == 0
    [_, row] = lines_of(screen)
    assert row.split()[:5] == ["order-cyr", "COMPL\\u0415TED", "700", "10", "U\\u0405D"]
    assert "zo\u00eb@example.com" in row
    verified = {**record.verify_shape(), "currency": "U\u0405D"}
    body = {"status": True, "message": "Verification successful", "data": verified}
    sandbox.inject(Fault.json(200, body), path="/payment/order-cyr")
    code, screen = on_terminal(env, "verify", "order-cyr")
    assert code == 0
    assert "amount:          700 U\\u0405D" in lines_of(screen)
    completed = {**listed, "status": "COMPLETED"}  # missed: in no ledger
    sandbox.inject(Fault.json(200, {"data": [completed]}), path="/payments", times=None)
    ledger = tmp_path / "ledger.db"
    with Ledger(ledger) as made:
        made.create_table()
    code, screen = on_terminal(env, "reconcile", "--ledger", str(ledger))
    assert code == 4
    missed = [line for line in lines_of(without_progress(screen)) if "order-cyr" in line]
    assert [line.split()[:5] for line in missed] == [
        ["missed", "order-cyr", "COMPLETED", "700", "U\\u0405D"]
    ]


def test_verify_shows_card_details_of_look_alike_characters_as_escapes(
    sandbox: Sandbox, env: dict[str, str]
) -> None:
    """A card scheme spelt with a Cyrillic i, and digits of other scripts, are not ``visa`` and
    a card number: ``verify``'s card line, ASCII by the contract, shows each as an escape."""
    record = payment_record(reference="order-card", created_at=CREATED, amount=700)
    card = {
        "card_type": "v\u0456sa",
        "first_six": "\uff14\uff11\uff18\uff17\uff14\uff12",
        "last_four": "\u0664\u0660\u0668\u0661",
        "expiry": "09/27",
    }
    body = {"status": True, "data": {**record.verify_shape(), "authorization": card}}
    sandbox.inject(Fault.json(200, body), path="/payment/order-card")
    code, screen = on_terminal(env, "verify", "order-card")
    assert code == 0
    assert (
        "card:            v\\u0456sa \\uff14\\uff11\\uff18\\uff17\\uff14\\uff12..."
        "\\u0664\\u0660\\u0668\\u0661 expires 09/27"
    ) in lines_of(screen)
    code, screen = on_terminal(env, "verify", "order-hostile")
    assert code == 0
    assert "card:            visa 408408...4081 expires 09/28" in lines_of(screen)


def test_verify_answered_for_a_reference_of_a_look_alike_letter_says_which(
    sandbox: Sandbox, env: dict[str, str]
) -> None:
    """A verify answered with the payment of ``order-hostile`` spelt with a Cyrillic o (a
    confused proxy, a hostile service) is refused, and the error tells the two apart rather than
    reading ``asked for payment 'order-hostile', the service answered with 'order-hostile'``."""
    other = {**HOSTILE.verify_shape(), "reference": "\u043erder-hostile"}
    body = {"status": True, "message": "Verification successful", "data": other}
    sandbox.inject(Fault.json(200, body), path="/payment/order-hostile")
    code, screen = on_terminal(env, "verify", "order-hostile")
    assert code == 3  # an answer about another payment: none about this one
    assert lines_of(screen) == [
        "paysdk: error: asked for payment 'order-hostile', the service answered with "
        "'\\u043erder-hostile'"
    ]


def test_confirm_refusing_a_currency_of_a_look_alike_letter_shows_the_letter_as_an_escape(
    sandbox: Sandbox, env: dict[str, str]
) -> None:
    """``KES`` spelt with a Kelvin sign (U+212A) is not ``KES``: ``confirm --currency KES``
    refuses it, and its error tells the two apart rather than reading ``expected 'KES' but the
    service says 'KES'``."""
    sandbox.add_payment("order-kelvin", amount=700, currency="\u212aES")
    code, screen = on_terminal(
        env, "confirm", "order-kelvin", "--amount", "700", "--currency", "KES"
    )
    assert code == 1
    assert lines_of(screen) == [
        "paysdk: error: payment 'order-kelvin' does not match: currency expected 'KES' but the "
        "service says '\\u212aES'"
    ]


def test_a_status_padded_with_a_look_alike_space_is_a_usage_error(env: dict[str, str]) -> None:
    """``--status "FAILED\\xa0"`` (a no-break space, as a copied table may hold) is not
    ``FAILED``: a usage error showing the space as an escape, as the status is not one paysdk
    knows; an ASCII space around it is still taken."""
    code, screen = on_terminal(env, "list", "--status", "FAILED\u00a0")
    assert code == 2
    assert lines_of(screen)[-1] == (
        "paysdk list: error: argument --status: unknown status 'FAILED\\xa0': expected one "
        "of COMPLETED, FAILED (any case)"
    )
    code, screen = on_terminal(env, "list", "--status", " failed ")
    assert code == 0
    assert [line.split()[:2] for line in lines_of(screen)] == [
        ["REFERENCE", "STATUS"],
        ["order-hostile", "FAILED"],
    ]


def test_a_code_typed_with_a_look_alike_letter_is_refused_showing_the_letter_as_an_escape(
    env: dict[str, str],
) -> None:
    """A code typed with a letter of another script (pasted from a chat, say) is refused, and
    the error tells it from the code it looks like: ``'F\\u0410ILED'`` (a Cyrillic A), never
    ``unknown status 'FAILED'``; ``--currency`` of ``confirm`` and ``pay`` alike."""
    code, screen = on_terminal(env, "list", "--status", "F\u0410ILED")
    assert code == 2
    assert lines_of(screen)[-1] == (
        "paysdk list: error: argument --status: unknown status 'F\\u0410ILED': expected one "
        "of COMPLETED, FAILED (any case)"
    )
    confirm = ("confirm", "order-hostile", "--amount", "700", "--currency", "\u212aES")
    code, screen = on_terminal(env, *confirm)
    assert code == 2
    assert lines_of(screen)[-1].endswith("got '\\u212aES'")
    code, screen = on_terminal(
        env, "pay", "order-7", "--amount", "5", "--currency", "\u212aES", "--callback", "x"
    )
    assert code == 2
    assert lines_of(screen)[-1].endswith("such as NGN or USD, not '\\u212aES'")


LETTERS = "Zo\u00eb \u0130stanbul \U0001f600"
"""A customer name of letters a Latin-1 or ASCII terminal cannot show: none is hostile."""


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_letters_a_terminals_encoding_lacks_are_escaped_never_a_crash(
    sandbox: Sandbox, env: dict[str, str], encoding: str
) -> None:
    customer = {"name": LETTERS, "email": "zoe@example.com", "phone": "+1"}
    sandbox.add_payment(
        payment_record(reference="order-zoe", customer=customer, created_at=CREATED)
    )
    shown = {**env, "PYTHONIOENCODING": encoding}
    code, screen = on_terminal(shown, "verify", "order-zoe")
    assert (code, raw_controls(screen)) == (0, [])
    assert "customer:        Zo" in screen and "zoe@example.com" in screen
    code, screen = on_terminal(shown, "verify", "order-zoe", "--json")
    assert (code, json.loads(screen)["customer"]["name"]) == (0, LETTERS)
    code, screen = on_terminal(shown, "list", "--csv")
    assert code == 0 and "zoe@example.com" in screen


# --- CSV, read back as a spreadsheet would ----------------------------------------------------


def read_csv(env: dict[str, str], *argv: str, exit_code: int = 0) -> list[dict[str, str]]:
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", *argv],
        env=env, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (exit_code, "")
    return list(csv.DictReader(io.StringIO(done.stdout)))


def test_list_csv_neutralises_formulas_and_keeps_numbers_numbers(
    sandbox: Sandbox, env: dict[str, str]
) -> None:
    negative = {**LISTED.list_shape(), "reference": "-refund-1", "amount": -700, "fee": -3}
    body = json.dumps({"data": [negative, HOSTILE.list_shape()]})
    sandbox.inject(Fault(status=200, body=body), path="/payments")
    rows = read_csv(env, "list", "--csv")
    assert [row["reference"] for row in rows] == ["'-refund-1", "order-hostile"]
    assert [row["customer_email"] for row in rows] == ["'-2+3@example.com", f"'{EMAIL}"]
    assert [int(row["amount"]) for row in rows] == [-700, 250_000]  # numbers, unquoted
    assert [int(row["fee"]) for row in rows] == [-3, 0]
    assert rows[0]["currency"] == "NGN\\x1b[31m"
    assert rows[1]["customer_paid"] == "false"


def test_list_csv_neutralises_a_formula_after_a_semicolon(
    sandbox: Sandbox, env: dict[str, str]
) -> None:
    """Excel in a locale whose list separator is ``;`` (much of Europe) opens a CSV file split
    at each ``;``: a customer's ``x;=HYPERLINK(...)`` would start a cell holding a formula.
    Read so, no cell of the output starts with one, and read at ``,`` each value keeps its
    text."""
    email = "ada@example.com;=HYPERLINK('http://evil.example')"
    customer = {"name": "Ada", "email": email, "phone": "+1"}
    shapes = [
        {**LISTED.list_shape(), "reference": 'order-1;"@SUM(1+1)"', "customer": customer},
        {**HOSTILE.list_shape(), "reference": "order-2;x;-2+3", "currency": "NGN;+1"},
    ]
    sandbox.inject(Fault(status=200, body=json.dumps({"data": shapes})), path="/payments")
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", "list", "--csv"],
        env=env, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    cells = [cell for row in csv.reader(io.StringIO(done.stdout), delimiter=";") for cell in row]
    assert [cell for cell in cells if cell.startswith(("=", "+", "-", "@"))] == []
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [row["reference"] for row in rows] == ['order-1;\'"@SUM(1+1)"', "order-2;x;'-2+3"]
    assert rows[0]["customer_email"] == "ada@example.com;'=HYPERLINK('http://evil.example')"
    assert rows[1]["currency"] == "NGN;'+1"


FORMULA_REFERENCE = "=cmd|' /C calc'!A0"


@pytest.fixture
def formula_ledger(tmp_path: Path) -> Path:
    """A ledger that refused a payment whose reference and reason are formulas."""
    path = tmp_path / "ledger.db"
    with Ledger(path) as made:
        made.create_table()
        made.refuse(FORMULA_REFERENCE, "+1 (the customer asked)")
        made.refuse("order-refused", "+1 (the customer asked)")
    return path


def test_reconcile_csv_neutralises_formulas(env: dict[str, str], formula_ledger: Path) -> None:
    [missed, refused] = read_csv(
        env, "reconcile", "--ledger", str(formula_ledger), "--csv", exit_code=4
    )
    assert (missed["kind"], missed["reference"]) == ("missed", "'@SUM(1+1)\\x1b[8m\\u202e")
    assert int(missed["amount"]) == 700
    assert (refused["reference"], refused["reason"]) == (
        "order-refused",
        "'+1 (the customer asked)",
    )


def test_ledger_csv_neutralises_formulas(env: dict[str, str], formula_ledger: Path) -> None:
    [row, _] = read_csv(env, "ledger", "list", "--ledger", str(formula_ledger), "--csv")
    assert (row["reference"], row["reason"]) == (
        f"'{FORMULA_REFERENCE}",
        "'+1 (the customer asked)",
    )
    assert (int(row["amount"]), int(row["attempts"])) == (0, 0)


# --- the rules, one by one --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Zoë Ngozi-Adébáyọ̀ 王", "Zoë Ngozi-Adébáyọ̀ 王"),  # letters of any script stay
        ("a\x1bb\x00c\x7fd\x9be", "a\\x1bb\\x00c\\x7fd\\x9be"),
        ("tab\tnew\nret\r", "tab\\tnew\\nret\\r"),
        (
            "\u061c\u200e\u200f\u202a\u202e\u2066\u2069",
            "\\u061c\\u200e\\u200f\\u202a\\u202e\\u2066\\u2069",
        ),
        ("line\u2028para\u2029", "line\\u2028para\\u2029"),
        (
            "fill\u3164\uffa0cgj\u034fvs\ufe0f\U000e0100",
            "fill\\u3164\\uffa0cgj\\u034fvs\\ufe0f\\U000e0100",
        ),
        ("lone \ud800", "lone \\ud800"),
        ("no\u00a0break  wide\u3000em\u2003", "no\\xa0break  wide\\u3000em\\u2003"),
        ("blank\u2800braille \u2801", "blank\\u2800braille \u2801"),  # the blank one alone
    ],
)
def test_printable_escapes_control_characters_only(text: str, shown: str) -> None:
    assert printable(text) == shown
    assert raw_controls(printable(text)) == []


def test_printable_can_keep_line_breaks_but_no_carriage_return() -> None:
    assert printable("a\r\nb\nc\rd\x1b", keep_newlines=True) == "a\nb\nc\\rd\\x1b"


def test_json_text_parses_back_to_the_same_strings() -> None:
    data = {"name": NAME, "k\u202e": ["\x85", "\ud800", 1, -2.5, None, "a\u00a0b ", "\U000e0041"]}
    text = json_text(data)
    assert json.loads(text) == data
    assert raw_controls(text.replace("\n", "")) == []
    assert '"a\\u00a0b "' in text


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Ada  Lovelace", "Ada  Lovelace"),  # spaces within stay
        ("order-1042 ", "order-1042\\x20"),
        ("  order-1042", "\\x20\\x20order-1042"),
        ("order\u00a01042", "order\\xa01042"),
        ("order-1042\\u200b", "order-1042\\\\u200b"),  # the text of an escape is not one
        ("order-1042\u200b", "order-1042\\u200b"),
        ("C:\\shop\\", "C:\\\\shop\\\\"),
        ("", ""),
    ],
)
def test_table_cell(text: str, shown: str) -> None:
    assert table_cell(text) == shown


@pytest.mark.parametrize(
    ("code", "shown"),
    [
        ("USD", "USD"),
        ("U\u0405D", "U\\u0405D"),  # a Cyrillic S
        ("\uff35SD", "\\uff35SD"),  # a fullwidth U
        ("COMPL\u0415TED", "COMPL\\u0415TED"),
        ("NGN\x1b[31m ", "NGN\\x1b[31m\\x20"),
        ("N\\u0405", "N\\\\u0405"),  # the text of an escape, not a letter
    ],
)
def test_a_code_cell_is_shown_in_ascii(code: str, shown: str) -> None:
    assert table_cell(Code(code)) == shown
    assert table_cell(cell_text(Code(code))) == shown  # a cell's text stays a Code


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "\\t=1"),  # made visible first: no longer a formula
        ("a=1", "a=1"),
        ("a;=1+1", "a;'=1+1"),  # a cell of its own where ; separates cells
        ('a;"@SUM(A1)"', 'a;\'"@SUM(A1)"'),  # a quoted one too
        ("=1;-1", "'=1;'-1"),
        ("a;b; =1", "a;b; =1"),
        (-5, -5),
        (0, 0),
        (True, "true"),
        (None, "-"),
    ],
)
def test_spreadsheet_cell(value: object, cell: str | int) -> None:
    assert spreadsheet_cell(value) == cell
    assert type(spreadsheet_cell(value)) is type(cell)

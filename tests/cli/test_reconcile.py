"""``paysdk reconcile`` end to end: the sandbox, a SQLite ledger, output and exit codes."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import pty
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import paysdk
from paysdk.cli import main
from paysdk.ledger import Ledger
from paysdk.sandbox import COMPLETED_REFERENCE, FAILED_REFERENCE, Sandbox


@contextlib.contextmanager
def new_ledger(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, paysdk.Client, Ledger]]:
    """The sandbox in the environment, and a new ledger with a client of it, to seed."""
    monkeypatch.setenv("PAYSDK_BASE_URL", sandbox.base_url)
    monkeypatch.setenv("PAYSDK_SECRET_KEY", sandbox.secret_key)
    path = tmp_path / "ledger.db"
    with (
        paysdk.Client(secret_key=sandbox.secret_key, base_url=sandbox.base_url) as client,
        Ledger(path) as ledger,
    ):
        yield path, client, ledger


@pytest.fixture
def ledger_path(sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ledger where every completed payment but order-1042 is fulfilled, and order-1043
    (failed at the service) is too: one missed payment and one alarm."""
    with new_ledger(sandbox, tmp_path, monkeypatch) as (path, client, ledger):
        for record in sandbox.payments:
            if record.succeeded and record.reference != COMPLETED_REFERENCE:
                ledger.fulfil_once(client.verify(record.reference), lambda p: None)
        failed = client.verify(FAILED_REFERENCE).model_copy(update={"success": True})
        ledger.fulfil_once(failed, lambda p: None)  # as a buggy handler once did
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_table_lists_what_needs_attention_and_exits_4(
    ledger_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "reconcile", "--ledger", f"sqlite:///{ledger_path}")
    assert (code, err) == (4, "")  # stderr is no terminal here: no progress
    lines = out.splitlines()
    assert lines[0].split() == [
        "KIND", "REFERENCE", "STATUS", "AMOUNT", "CURRENCY", "FULFILLED", "AMOUNT",
        "FULFILLED", "CURRENCY", "REASON",
    ]  # fmt: skip
    assert lines[1].split() == [
        "missed", "order-1042", "COMPLETED", "2500000", "NGN", "-", "-", "-",
    ]  # fmt: skip
    assert lines[2].split() == ["not_completed", "order-1043", "FAILED", *["4999", "USD"] * 2, "-"]
    assert lines[-2].startswith("8 listed, 6 completed, 5 fulfilled as paid; 1 missed")
    assert lines[-1] == "needs attention: 1 missed, 1 alarms"


def test_json_and_csv_carry_the_same_report(
    ledger_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "reconcile", "--ledger", str(ledger_path), "--json")
    report = json.loads(out)
    assert code == 4
    assert report["needs_attention"] is True
    assert report["summary"] == {
        "listed": 8,
        "completed": 6,
        "fulfilled_ok": 5,
        "missed": 1,
        "not_completed": 1,
        "not_listed": 0,
        "mismatch": 0,
        "unknown": 0,
        "refused": 0,
        "ignored": 0,
        "not_ours": 0,
        "missed_fulfilled_now": 0,
    }
    assert [(d["kind"], d["reference"]) for d in report["discrepancies"]] == [
        ("missed", "order-1042"),
        ("not_completed", "order-1043"),
    ]
    code, out, _ = run(capsys, "reconcile", "--ledger", str(ledger_path), "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 4
    assert [(r["kind"], r["reference"], r["fulfilled_amount"]) for r in rows] == [
        ("missed", "order-1042", "-"),
        ("not_completed", "order-1043", "4999"),
    ]


def test_nothing_to_do_exits_0(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for record in sandbox.payments:
        sandbox.remove_payment(record.reference)
    with Ledger(tmp_path / "l.db") as made:
        made.create_table()
    code, out, _ = run(capsys, "reconcile", "--ledger", str(tmp_path / "l.db"), *_env(sandbox))
    assert code == 0
    assert out.splitlines()[-1] == "all clear: nothing needs attention"


def _env(sandbox: Sandbox) -> list[str]:
    return ["--base-url", sandbox.base_url, "--secret-key", sandbox.secret_key]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_goes_to_a_terminals_stderr_only(
    ledger_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setenv("TERM", "xterm-256color")  # a CI job's may be dumb
    code, out, _ = run(capsys, "reconcile", "--ledger", str(ledger_path), "--json")
    assert code == 4
    assert "\rchecked 8 payments" in terminal.getvalue()
    assert "checked" not in out
    json.loads(out)  # stdout stays clean JSON


def _stderr_in_a_terminal(argv: list[str], env: dict[str, str]) -> tuple[int, bytes]:
    """The real command run with its stderr a pseudo-terminal: its exit code, and what the
    terminal received."""
    primary, secondary = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "paysdk", *argv],
            stdout=subprocess.DEVNULL, stderr=secondary, env=env, timeout=60, check=False,
        )  # fmt: skip
        os.close(secondary)
        received = b""
        while select.select([primary], [], [], 0.5)[0]:
            try:
                piece = os.read(primary, 4096)
            except OSError:  # Linux: the other end is closed and all is read
                break
            if not piece:
                break
            received += piece
    finally:
        os.close(primary)
    return done.returncode, received


@pytest.mark.parametrize("term", ["xterm-256color", "dumb"])
def test_progress_rewrites_its_line_only_on_a_terminal_that_can(
    ledger_path: Path, sandbox: Sandbox, term: str
) -> None:
    """``TERM=dumb`` (Emacs's shell, some CI log viewers) cannot clear a line: no progress."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    env["TERM"] = term
    argv = ["reconcile", "--ledger", str(ledger_path), *_env(sandbox)]
    code, received = _stderr_in_a_terminal(argv, env)
    assert code == 4
    if term == "dumb":
        assert received == b""
    else:
        assert received == b"\rchecked 8 payments\r\x1b[K"


@pytest.mark.parametrize(
    ("ledger", "code", "message"),
    [
        ("mysql://db/shop", 2, "unsupported ledger URL scheme"),
        ("{tmp}/typo.db", 2, "--ledger: the ledger '{tmp}/typo.db' does not exist"),
        ("sqlite:///{tmp}/typo.db", 2, "the ledger '{tmp}/typo.db' does not exist (paysdk never"),
        ("/no/such/dir/l.db", 2, "the ledger '/no/such/dir/l.db' does not exist"),
        ("{tmp}/empty.db", 2, "--table: the ledger has no table 'paysdk_fulfilments'"),
    ],
)
def test_a_bad_ledger_is_one_line_on_stderr(
    sandbox: Sandbox,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    ledger: str,
    code: int,
    message: str,
) -> None:
    (tmp_path / "empty.db").touch()
    argv = ["reconcile", "--ledger", ledger.format(tmp=tmp_path), *_env(sandbox)]
    exit_code, out, err = run(capsys, *argv)
    assert (exit_code, out) == (code, "")
    assert message.format(tmp=tmp_path) in err
    assert err.count("\n") == 1
    assert not (tmp_path / "typo.db").exists()


def test_a_ledger_named_from_another_directory_says_where_it_looked_and_what_to_name(
    sandbox: Sandbox,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first hour's ``--ledger sqlite:///fulfilments.db``, run from a directory other than
    the app's: the message names the directory it looked in, and the file to give."""
    app = tmp_path / "shop"
    app.mkdir()
    Ledger(f"sqlite:///{app / 'fulfilments.db'}").close()
    monkeypatch.chdir(tmp_path)
    argv = ["reconcile", "--ledger", "sqlite:///fulfilments.db", *_env(sandbox)]
    exit_code, out, err = run(capsys, *argv)
    assert (exit_code, out) == (2, "")
    assert f"the ledger 'fulfilments.db' does not exist in {tmp_path} (paysdk never" in err
    assert "name the file your app's Ledger writes to" in err
    assert not (tmp_path / "fulfilments.db").exists()


def test_a_ledger_named_from_a_directory_since_removed_is_said_not_to_exist(
    sandbox: Sandbox,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Run from a directory removed since (a build's), where the working directory has no
    name: the ledger is said not to exist, as from any other, never an internal error."""
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    argv = ["reconcile", "--ledger", "sqlite:///fulfilments.db", *_env(sandbox)]
    exit_code, out, err = run(capsys, *argv)
    assert (exit_code, out) == (2, "")
    assert "the ledger 'fulfilments.db' does not exist (paysdk never creates one)" in err


def test_a_cut_list_says_so_and_still_counts_everything(
    ledger_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{ledger_path}"
    code, out, _ = run(capsys, "reconcile", "--ledger", url, "--max-discrepancies", "1")
    assert code == 4
    lines = out.splitlines()
    assert lines[1].split()[1] in ("order-1042", "order-1043")
    assert not lines[2].strip()  # one row shown
    assert lines[3].startswith("the list was cut: 1 of 2 discrepancies shown")
    assert "1 missed, 1 not completed" in lines[-2]
    code, out, err = run(capsys, "reconcile", "--ledger", url, "--max-discrepancies", "1", "--json")
    assert (code, json.loads(out)["truncated"]) == (4, True)
    assert err.startswith("the list was cut")


def test_a_payment_whose_outcome_is_unknown_is_listed_for_a_person(
    ledger_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import time

    from tests.support.ledger_worker import abandon_claim

    abandon_claim(str(ledger_path), COMPLETED_REFERENCE, lease=0.1)  # its worker died mid-action
    time.sleep(0.3)  # its lease runs out: whether it shipped is unknown
    code, out, _ = run(capsys, "reconcile", "--ledger", str(ledger_path), "--json")
    report = json.loads(out)
    assert code == 4
    assert report["summary"]["unknown"] == 1
    assert report["summary"]["missed"] == 0
    assert ("unknown", COMPLETED_REFERENCE) in [
        (d["kind"], d["reference"]) for d in report["discrepancies"]
    ]

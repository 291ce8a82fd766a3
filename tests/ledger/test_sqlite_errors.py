"""What the SQLite ledger says when its file cannot be used: the file's path, and the problem.

Tests run as root in CI, where file modes stop nothing: a read-only ledger is made with the
immutable attribute there (``chattr +i``: not even root may write it), and with a mode elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import paysdk
from paysdk.ledger import AsyncLedger, Ledger, LedgerError, Outcome
from paysdk.ledger._databases.sqlite import sqlite_error
from tests.support.either_ledger import EitherLedger


def paid(reference: str = "order-1") -> paysdk.VerifiedPayment:
    return paysdk.VerifiedPayment(reference=reference, amount=2500, currency="NGN", success=True)


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` (and the WAL files beside it) may not be written by this process."""
    files = [path, *path.parent.glob(f"{path.name}-*")]
    if os.geteuid() != 0:
        for file in files:
            os.chmod(file, 0o444)
        yield
        return
    made = subprocess.run(["chattr", "+i", *map(str, files)], capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"root, and chattr +i is not supported here: {made.stderr!r}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", *map(str, files)], check=True)


def test_a_read_only_ledger_file_names_the_file_and_says_it_is_read_only(tmp_path: Path) -> None:
    path = tmp_path / "orders.db"
    with Ledger(path) as ledger:
        assert ledger.fulfil_once(paid("order-0"), lambda p: None).fulfilled_now
    with read_only(path), Ledger(path) as ledger:
        assert ledger.row("order-0") is not None  # reading still works
        with pytest.raises(LedgerError) as raised:
            ledger.fulfil_once(paid(), lambda p: None)
    message = str(raised.value)
    assert str(path) in message
    assert "is read-only for this process" in message
    assert "attempt to write a readonly database" in message  # SQLite's own words, kept


def test_a_missing_directory_names_it(tmp_path: Path) -> None:
    path = tmp_path / "no-such-dir" / "orders.db"
    with Ledger(path) as ledger, pytest.raises(LedgerError) as raised:
        ledger.fulfil_once(paid(), lambda p: None)
    message = str(raised.value)
    assert str(path) in message
    assert f"its directory {str(path.parent)!r} does not exist" in message


def test_a_path_that_is_a_directory_says_so(tmp_path: Path) -> None:
    """A deployment's path set to the data directory (``/var/lib/shop``) rather than the file in
    it: the error says so, where SQLite says only that it is "unable to open database file"."""
    with Ledger(tmp_path) as ledger, pytest.raises(LedgerError) as raised:
        ledger.fulfil_once(paid(), lambda p: None)
    assert f"{str(tmp_path)!r} cannot be opened: it is a directory" in str(raised.value)


def test_a_file_that_is_not_a_database_says_so_and_is_left_as_it_is(tmp_path: Path) -> None:
    """A path that names another file (a log, a config file, an encrypted database) is refused
    saying it is no SQLite database, and the file is not written."""
    path = tmp_path / "orders.log"
    path.write_bytes(b"2026-11-29 order-1042 shipped\n" * 200)
    shipped: list[paysdk.VerifiedPayment] = []
    with Ledger(path) as ledger, pytest.raises(LedgerError) as raised:
        ledger.fulfil_once(paid(), shipped.append)
    assert f"{str(path)!r} is not a SQLite database" in str(raised.value)
    assert path.read_bytes() == b"2026-11-29 order-1042 shipped\n" * 200
    assert shipped == []


def test_a_full_filesystem_is_said_to_be_full() -> None:
    """What SQLite raises when the filesystem that holds the file has no room for it to grow (a
    full disk cannot be made in a test without mounting one): the error says where to free
    space."""
    full = sqlite3.OperationalError("database or disk is full")
    said = str(sqlite_error(full, "/var/lib/shop/orders.db", 30.0))
    assert "'/var/lib/shop/orders.db' cannot grow: the filesystem that holds it" in said


def test_a_ledger_locked_for_longer_than_the_timeout_says_so(tmp_path: Path) -> None:
    path = tmp_path / "orders.db"
    with Ledger(path, timeout=0.2) as ledger:
        ledger.create_table()
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as holder:
            holder.execute("BEGIN IMMEDIATE")  # another process writes, and goes on writing
            with pytest.raises(LedgerError) as raised:
                ledger.fulfil_once(paid(), lambda p: None)
            holder.execute("ROLLBACK")
    message = str(raised.value)
    assert str(path) in message
    assert "stayed locked by another connection for more than 0.2s" in message


@contextlib.contextmanager
def another_process_writing(path: Path, for_seconds: float) -> Iterator[None]:
    """Another connection writes the new file (in rollback mode, as every new file starts) and
    commits after ``for_seconds``, from a thread: as a worker of another process that opened the
    ledger first."""
    writer = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("CREATE TABLE someone_else (x)")
    done = threading.Timer(for_seconds, lambda: writer.execute("COMMIT"))
    done.start()
    try:
        yield
    finally:
        done.join()
        writer.close()


def test_a_new_ledger_opened_while_another_process_writes_it_waits_for_it(tmp_path: Path) -> None:
    """The switch to WAL fails at once there (SQLite does not wait where it could deadlock):
    the ledger tries again within its timeout, so workers opening a new ledger together all
    get it."""
    path = tmp_path / "ledger.db"
    with another_process_writing(path, for_seconds=0.3), Ledger(path, timeout=10) as ledger:
        assert ledger.fulfil_once(paid(), lambda payment: None).outcome.value == "fulfilled"
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_new_ledger_still_locked_after_its_timeout_says_so(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with another_process_writing(path, for_seconds=1.5), Ledger(path, timeout=0.5) as ledger:
        started = time.monotonic()
        with pytest.raises(LedgerError, match=r"stayed locked by another connection for more than"):
            ledger.fulfil_once(paid(), lambda payment: None)
        waited = time.monotonic() - started
    assert waited >= 0.4  # it waited for the lock, as the message says


@pytest.mark.anyio
async def test_more_async_fulfilments_at_once_than_worker_threads_all_fulfil(
    tmp_path: Path,
) -> None:
    """An async ledger runs each SQLite call in one of anyio's 40 worker threads. Sixty
    fulfilments at once (one callback each, sixty accounts' first payments) all fulfil: the
    writers waiting for the file's one write lock wait holding no thread, so the one holding it
    always has a thread to commit in, and none waits out the ledger's timeout."""
    shipped: list[str] = []
    async with AsyncLedger(tmp_path / "ledger.db", timeout=5) as ledger:
        await ledger.create_table()

        async def deliver(n: int) -> str:
            payment = paid(f"order-{n}").issued_by(f"acct-{n}", f"key-{n}")
            return (await ledger.fulfil_once(payment, lambda p: shipped.append(p.account))).outcome

        async with anyio.create_task_group() as tasks:
            outcomes: list[str] = []

            async def run(n: int) -> None:
                outcomes.append(await deliver(n))

            for n in range(60):
                tasks.start_soon(run, n)
    assert outcomes == [Outcome.FULFILLED] * 60
    assert sorted(shipped) == sorted(f"acct-{n}" for n in range(60))


def delete_with_journal(path: Path) -> None:
    """Delete the SQLite file at ``path`` and its WAL files, as ``rm orders.db*`` does."""
    for file in path.parent.glob(f"{path.name}*"):
        file.unlink()


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_ledger_whose_file_was_deleted_or_replaced_refuses_rather_than_fulfil_again(
    tmp_path: Path, kind: str
) -> None:
    """A process that opened the ledger before its file was deleted, or replaced (a backup
    restored with ``mv``), would go on in the file it opened, unseen by a process started since,
    which opens the file at the path: a payment the newer one fulfilled, delivered again to the
    older one, would run twice. The older one refuses instead, naming the file."""
    path = tmp_path / "orders.db"
    ran: list[str] = []
    earlier = EitherLedger((AsyncLedger if kind == "async" else Ledger)(path))
    try:
        assert (await earlier.fulfil_once(paid("order-1"), lambda p: ran.append("1"))).fulfilled_now
        delete_with_journal(path)
        with pytest.raises(LedgerError) as deleted:
            await earlier.row("order-1")
        with Ledger(path) as later:  # a process started since: a new file at the path
            assert later.fulfil_once(paid("order-2"), lambda p: ran.append("2")).fulfilled_now
        with pytest.raises(LedgerError) as replaced:  # its callback delivered again, elsewhere
            await earlier.fulfil_once(paid("order-2"), lambda p: ran.append("2 again"))
    finally:
        await earlier.close()
    assert ran == ["1", "2"]
    assert str(deleted.value).startswith(f"the SQLite ledger {str(path)!r} was deleted after")
    message = str(replaced.value)
    assert message.startswith(f"the SQLite ledger {str(path)!r} was replaced by another file")
    assert message.endswith("(or restart the process) to use the file at the path")


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_ledger_at_a_relative_path_keeps_its_file_when_the_process_changes_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """``sqlite:///orders.db`` names the file in the directory the ledger first opened it from:
    a process that changes directory since (a daemon's ``chdir("/")``) still fulfils from that
    file, neither refused as if it were deleted nor opening another of that name."""
    first, later = tmp_path / "first", tmp_path / "later"
    first.mkdir()
    later.mkdir()
    monkeypatch.chdir(first)
    ran: list[str] = []
    ledger = EitherLedger((AsyncLedger if kind == "async" else Ledger)("sqlite:///orders.db"))
    try:
        assert (await ledger.fulfil_once(paid("order-1"), lambda p: ran.append("1"))).fulfilled_now
        monkeypatch.chdir(later)
        again = await ledger.fulfil_once(paid("order-1"), lambda p: ran.append("1 again"))
        row = await ledger.row("order-1")
    finally:
        await ledger.close()
    assert (again.outcome, ran) == (Outcome.ALREADY_FULFILLED, ["1"])
    assert row is not None and row.state == "fulfilled"
    assert sorted(path.name for path in later.iterdir()) == []


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_ledger_whose_directory_was_replaced_by_a_file_refuses_as_a_ledger_error(
    tmp_path: Path, kind: str
) -> None:
    """The directory the file was in replaced by a file (``mv data data.old``, then a file of
    its name): the path names no file, as if deleted, and the call is refused with a
    LedgerError, never the bare NotADirectoryError of looking the path up; so is a path that
    cannot be looked up at all (a symbolic link loop)."""
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / "orders.db"
    earlier = EitherLedger((AsyncLedger if kind == "async" else Ledger)(path))
    try:
        assert (await earlier.fulfil_once(paid("order-1"), lambda p: None)).fulfilled_now
        folder.rename(tmp_path / "data.old")
        folder.write_text("")
        with pytest.raises(LedgerError) as refused:
            await earlier.row("order-1")
        folder.unlink()
        folder.symlink_to(folder)  # a loop: the path cannot be looked up at all
        with pytest.raises(LedgerError) as looped:
            await earlier.row("order-1")
    finally:
        await earlier.close()
    assert str(refused.value).startswith(f"the SQLite ledger {str(path)!r} was deleted after")
    assert str(looped.value).startswith(f"the SQLite ledger {str(path)!r} cannot be looked up")


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_relative_path_keeps_its_file_when_the_directory_changes_as_it_first_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Another thread changing the process's directory while the first connection opens the file
    changes nothing: the path was made absolute before, so the ledger still guards that file (a
    deletion refused) and opens none in the new directory."""
    first, later = tmp_path / "first", tmp_path / "later"
    first.mkdir()
    later.mkdir()
    monkeypatch.chdir(first)
    connect = sqlite3.connect

    def connect_then_another_thread_changes_directory(
        path: str, **options: Any
    ) -> sqlite3.Connection:
        connection: sqlite3.Connection = connect(path, **options)
        os.chdir(later)
        return connection

    monkeypatch.setattr(sqlite3, "connect", connect_then_another_thread_changes_directory)
    ledger = EitherLedger((AsyncLedger if kind == "async" else Ledger)("sqlite:///orders.db"))
    try:
        assert (await ledger.fulfil_once(paid("order-1"), lambda p: None)).fulfilled_now
        delete_with_journal(first / "orders.db")
        with pytest.raises(LedgerError, match=r"'orders.db' was deleted after this ledger opened"):
            await ledger.row("order-1")
    finally:
        await ledger.close()
    assert sorted(path.name for path in later.iterdir()) == []


def test_a_read_only_ledger_at_a_relative_path_names_its_directory_after_a_chdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The directory the message names (where SQLite writes the journal) is the file's, not the
    one the process changed to since it opened the file."""
    first, later = tmp_path / "first", tmp_path / "later"
    first.mkdir()
    later.mkdir()
    with Ledger(first / "orders.db") as ledger:
        ledger.create_table()
    monkeypatch.chdir(first)
    with read_only(first / "orders.db"), Ledger("sqlite:///orders.db") as ledger:
        assert ledger.row("order-0") is None  # opened here, then the process moves on
        monkeypatch.chdir(later)
        with pytest.raises(LedgerError) as raised:
            ledger.fulfil_once(paid(), lambda p: None)
    message = str(raised.value)
    assert "'orders.db' is read-only for this process" in message
    assert f"(orders.db-wal, -shm) in {str(first)!r}" in message

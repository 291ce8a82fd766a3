"""What the SQLite ledger says when its file cannot be used: the file's path, and the problem.

Tests run as root in CI, where file modes stop nothing: a read-only ledger is made with the
immutable attribute there (``chattr +i``: not even root may write it), and with a mode elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import paysdk
from paysdk.ledger import Ledger, LedgerError


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

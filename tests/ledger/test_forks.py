"""A ledger made before a fork works in the child, whatever the parent's threads were doing.

A prefork server or ``multiprocessing`` forks a process whose other threads may be inside the
ledger at that moment, holding its locks: the child has none of those threads, so a lock they
held is never let go there. Each test runs its merchant's process in a fresh interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the platform cannot fork")

FORKED_WHILE_A_THREAD_OPENS_THE_FILE = """
import faulthandler
import os
import subprocess
import sys
import tempfile
import threading
import time

import paysdk
from paysdk.testing import verified_payment

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "orders.db")
    holder = subprocess.Popen(  # another worker writing the new file: the switch to WAL waits
        [
            sys.executable,
            "-c",
            "import sqlite3, sys; connection = sqlite3.connect(sys.argv[1], isolation_level=None);"
            " connection.execute('CREATE TABLE t (x)'); connection.execute('BEGIN EXCLUSIVE');"
            " print('held', flush=True); sys.stdin.readline(); connection.execute('COMMIT')",
            path,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    assert holder.stdout.readline() == "held\\n"
    ledger = paysdk.Ledger(f"sqlite:///{path}")
    payment = verified_payment(reference="order-1")
    thread = threading.Thread(target=ledger.fulfil_once, args=(payment, lambda p: "parent"))
    thread.start()
    time.sleep(0.3)  # the thread waits for the file, inside the ledger
    pid = os.fork()
    if pid == 0:
        faulthandler.dump_traceback_later(30, exit=True)  # a hang fails, with its traceback
        ledger.fulfil_once(verified_payment(reference="order-2"), lambda p: "child")
        os._exit(0)
    holder.stdin.write("go\\n")
    holder.stdin.flush()
    assert holder.wait(30) == 0
    thread.join(30)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child could not use the ledger"
    ledger.close()
"""


def test_a_child_forked_while_a_thread_of_the_parent_opens_the_sqlite_file_uses_it() -> None:
    """The parent's thread waits inside the ledger for a file another process writes; the child
    forked meanwhile fulfils a payment of its own instead of waiting forever."""
    done = subprocess.run(
        [sys.executable, "-c", FORKED_WHILE_A_THREAD_OPENS_THE_FILE],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr

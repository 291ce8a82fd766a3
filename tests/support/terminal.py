"""Run the real ``paysdk`` command in pseudo-terminals, as a person at a terminal runs it: its
standard input and output on one, its standard error on another, each read whole."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["run_in_terminal"]

SRC = str(Path(__file__).resolve().parents[2] / "src")


def run_in_terminal(*argv: str, timeout: float = 30) -> tuple[int, str, str]:
    """``python -m paysdk *argv`` in pseudo-terminals; (exit code, stdout, stderr).

    The command imports this checkout's ``src``; the environment is this process's otherwise.
    """
    out_main, out_side = pty.openpty()
    err_main, err_side = pty.openpty()
    process = subprocess.Popen(  # this interpreter, the project's own command
        [sys.executable, "-m", "paysdk", *argv],
        stdin=out_side,
        stdout=out_side,
        stderr=err_side,
        env={**os.environ, "PYTHONPATH": SRC},
    )
    os.close(out_side)  # the command holds the only other ends: reading ends when it exits
    os.close(err_side)
    read = {out_main: bytearray(), err_main: bytearray()}
    reading = set(read)
    deadline = time.monotonic() + timeout
    try:
        while reading and time.monotonic() < deadline:
            ready, _, _ = select.select(list(reading), [], [], 0.1)
            for fd in ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: every process closed its end
                    chunk = b""
                if chunk:
                    read[fd] += chunk
                else:
                    reading.discard(fd)
        code = process.wait(timeout=max(0.1, deadline - time.monotonic()))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(out_main)
        os.close(err_main)
    return code, _text(read[out_main]), _text(read[err_main])


def _text(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", "replace").replace("\r\n", "\n")

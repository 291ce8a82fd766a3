"""``paysdk`` run as a merchant runs it, for the sandbox's command-line tests: the command with a
runtime directory of its own, free ports, and what a merchant's callback view saw (the fixtures are
``tests/cli/conftest.py``'s)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

KEY = "sk_sandbox_loop_test"
ROOT = Path(__file__).resolve().parents[2]


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


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return True
    except ConnectionRefusedError:
        return False


@dataclass
class Merchant:
    """A merchant's Flask callback view (``verified_callback``) on a real server, its client
    pointed at the test's sandbox: what it fulfilled, and which payments it saw failed."""

    url: str
    fulfilled: list[str]
    failed: list[str]


def pay(cli: Paysdk, port: int, *argv: str) -> subprocess.CompletedProcess[str]:
    """``paysdk pay ...`` against the sandbox on ``port``, found through the environment."""
    return cli("pay", *argv, PAYSDK_BASE_URL=f"http://127.0.0.1:{port}", PAYSDK_SECRET_KEY=KEY)

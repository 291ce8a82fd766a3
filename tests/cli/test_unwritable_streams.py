"""The ``paysdk`` command run as a script, a cron job or a container runs it, its standard output
or error on a full disk (``/dev/full``): the exit code says what happened to the command, and a
full disk is never called a bug in paysdk."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox
from tests.support.ports import unused_port

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox() as running:
        yield running


@pytest.fixture
def env(sandbox: Sandbox) -> dict[str, str]:
    others = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    return {**others, "PAYSDK_BASE_URL": sandbox.base_url, "PAYSDK_SECRET_KEY": sandbox.secret_key}


def run_into_full(
    env: dict[str, str], stream: str, *argv: str
) -> subprocess.CompletedProcess[bytes]:
    """``paysdk argv`` with ``stream`` (``stdout`` or ``stderr``) written to ``/dev/full``, the
    other captured."""
    with open("/dev/full", "wb") as full:
        out = full if stream == "stdout" else subprocess.PIPE
        err = full if stream == "stderr" else subprocess.PIPE
        return subprocess.run(
            [sys.executable, "-m", "paysdk", *argv],
            stdout=out, stderr=err, env=env, timeout=60, check=False,
        )  # fmt: skip


@pytest.mark.parametrize(
    "argv",
    [
        ("list", "--json"),
        ("list",),
        ("list", "--csv"),
        ("verify", COMPLETED_REFERENCE),
        ("--help",),
        ("--version",),
        ("verify", "--help"),
    ],
)
def test_output_to_a_full_disk_is_an_error_of_its_own_not_a_bug(
    env: dict[str, str], argv: tuple[str, ...]
) -> None:
    """``paysdk list --json > payments.json`` on a full disk: one line saying the output could
    not be written, exit 74 (``EX_IOERR``), no traceback asking for a bug report."""
    done = run_into_full(env, "stdout", *argv)
    assert done.returncode == 74
    assert done.stderr == b"paysdk: error: cannot write the output: No space left on device\n"


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (("verify", "order-1042", "--base-url", "http://127.0.0.1:{port}", "--max-retries=0"), 3),
        (("verify", "--jsn"), 2),
        (("reconcile", "--ledger", "/nonexistent/ledger.db"), 2),
        (("verify", "no-such-order-anywhere"), 1),
        (("list", "--verbose"), 0),
        (("list",), 0),
    ],
)
def test_errors_to_a_full_disk_keep_the_exit_code(
    env: dict[str, str], argv: tuple[str, ...], code: int
) -> None:
    """``paysdk ... 2>>/var/log/paysdk.log`` on a full disk: the exit code still tells an outage
    (3) from a usage error (2) or the service's refusal (1), and ``--verbose``'s lines lost make
    no failure of a command that succeeded."""
    port = unused_port()
    done = run_into_full(env, "stderr", *(arg.format(port=port) for arg in argv))
    assert done.returncode == code
    if code == 0:
        assert b"order-1042" in done.stdout
    else:
        assert done.stdout == b""

"""A second terminal and a sandbox already running detached: ``paysdk sandbox env`` prints its
export lines again, and a command run without a base URL says how to use it."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.cli.sandbox_cli import KEY, ROOT, Paysdk
from tests.support.ports import unused_port

PAYSDK = '"$PY" -m paysdk'
"""The command as a shell runs it, ``PY`` the interpreter of the tests."""


def test_a_second_shell_is_told_of_the_running_sandbox_and_evals_its_export_lines(
    cli: Paysdk, port: int
) -> None:
    """What the first hour's page gives a new terminal, run there: a bare ``NAME=value`` would
    set shell variables no command started from that shell sees."""
    page = (ROOT / "docs" / "first-hour.md").read_text(encoding="utf-8")
    (given,) = re.findall(r"`(eval [^`]*paysdk sandbox env[^`]*)` there", page)
    cli.start(port)
    unset = cli("list")
    assert unset.returncode == 2
    assert unset.stderr.rstrip("\n").endswith(
        f"; a sandbox runs in the background at http://127.0.0.1:{port}: "
        '`eval "$(paysdk sandbox env)"` points this shell at it'
    )
    second_shell = subprocess.run(
        ["sh", "-c", given.replace("paysdk", PAYSDK) + f" && {PAYSDK} list --csv"],
        env={**cli.env, "PY": sys.executable},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (second_shell.returncode, second_shell.stderr) == (0, "")
    assert second_shell.stdout.startswith("id,reference,status,")
    assert ",order-1042,COMPLETED," in second_shell.stdout


def test_env_prints_the_lines_detach_printed(cli: Paysdk, port: int) -> None:
    started = cli.start(port)
    again = cli("sandbox", "env")
    assert (again.returncode, again.stderr) == (0, "")
    assert again.stdout == started.stdout
    assert again.stdout.splitlines() == [
        f"export PAYSDK_BASE_URL=http://127.0.0.1:{port}",
        f"export PAYSDK_SECRET_KEY={KEY}",
    ]


def test_with_two_sandboxes_running_env_and_the_hint_ask_for_a_port(cli: Paysdk, port: int) -> None:
    other = unused_port()
    cli.start(port)
    cli.start(other)
    chosen = cli("sandbox", "env", "--port", str(other))
    assert chosen.returncode == 0, chosen.stderr
    assert f"export PAYSDK_BASE_URL=http://127.0.0.1:{other}" in chosen.stdout.splitlines()
    unchosen = cli("sandbox", "env")
    assert unchosen.returncode == 2
    assert ": choose one with --port" in unchosen.stderr
    assert unchosen.stdout == ""
    hinted = cli("verify", "order-1042", PAYSDK_SECRET_KEY=KEY)
    assert hinted.returncode == 2
    assert '`eval "$(paysdk sandbox env --port PORT)"` points this shell at one' in hinted.stderr
    assert f"http://127.0.0.1:{port}" in hinted.stderr
    assert f"http://127.0.0.1:{other}" in hinted.stderr


def test_without_a_sandbox_env_fails_and_the_error_gives_no_hint(cli: Paysdk) -> None:
    none = cli("sandbox", "env")
    assert none.returncode == 1
    assert none.stdout == ""
    assert "no sandbox is running in the background" in none.stderr
    unset = cli("list")
    assert unset.returncode == 2
    assert "sandbox" not in unset.stderr


def test_a_base_url_set_elsewhere_gets_no_hint(cli: Paysdk, port: int) -> None:
    cli.start(port)
    keyless = cli("list", PAYSDK_BASE_URL="https://api.example.com")
    assert keyless.returncode == 2
    assert "no secret key" in keyless.stderr
    assert "sandbox" not in keyless.stderr

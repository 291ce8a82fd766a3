"""``paysdk sandbox --detach``, ``stop`` and ``status`` over real processes: one sandbox per
port, stale and foreign pid files, the environment's port, and the state file."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from paysdk.cli._background import alive
from paysdk.cli._sandbox import _stop_on_signals
from tests.cli.sandbox_cli import KEY, Paysdk, listening
from tests.support.ports import unused_port

# --- starting, stopping, status ---------------------------------------------------------------


def test_a_second_sandbox_on_the_same_port_is_refused(cli: Paysdk, port: int) -> None:
    cli.start(port)
    again = cli("sandbox", "--detach", "--port", str(port))
    assert again.returncode == 2
    assert f"a sandbox is already running on port {port} (pid {cli.pid(port)}" in again.stderr
    assert f"paysdk sandbox stop --port {port}" in again.stderr


def test_a_port_in_use_by_another_program_is_an_error_and_leaves_no_pid_file(
    cli: Paysdk,
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = cli("sandbox", "--detach", "--port", str(port))
    assert done.returncode == 2
    assert f"the sandbox did not start: cannot listen on 127.0.0.1:{port}" in done.stderr
    assert not cli.pid_file(port).exists()


def test_stop_after_the_sandbox_died_removes_its_stale_pid_file(cli: Paysdk, port: int) -> None:
    cli.start(port)
    pid = cli.pid(port)
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    status = cli("sandbox", "status", "--port", str(port))
    assert status.returncode == 1
    assert f"port {port}: not running (stale pid file" in status.stdout
    stopped = cli("sandbox", "stop", "--port", str(port))
    assert stopped.returncode == 0
    assert f"the sandbox on port {port} (pid {pid}) was not running" in stopped.stderr
    assert not cli.pid_file(port).exists()
    assert cli("sandbox", "stop", "--port", str(port)).returncode == 0  # nothing left to stop


def test_stop_never_signals_a_live_process_that_is_not_the_sandbox(cli: Paysdk, port: int) -> None:
    cli.runtime.mkdir()
    record = {"pid": os.getpid(), "port": port, "base_url": f"http://127.0.0.1:{port}",
              "secret_key": KEY, "log": ""}  # fmt: skip
    cli.pid_file(port).write_text(json.dumps(record))
    stopped = cli("sandbox", "stop", "--port", str(port))
    assert stopped.returncode == 1
    assert f"pid {os.getpid()} is running but no sandbox answers for it" in stopped.stderr
    assert cli.pid_file(port).exists()  # left for the user to look into
    cli.pid_file(port).unlink()  # so that the fixture does not stop this process


@pytest.mark.parametrize(
    ("pid", "listed_port"),
    [(2**70, None), (2**31, None), (0, None), (-1, None), (None, 0), (None, 2**70), (None, -5)],
)
def test_a_pid_file_whose_pid_or_port_no_process_or_socket_can_have_is_unreadable(
    cli: Paysdk, port: int, pid: int | None, listed_port: int | None
) -> None:
    """A pid past what a pid can be, 0 or a negative one (which ``kill`` takes for a group, or
    every process), or a port outside 1 to 65535: the file is of another shape, removed by
    ``stop`` as unreadable and passed over by ``status``, never signalled or an internal error."""
    cli.runtime.mkdir()
    record = {"pid": os.getpid() if pid is None else pid,
              "port": port if listed_port is None else listed_port,
              "base_url": f"http://127.0.0.1:{port}", "secret_key": KEY, "log": ""}  # fmt: skip
    path = cli.pid_file(port)
    path.write_text(json.dumps(record))
    try:
        status = cli("sandbox", "status", "--port", str(port))
        assert (status.returncode, status.stdout) == (1, "")
        assert "Traceback" not in status.stderr
        stopped = cli("sandbox", "stop", "--port", str(port))
        assert (stopped.returncode, stopped.stderr) == (
            0,
            f"removed an unreadable pid file: {path}\n",
        )
        assert not path.exists()
    finally:
        path.unlink(missing_ok=True)  # the fixture kills the pid of a pid file left behind


def test_status_and_stop_find_the_only_sandbox_and_its_port_from_the_environment(
    cli: Paysdk, port: int
) -> None:
    started = cli("sandbox", "--detach", PAYSDK_SANDBOX_PORT=str(port),
                  PAYSDK_SANDBOX_SECRET_KEY=KEY)  # fmt: skip
    assert started.returncode == 0
    assert started.stdout.splitlines() == [
        f"export PAYSDK_BASE_URL=http://127.0.0.1:{port}",
        f"export PAYSDK_SECRET_KEY={KEY}",
    ]
    status = cli("sandbox", "status")
    assert status.returncode == 0
    assert status.stdout.startswith(f"port {port}: running, pid {cli.pid(port)}, ")
    assert cli("sandbox", "stop").returncode == 0
    assert cli("sandbox", "status").returncode == 1


def test_stop_among_several_sandboxes_stops_the_one_this_shells_base_url_names(
    cli: Paysdk,
) -> None:
    """A shell that ran ``eval "$(paysdk sandbox --detach)"`` while another sandbox ran (a second
    terminal's, one left from yesterday) stops its own with a plain ``paysdk sandbox stop``, as
    Your first hour ends; a base URL naming none of them stops none, and says to choose."""
    mine, other = unused_port(), unused_port()
    cli.start(mine)
    cli.start(other)
    pid = cli.pid(mine)
    elsewhere = cli("sandbox", "stop", PAYSDK_BASE_URL="http://127.0.0.1:1")
    assert (elsewhere.returncode, listening(mine), listening(other)) == (2, True, True)
    assert "choose one with --port" in elsewhere.stderr
    stopped = cli("sandbox", "stop", PAYSDK_BASE_URL=f"http://127.0.0.1:{mine}/")
    assert (stopped.returncode, stopped.stderr) == (
        0,
        f"stopped the sandbox on port {mine} (pid {pid})\n",
    )
    assert (listening(mine), listening(other)) == (False, True)


def test_a_copy_of_a_pid_file_under_another_name_is_not_a_sandbox(cli: Paysdk, port: int) -> None:
    cli.start(port)
    record = cli.pid_file(port).read_text()
    for name in (f"sandbox-{port} (copy).pid", "sandbox-.pid", "sandbox-\u0661.pid"):
        (cli.runtime / name).write_text(record)
    status = cli("sandbox", "status")
    assert (status.returncode, status.stderr) == (0, "")
    assert status.stdout.startswith(f"port {port}: running, pid {cli.pid(port)}, ")
    assert status.stdout.count("\n") == 1
    stopped = cli("sandbox", "stop")
    assert (stopped.returncode, stopped.stdout) == (0, "")
    assert (
        stopped.stderr == f"stopped the sandbox on port {port} (pid {json.loads(record)['pid']})\n"
    )


def test_a_port_given_before_the_action_names_the_sandbox_it_acts_on(cli: Paysdk) -> None:
    """``paysdk sandbox --port N stop`` stops the sandbox on N or none, never the only other."""
    running, other = unused_port(), unused_port()
    cli.start(running)
    status = cli("sandbox", "--port", str(other), "status")
    assert (status.returncode, status.stdout) == (1, "")
    assert status.stderr == f"no sandbox is running on port {other}\n"
    stopped = cli("sandbox", "--port", str(other), "stop")
    assert (stopped.returncode, stopped.stderr) == (
        0,
        f"no sandbox is running on port {other}: nothing to stop\n",
    )
    assert listening(running)
    pid = cli.pid(running)
    stopped = cli("sandbox", "--port", str(running), "stop")
    assert stopped.stderr == f"stopped the sandbox on port {running} (pid {pid})\n"


def test_a_corrupt_state_file_is_an_error_naming_it(cli: Paysdk, port: int, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text("[{")
    for argv in (("--detach", "--port", str(port)), ("--port", str(port))):
        done = cli("sandbox", *argv, "--state", str(state))
        assert done.returncode == 2
        assert f"the state file {str(state)!r}: not valid JSON" in done.stderr
    assert not cli.pid_file(port).exists()


@pytest.mark.parametrize("option", ["--seed", "--state"])
def test_a_seed_or_state_file_nested_too_deeply_is_an_error_naming_it(
    cli: Paysdk, port: int, tmp_path: Path, option: str
) -> None:
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000)
    for argv in (("--detach", "--port", str(port)), ("--port", str(port))):
        done = cli("sandbox", *argv, option, str(nested))
        assert (done.returncode, done.stdout) == (2, "")
        assert str(nested) in done.stderr
        assert "not valid JSON: nested too deeply to read" in done.stderr
        assert "Traceback" not in done.stderr
    assert not cli.pid_file(port).exists()


@pytest.mark.parametrize("option", ["--seed", "--state"])
def test_a_payment_whose_metadata_no_client_could_read_is_an_error_naming_it(
    cli: Paysdk, port: int, tmp_path: Path, option: str
) -> None:
    """Readable JSON, but metadata nested past what a client reads: refused when the sandbox
    starts, not served to every verify as a body the client cannot read."""
    record = {"reference": "order-1", "metadata": json.loads('{"a":' * 300 + "{}" + "}" * 300)}
    seed = tmp_path / "deep.json"
    seed.write_text(json.dumps([record]))
    done = cli("sandbox", "--detach", "--port", str(port), option, str(seed))
    assert (done.returncode, done.stdout) == (2, "")
    assert str(seed) in done.stderr
    assert "record 0: metadata must be JSON (nested too deep: at most 100 levels" in done.stderr
    assert not cli.pid_file(port).exists()


def test_a_detached_sandbox_on_a_free_port_stops_cleanly_on_sigterm(cli: Paysdk) -> None:
    started = cli("sandbox", "--detach", "--key", KEY)
    assert started.returncode == 0, started.stderr
    port = int(started.stderr.rsplit("--port ", 1)[1].split()[0])
    pid = cli.pid(port)
    log = Path(json.loads(cli.pid_file(port).read_text())["log"])
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)
    assert not cli.pid_file(port).exists()
    said = log.read_text()
    assert "sandbox stopped" in said
    assert "Traceback" not in said and "please report" not in said


@pytest.mark.parametrize("closed", ["<&- >&-", "<&- >&- 2>&-"])
def test_a_detach_started_without_standard_streams_ends_and_its_sandbox_is_found(
    cli: Paysdk, port: int, closed: str
) -> None:
    """Started as a daemon or a service unit starts a job, its standard streams closed: the
    descriptors free in their place are no pipe or log the sandbox is given (its stdin and
    stdout would replace them, and the start wait forever). It ends as any command whose
    stdout is closed does (141), and ``status`` finds the sandbox it started."""
    command = [sys.executable, "-m", "paysdk", "sandbox", "--detach", "--port", str(port)]
    done = subprocess.run(
        ["/bin/sh", "-c", f"{shlex.join([*command, '--key', KEY])} {closed}"],
        env=cli.env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 141, done.stderr
    status = cli("sandbox", "--port", str(port), "status")
    assert status.stdout.startswith(f"port {port}: running"), status


FROM_A_TERMINAL = (
    "import os, signal, sys; "
    "sigs = (signal.SIGINT, signal.SIGHUP, signal.SIGTERM); "
    "[signal.signal(sig, signal.SIG_DFL) for sig in sigs]; "
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, sigs); "
    "os.execv(sys.executable, [sys.executable, '-m', 'paysdk', *sys.argv[1:]])"
)
"""``paysdk`` with Ctrl-C, SIGHUP and SIGTERM as a terminal's session gives them, whatever this
test run inherited: under ``nohup`` SIGHUP is ignored (and the command rightly leaves it so), and
a process started while another thread of the run had Ctrl-C ignored or blocked inherits that
(then ``python`` never turns it into ``KeyboardInterrupt``)."""


@pytest.mark.skipif(
    not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists(),
    reason="finds the sandbox as its starter's child, as Linux lists them",
)
@pytest.mark.parametrize(
    ("sent", "ended"),
    [(signal.SIGINT, 130), (signal.SIGTERM, -signal.SIGTERM), (signal.SIGHUP, -signal.SIGHUP)],
    ids=["ctrl-c", "sigterm", "sighup"],
)
def test_a_signal_while_a_detached_sandbox_starts_leaves_no_sandbox_behind(
    cli: Paysdk, port: int, tmp_path: Path, sent: signal.Signals, ended: int
) -> None:
    """Ctrl-C, SIGTERM (``kill``, a CI job cancelled) or SIGHUP (the terminal closed) while
    ``--detach`` waits for the sandbox to listen (its seed a pipe no one writes to, so it never
    does): the command ends (130 for Ctrl-C, killed by the signal for the others), and the
    sandbox it was starting, in a session of its own that the signal does not reach, is
    stopped rather than left running unseen (no pid file, so ``status`` and ``stop`` know
    nothing of it)."""
    seed = tmp_path / "seed.json"
    os.mkfifo(seed)
    starter = subprocess.Popen(
        [sys.executable, "-c", FROM_A_TERMINAL, "sandbox", "--detach", "--port", str(port),
         "--seed", str(seed)],
        env=cli.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    children: list[int] = []
    deadline = time.monotonic() + 30
    while not children and time.monotonic() < deadline:
        time.sleep(0.1)
        children = [int(pid) for pid in _children(starter.pid) if _runs_the_sandbox(pid)]
    assert children, "the sandbox was not started"
    time.sleep(0.5)  # its starter, past starting it, waits for it to listen
    starter.send_signal(sent)
    assert starter.wait(timeout=30) == ended
    while any(alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in children if alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []


def _runs_the_sandbox(pid: str) -> bool:
    """Whether process ``pid`` runs the sandbox by now (not a fork yet to run it)."""
    try:
        return b"paysdk.sandbox" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _children(pid: int) -> list[str]:
    """The pids of ``pid``'s children, as Linux lists them."""
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return found.split()


@pytest.mark.parametrize("shell", ["sk_$(touch${IFS}RAN)", "sk_`touch${IFS}RAN`;'\"*&|#"])
def test_a_shell_that_evals_the_export_lines_sets_the_key_as_given_and_runs_nothing(
    cli: Paysdk, port: int, tmp_path: Path, shell: str
) -> None:
    ran = tmp_path / "ran"
    key = shell.replace("RAN", str(ran))
    started = cli("sandbox", "--detach", "--port", str(port), PAYSDK_SANDBOX_SECRET_KEY=key)
    assert started.returncode == 0, started.stderr
    shown = subprocess.run(
        ["sh", "-c", 'eval "$1" && printf "%s\\n" "$PAYSDK_BASE_URL" "$PAYSDK_SECRET_KEY"', "sh",
         started.stdout],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert (shown.returncode, shown.stderr) == (0, "")
    assert shown.stdout.splitlines() == [f"http://127.0.0.1:{port}", key]
    assert not ran.exists()


def test_a_sandbox_bound_to_every_address_tells_clients_its_loopback_url(
    cli: Paysdk, port: int
) -> None:
    """As in a container: the URL it prints is one a client accepts over plain HTTP."""
    started = cli("sandbox", "--detach", "--host", "0.0.0.0", "--port", str(port), "--key", KEY)  # noqa: S104
    assert started.returncode == 0, started.stderr
    assert f"export PAYSDK_BASE_URL=http://127.0.0.1:{port}\n" in started.stdout
    listed = cli("list", PAYSDK_BASE_URL=f"http://127.0.0.1:{port}", PAYSDK_SECRET_KEY=KEY)
    assert listed.returncode == 0, listed.stderr
    status = cli("sandbox", "--port", str(port), "status")
    assert f"http://127.0.0.1:{port}" in status.stdout, status


@pytest.mark.parametrize(
    ("host", "named"),
    [("0.0.0.0", "0.0.0.0"), ("::", "::"), ("", "every address")],  # noqa: S104
)
def test_a_sandbox_bound_beyond_loopback_warns_what_other_machines_can_do(
    cli: Paysdk, port: int, host: str, named: str
) -> None:
    """Other machines can reach it: the starter is told so, as the key is all that guards it;
    ``--host ""``, which binds every address, is named so."""
    started = cli("sandbox", "--detach", "--host", host, "--port", str(port), "--key", KEY)
    assert started.returncode == 0, started.stderr
    assert f"warning: bound to {named}, the sandbox answers other machines too" in started.stderr
    assert "callbacks" in started.stderr and KEY not in started.stderr


@pytest.mark.parametrize(
    ("host", "bound"),
    [("", "every address"), ("0.0.0.0", "every address, 0.0.0.0"), ("::", "every address, ::")],  # noqa: S104
)
def test_a_sandbox_bound_to_every_address_says_so_after_its_url(host: str, bound: str) -> None:
    """``paysdk sandbox --host ""`` (or a wildcard address) in the foreground: its first line
    gives the URL clients use, on loopback, and says the sandbox is bound to every address."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "paysdk", "sandbox", "--host", host, "--port", "0", "--key", KEY],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert process.stdout is not None and process.stderr is not None
        first = process.stdout.readline()
        warning = process.stderr.readline()
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert re.fullmatch(
        rf"paysdk sandbox listening on http://(127[.]0[.]0[.]1|\[::1\]):[0-9]+"
        rf" [(]bound to {re.escape(bound)}[)]\n",
        first,
    )
    assert warning.startswith(f"warning: bound to {host or 'every address'}, the sandbox answers")


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_sandbox_on_loopback_starts_without_a_warning(cli: Paysdk, port: int, host: str) -> None:
    started = cli("sandbox", "--detach", "--host", host, "--port", str(port), "--key", KEY)
    assert started.returncode == 0, started.stderr
    assert "warning" not in started.stderr


def test_a_detached_start_under_python_dev_mode_warns_of_no_process_left_running(
    cli: Paysdk, port: int
) -> None:
    """The sandbox is meant to outlive the command that started it: ``python -X dev`` (a CI's
    ``PYTHONDEVMODE``, with ``PYTHONWARNINGS=error`` or without) prints no ResourceWarning, nor
    an "Exception ignored" of one made an error, about it."""
    for port_, warnings in ((port, "default"), (unused_port(), "error")):
        started = cli(
            "sandbox", "--detach", "--port", str(port_), "--key", KEY,
            PYTHONDEVMODE="1", PYTHONWARNINGS=warnings,
        )  # fmt: skip
        assert started.returncode == 0, started.stderr
        assert listening(port_)
        assert "Warning" not in started.stderr, started.stderr
        assert "Exception ignored" not in started.stderr, started.stderr


_UNSENDABLE = "the secret key contains characters that cannot be sent in a header"


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("my key", _UNSENDABLE),
        ("sk_tab\there", _UNSENDABLE),
        ("sk_café", _UNSENDABLE),
        ("sk_\x1b[2J", _UNSENDABLE),
        (" sk_padded", "the secret key has leading or trailing whitespace"),
        ('"sk_quoted"', "the secret key is wrapped in quotes"),
        ("'sk_quoted'", "the secret key is wrapped in quotes"),
        ("Bearer sk_x", "the secret key starts with 'Bearer '"),
    ],
)
@pytest.mark.parametrize("detach", [True, False])
def test_a_key_no_client_accepts_is_refused_before_the_sandbox_starts(
    cli: Paysdk, port: int, key: str, why: str, detach: bool
) -> None:
    """The sandbox asks for a key only if ``paysdk.Client`` would send it: the client's rule."""
    argv = ["sandbox", "--port", str(port), *(["--detach"] if detach else [])]
    for given, env, source in [
        ([*argv, "--key", key], {}, "--secret-key"),
        (argv, {"PAYSDK_SANDBOX_SECRET_KEY": key}, "PAYSDK_SANDBOX_SECRET_KEY"),
    ]:
        done = cli(*given, **env)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr.startswith(f"paysdk: error: {source}: {why}")
        assert done.stderr.count("\n") == 1
        assert key.strip(" \"'") not in done.stderr
        assert not cli.pid_file(port).exists()


def test_a_sandbox_on_a_free_port_logs_under_its_port_so_each_run_leaves_no_log_behind(
    cli: Paysdk,
) -> None:
    logs = set()
    for _ in range(2):
        started = cli("sandbox", "--detach", "--key", KEY)
        assert started.returncode == 0, started.stderr
        port = int(started.stderr.rsplit("--port ", 1)[1].split()[0])
        log = Path(json.loads(cli.pid_file(port).read_text())["log"])
        assert log == cli.runtime / f"sandbox-{port}.log"
        assert f"log: {log}" in started.stderr
        assert cli("sandbox", "stop", "--port", str(port)).returncode == 0
        assert "sandbox stopped" in log.read_text()
        logs.add(log)
    assert set(cli.runtime.glob("sandbox-*.log")) == logs  # no log named for another pid


def test_a_stop_signal_is_taken_while_the_foreground_sandbox_holds_a_lock() -> None:
    """Ctrl-C or SIGTERM may land while the foreground sandbox's main thread holds a lock (as
    inside a wait for an ``Event``): its handler takes no lock, so it returns at once and the
    stop is seen, where setting an ``Event`` there could wait for ever on the lock it holds."""
    held = threading.Lock()
    with _stop_on_signals() as asked, held:
        signal.raise_signal(signal.SIGTERM)
    assert asked == [signal.SIGTERM]

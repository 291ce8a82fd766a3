"""The files of ``paysdk sandbox --detach`` hold its key: the real command makes them its user's
alone, and refuses a runtime directory another user owns or can write to.

Making a directory another user's takes ``os.chown``: these tests run as root, as the suite does.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from paysdk.cli._background import alive
from tests.support.ports import unused_port

KEY = "sk_runtime_files_test"
NOBODY = 65534
"""A uid that is not the user running the tests."""


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


class Sandboxes:
    """Runs ``python -m paysdk sandbox ...`` with the umask most systems have (022), no
    PAYSDK_ variables, and ``env``; stops every sandbox it started, wherever it wrote its pid."""

    def __init__(self, base: Path) -> None:
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
        self.env.pop("XDG_RUNTIME_DIR", None)
        self.env["TMPDIR"] = str(base)  # the default runtime directory is made in it
        self.watched = [base / f"paysdk-{os.getuid()}"]

    def __call__(self, *argv: str, runtime: Path | None) -> subprocess.CompletedProcess[str]:
        env = dict(self.env)
        if runtime is not None:
            env["PAYSDK_SANDBOX_DIR"] = str(runtime)
            self.watched.append(runtime)
        umask = os.umask(0o022)
        try:
            done = subprocess.run(
                [sys.executable, "-m", "paysdk", "sandbox", *argv],
                env=env, capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
        finally:
            os.umask(umask)
        assert KEY not in done.stderr
        return done

    def stop_all(self) -> None:
        for pid_file in (p for d in self.watched if d.is_dir() for p in d.glob("*.pid")):
            pid = json.loads(pid_file.read_text())["pid"]
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def sandbox_cli(tmp_path: Path) -> Iterator[Sandboxes]:
    sandboxes = Sandboxes(tmp_path)
    yield sandboxes
    sandboxes.stop_all()


def test_detach_makes_the_runtime_directory_and_its_key_files_private(
    sandbox_cli: Sandboxes, tmp_path: Path
) -> None:
    runtime = tmp_path / "run"
    port = unused_port()
    started = sandbox_cli("--detach", "--port", str(port), "--key", KEY, runtime=runtime)
    assert started.returncode == 0, started.stderr
    pid_file, log = runtime / f"sandbox-{port}.pid", runtime / f"sandbox-{port}.log"
    assert KEY in pid_file.read_text()
    assert KEY in log.read_text()  # the sandbox announces its key there
    assert (mode(runtime), mode(pid_file), mode(log)) == (0o700, 0o600, 0o600)
    assert sorted(path.name for path in runtime.iterdir()) == [log.name, pid_file.name]


def test_a_runtime_directory_whose_name_is_not_utf8_holds_a_sandbox_stop_finds(
    sandbox_cli: Sandboxes, tmp_path: Path
) -> None:
    """A directory named on a system of another encoding (``caf\xe9``, Latin-1), which Python
    reads as a lone surrogate: the sandbox starts there, and ``status`` and ``stop`` find it."""
    runtime = tmp_path / "caf\udce9 run"
    port = unused_port()
    started = sandbox_cli("--detach", "--port", str(port), "--key", KEY, runtime=runtime)
    assert started.returncode == 0, started.stderr
    assert "export PAYSDK_BASE_URL=" in started.stdout
    assert (runtime / f"sandbox-{port}.pid").exists()
    status = sandbox_cli("status", runtime=runtime)
    assert (status.returncode, status.stdout.startswith(f"port {port}: running")) == (0, True)
    stopped = sandbox_cli("stop", runtime=runtime)
    assert stopped.returncode == 0, stopped.stderr
    assert sorted(path.name for path in runtime.iterdir()) == [f"sandbox-{port}.log"]


def test_a_log_already_there_that_others_can_read_is_made_private(
    sandbox_cli: Sandboxes, tmp_path: Path
) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    port = unused_port()
    log = runtime / f"sandbox-{port}.log"
    log.write_text("the log so far\n")
    log.chmod(0o644)
    started = sandbox_cli("--detach", "--port", str(port), "--key", KEY, runtime=runtime)
    assert started.returncode == 0, started.stderr
    assert mode(log) == 0o600
    assert log.read_text().startswith("the log so far\n")  # appended to, not replaced


def writable_by_others(path: Path) -> Path:
    path.mkdir()
    path.chmod(0o777)
    return path


def writable_by_the_group(path: Path) -> Path:
    path.mkdir(mode=0o700)
    path.chmod(0o770)
    return path


def another_users(path: Path) -> Path:
    path.mkdir(mode=0o700)
    os.chown(path, NOBODY, NOBODY)
    return path


def a_link_another_user_made(path: Path) -> Path:
    target = path.with_name("mine")
    target.mkdir(mode=0o700)
    path.symlink_to(target)
    os.lchown(path, NOBODY, NOBODY)
    return path


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (writable_by_others, "can be written by other users (mode 777): run `chmod 700 {dir}`, "),
        (writable_by_the_group, "can be written by other users (mode 770): run `chmod 700 {dir}`"),
        (another_users, f"belongs to uid {NOBODY}, not to you (uid {os.getuid()}): remove it, "),
        (a_link_another_user_made, f"is a symbolic link owned by uid {NOBODY}, not by you"),
    ],
    ids=["mode 777", "mode 770", "another user's", "another user's link"],
)
def test_a_runtime_directory_others_control_is_refused(
    sandbox_cli: Sandboxes, tmp_path: Path, make: Callable[[Path], Path], says: str
) -> None:
    runtime = make(tmp_path / "run")
    done = sandbox_cli("--detach", "--port", str(unused_port()), "--key", KEY, runtime=runtime)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(
        f"paysdk: error: the runtime directory {runtime} {says.format(dir=runtime)}"
    )
    assert done.stderr.endswith(
        "or set PAYSDK_SANDBOX_DIR to a directory only you can write to (it holds the "
        "sandbox's key)\n"
    )
    assert list(runtime.iterdir()) == []  # no log, no pid file: nothing was started


def test_the_default_runtime_directory_another_user_made_is_refused(
    sandbox_cli: Sandboxes, tmp_path: Path
) -> None:
    """``<temporary directory>/paysdk-<uid>``, made first by someone else, as anyone can in /tmp."""
    runtime = another_users(tmp_path / f"paysdk-{os.getuid()}")
    done = sandbox_cli("--detach", "--port", str(unused_port()), "--key", KEY, runtime=None)
    assert done.returncode == 2
    assert done.stderr.startswith(f"paysdk: error: the runtime directory {runtime} belongs to ")
    assert list(runtime.iterdir()) == []


@pytest.mark.parametrize("action", ["status", "stop"])
def test_status_and_stop_refuse_it_too(sandbox_cli: Sandboxes, tmp_path: Path, action: str) -> None:
    runtime = writable_by_others(tmp_path / "run")
    done = sandbox_cli(action, runtime=runtime)
    assert done.returncode == 2
    assert done.stderr.startswith(f"paysdk: error: the runtime directory {runtime} can be written")


def test_a_relative_xdg_runtime_dir_is_ignored_as_the_xdg_spec_asks(
    sandbox_cli: Sandboxes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Taken, a relative ``XDG_RUNTIME_DIR`` would put the pid file under the directory the
    command ran in, where ``status`` and ``stop`` run from another could not find it."""
    sandbox_cli.env["XDG_RUNTIME_DIR"] = "run"
    port = unused_port()
    for where in ("one", "two"):
        (tmp_path / where).mkdir()
        sandbox_cli.watched.append(tmp_path / where / "run" / "paysdk")  # stopped at the end
    monkeypatch.chdir(tmp_path / "one")
    started = sandbox_cli("--detach", "--port", str(port), "--key", KEY, runtime=None)
    assert started.returncode == 0, started.stderr
    assert (tmp_path / f"paysdk-{os.getuid()}" / f"sandbox-{port}.pid").exists()
    monkeypatch.chdir(tmp_path / "two")
    status = sandbox_cli("status", runtime=None)
    assert status.returncode == 0, status.stderr
    assert f"port {port}: running" in status.stdout
    assert sandbox_cli("stop", "--port", str(port), runtime=None).returncode == 0
    assert not (tmp_path / "one" / "run").exists()
    assert not (tmp_path / "two" / "run").exists()

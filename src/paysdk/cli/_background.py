"""A sandbox in the background: ``paysdk sandbox --detach``, ``stop`` and ``status``.

The child (in its own session, its output in a log) writes ``sandbox-<port>.pid`` (JSON: pid,
port, URL, key, log) in the runtime directory once it listens, tells its starter through a pipe,
and removes the file when it stops. Both files hold the key: they are 0600, in a 0700 directory.
``stop`` signals a pid only once the sandbox on that port says it is that pid (``serving_pid``):
a pid file left by a killed sandbox, its pid since reused, is removed as stale instead.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import select
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Generator, Sequence
from pathlib import Path
from types import FrameType
from typing import cast
from urllib.parse import urlsplit

from .._errors import ConfigurationError

__all__ = [
    "RunningSandbox",
    "alive",
    "pid_file",
    "pid_files",
    "read_pid_file",
    "remove_pid_file",
    "running_sandboxes",
    "runtime_dir",
    "serving_pid",
    "spawn",
    "stop_process",
    "write_pid_file",
]

ENV_SANDBOX_DIR = "PAYSDK_SANDBOX_DIR"
START_TIMEOUT = 30.0
"""Seconds a detached sandbox may take to listen before the command gives up on it."""
STOP_TIMEOUT = 10.0
"""Seconds a sandbox may take to stop after SIGTERM."""
LOG_TAIL = 2000
"""How many characters of a sandbox's log an error about its start shows."""


@dataclasses.dataclass(frozen=True)
class RunningSandbox:
    """What a detached sandbox's pid file says about it."""

    pid: int
    port: int
    base_url: str
    secret_key: str = dataclasses.field(repr=False)
    log: str


def runtime_dir() -> Path:
    """Where pid files and logs of detached sandboxes live, made (private) if missing.

    Raises:
        ConfigurationError: the directory cannot be made, or another user owns it or can
            write to it (they could read the sandbox's key, or plant files there).
    """
    given = os.environ.get(ENV_SANDBOX_DIR)
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if given:
        directory = Path(given)
    elif os.path.isabs(xdg):  # the XDG spec: a relative path is ignored, as if unset
        directory = Path(xdg) / "paysdk"
    else:
        directory = Path(tempfile.gettempdir()) / f"paysdk-{os.getuid()}"
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        problem = _not_private(directory)
    except OSError as exc:
        problem = f"cannot be used ({exc.strerror or exc})", ""
    if problem is not None:
        said, remedy = problem
        raise ConfigurationError(
            f"the runtime directory {directory} {said}: {remedy}{'or ' if remedy else ''}set "
            f"{ENV_SANDBOX_DIR} to a directory only you can write to (it holds the sandbox's key)"
        )
    return directory


def _not_private(directory: Path) -> tuple[str, str] | None:
    """What makes ``directory`` (or a symbolic link to it) not the user's alone, and what to
    do about it; ``None`` if it is theirs alone."""
    uid = os.getuid()
    link = os.lstat(directory)
    if stat.S_ISLNK(link.st_mode) and link.st_uid != uid:
        owner = f"is a symbolic link owned by uid {link.st_uid}, not by you (uid {uid})"
        return owner, "remove the link, "
    info = os.stat(directory)
    if not stat.S_ISDIR(info.st_mode):
        return "is not a directory", "remove it, "
    if info.st_uid != uid:
        return f"belongs to uid {info.st_uid}, not to you (uid {uid})", "remove it, "
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        mode = stat.S_IMODE(info.st_mode)
        return f"can be written by other users (mode {mode:o})", f"run `chmod 700 {directory}`, "
    return None


def open_private(path: Path, flags: int) -> int:
    """Open ``path`` for writing, created readable and writable by its owner alone (0600),
    never through a symbolic link. A file already there that others can read is made private
    too, before anything is written to it."""
    descriptor = os.open(path, flags | os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        if stat.S_IMODE(os.fstat(descriptor).st_mode) & 0o077:
            os.fchmod(descriptor, 0o600)
    except OSError:
        os.close(descriptor)
        raise
    return descriptor


def pid_file(port: int) -> Path:
    return runtime_dir() / f"sandbox-{port}.pid"


def log_file(port: int | None) -> Path:
    """The log of a sandbox on ``port`` (``None``: a free port, not known before it starts)."""
    return runtime_dir() / (f"sandbox-{port}.log" if port else f"sandbox-{os.getpid()}.log")


def pid_files() -> list[Path]:
    """Every detached sandbox's pid file, by port. A file of another name that the glob matches
    (``sandbox-8321 (copy).pid``, left by a person or a file manager) is not one."""
    found = runtime_dir().glob("sandbox-*.pid")
    ports = {path: path.stem.removeprefix("sandbox-") for path in found}
    named = [path for path, port in ports.items() if port.isascii() and port.isdigit()]
    return sorted(named, key=lambda path: int(ports[path]))


def write_pid_file(sandbox: RunningSandbox) -> Path:
    """Write ``sandbox``'s pid file (readable by its user alone), atomically."""
    path = pid_file(sandbox.port)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    with os.fdopen(open_private(temporary, os.O_TRUNC), "w", encoding="utf-8") as file:
        json.dump(dataclasses.asdict(sandbox), file)
    os.replace(temporary, path)
    return path


_PIDS = range(1, 2**31)
"""The pids a process can have (``kill`` takes 0 and a negative pid for a process group, -1
for every process, and refuses one past a C ``int``)."""
_PORTS = range(1, 65536)
"""The ports a listening sandbox can have."""


def read_pid_file(path: Path) -> RunningSandbox | None:
    """What the pid file says; ``None`` if it is gone, unreadable or of another shape (each
    field of its type: a port that is text would be printed, a pid that is text signalled; a
    pid or port out of range), a stale file to remove."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        running = RunningSandbox(**data)
    except (OSError, ValueError, TypeError):
        return None
    numbers = all(type(number) is int for number in (running.pid, running.port))
    texts = all(isinstance(t, str) for t in (running.base_url, running.secret_key, running.log))
    typed = numbers and texts  # before `in`: a range scans for what is not an int
    return running if typed and running.pid in _PIDS and running.port in _PORTS else None


def remove_pid_file(port: int, pid: int | None = None) -> None:
    """Remove the pid file of ``port``; with ``pid``, only if it still names that process."""
    path = pid_file(port)
    if pid is not None:
        current = read_pid_file(path)
        if current is not None and current.pid != pid:
            return
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def serving_pid(sandbox: RunningSandbox, timeout: float = 5.0) -> int | None:
    """The pid of the process serving ``sandbox.base_url``, as it says (a pid file's pid may be
    another process's by now); ``None`` if none says. Over http.client (a detached sandbox serves
    plain HTTP), imported here: with ssl and the email parser, it is a third of the command's start.
    """
    import http.client

    address = urlsplit(sandbox.base_url)
    if address.scheme != "http" or not address.hostname:
        return None
    try:
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=timeout)
        try:
            connection.request(
                "GET",
                "/_sandbox/status",
                headers={"Authorization": f"Bearer {sandbox.secret_key}"},
            )
            answer = connection.getresponse()
            said: object = json.loads(answer.read()) if answer.status == 200 else None
        finally:
            connection.close()
    except (OSError, http.client.HTTPException, ValueError):
        return None
    pid: object = cast("dict[str, object]", said).get("pid") if isinstance(said, dict) else None
    return pid if isinstance(pid, int) else None


def named_by(paths: Sequence[Path], base_url: str) -> list[Path]:
    """The pid files among ``paths`` of the sandbox serving ``base_url`` (a shell's
    ``$PAYSDK_BASE_URL``, as ``eval "$(paysdk sandbox --detach)"`` set it there)."""
    wanted = base_url.strip().rstrip("/")
    found = ((path, read_pid_file(path)) for path in paths)
    return [path for path, sandbox in found if sandbox and sandbox.base_url == wanted]


def running_sandboxes() -> list[RunningSandbox]:
    """The detached sandboxes that run now: those whose pid file's pid is the one serving."""
    found = (read_pid_file(path) for path in pid_files())
    return [sandbox for sandbox in found if sandbox and serving_pid(sandbox) == sandbox.pid]


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (dead, waiting for its parent)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    try:  # Linux: a zombie still takes signals; macOS's launchd reaps them at once
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]


def stop_process(pid: int, timeout: float = STOP_TIMEOUT) -> bool:
    """SIGTERM ``pid`` and wait until it is gone; ``False`` if it is still there after
    ``timeout`` seconds."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@dataclasses.dataclass(frozen=True)
class Detached:
    """How a detached start went: the sandbox, or why it did not start (and its exit code)."""

    sandbox: RunningSandbox | None
    error: str = ""
    code: int = 0


def spawn(arguments: Sequence[str], env: dict[str, str], port: int) -> Detached:
    """Start ``paysdk sandbox <arguments>`` in the background; wait until it listens.

    Args:
        arguments: the sandbox's options, without ``--detach``.
        env: the child's environment.
        port: the port asked for (0: a free one), which names the log.
    """
    log = log_file(port)
    read_end, write_end = os.pipe()
    told = ["--ready-fd", str(write_end), "--log-file", str(log)]
    command = [sys.executable, "-m", "paysdk.sandbox", *arguments, *told]
    try:
        with os.fdopen(open_private(log, os.O_APPEND), "ab") as output:
            child = subprocess.Popen(  # noqa: S603 - this Python, running paysdk
                command,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                env=env,
                pass_fds=(write_end,),
                start_new_session=True,  # Ctrl-C in this terminal is not meant for it
            )
    finally:
        os.close(write_end)
    try:
        with _dying_of_signals():
            try:
                said = _read_until_closed(read_end, START_TIMEOUT)
            except BaseException:  # Ctrl-C, SIGTERM: a sandbox not started is not left unseen
                child.kill()
                child.wait()
                raise
    finally:
        os.close(read_end)
    if said is None:
        child.kill()
        child.wait()
        return Detached(None, f"the sandbox did not start within {START_TIMEOUT:g}s", 1)
    if said:
        sandbox = read_pid_file(Path(said.strip()))
        if sandbox is not None:
            with warnings.catch_warnings():
                # The sandbox is meant to outlive its Popen, whose collection would warn that
                # it still runs (a ResourceWarning: shown by `python -X dev`, and an error under
                # `-W error`); subprocess still reaps it if it stops while this process runs.
                warnings.simplefilter("ignore", ResourceWarning)
                del child
            return Detached(sandbox)
    code = child.wait()
    return Detached(None, _tail(log), code or 1)


class _Signalled(BaseException):
    """SIGTERM or SIGHUP, raised as Ctrl-C raises ``KeyboardInterrupt``."""


@contextlib.contextmanager
def _dying_of_signals() -> Generator[None, None, None]:
    """Inside, SIGTERM and SIGHUP raise, as Ctrl-C does, so that ``except``/``finally`` clean
    up; leaving by one, the process then dies of it, as it would have unhandled.

    A signal ignored (``nohup`` ignores SIGHUP) or handled by the caller is left as it is, and
    outside the main thread (where no handler can be set) nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise _Signalled(signum)

    taken = [
        sig for sig in (signal.SIGTERM, signal.SIGHUP) if signal.getsignal(sig) is signal.SIG_DFL
    ]
    for sig in taken:
        signal.signal(sig, handler)
    signalled: int | None = None
    try:
        yield
    except _Signalled as exc:
        signalled = exc.args[0]
        raise
    finally:
        for sig in taken:
            signal.signal(sig, signal.SIG_DFL)
        if signalled is not None:
            signal.raise_signal(signalled)  # the process ends here, killed by it


def _read_until_closed(descriptor: int, timeout: float) -> str | None:
    """What is written to the pipe until its writer closes it; ``None`` on timeout."""
    deadline = time.monotonic() + timeout
    pieces: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([descriptor], [], [], left)
        if ready:
            piece = os.read(descriptor, 4096)
            if not piece:
                return os.fsdecode(b"".join(pieces))  # a path, as the file system names it
            pieces.append(piece)


def _tail(log: Path) -> str:
    """The last lines of a log, for an error about the start it records."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    lines = [line for line in text[-LOG_TAIL:].splitlines() if line.strip()]
    return lines[-1] if lines else f"the sandbox exited (see {log})"

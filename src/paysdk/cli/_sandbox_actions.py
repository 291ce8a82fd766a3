"""``paysdk sandbox stop``, ``status`` and ``env``: the sandboxes started with ``--detach``,
stopped, listed, or pointed at from another shell; and the hint, for an error that no base URL
is set, that one runs."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .._core.environment import ENV_BASE_URL
from . import _background as background
from ._escape import printable
from ._exits import EXIT_FAILURE, EXIT_OK, EXIT_USAGE
from ._report import PROG, print_error
from ._sandbox_options import ENV_SANDBOX_PORT, chosen_port, export_lines, port_number

__all__ = ["add_sandbox_actions", "sandbox_hint"]


def add_sandbox_actions(sandbox: Any) -> None:
    """Register ``stop``, ``status`` and ``env`` on the ``paysdk sandbox`` parser."""
    actions = sandbox.add_subparsers(
        title="background sandboxes",
        dest="action",
        metavar="ACTION",
        help="run 'paysdk sandbox ACTION --help' for its options",
    )
    for name, command, help_ in [
        ("stop", _stop, "stop a sandbox started with --detach (safe if it already died)"),
        ("status", _status, "show the sandboxes started with --detach; exit 1 if none runs"),
        ("env", _env, 'print a sandbox\'s export lines again, for another shell: eval "$(...)"'),
    ]:
        action = actions.add_parser(name, help=help_)
        action.add_argument(
            "--port",
            type=port_number,
            default=argparse.SUPPRESS,  # else it would undo `paysdk sandbox --port N stop`
            help=f"the sandbox's port (default: ${ENV_SANDBOX_PORT}, else the only one running"
            + (f"; of several, the one at ${ENV_BASE_URL})" if name == "stop" else ")"),
        )
        action.set_defaults(command=command)


def _stop(args: argparse.Namespace) -> int:
    port = chosen_port(args.port)
    paths = [background.pid_file(port)] if port else background.pid_files()
    paths = [path for path in paths if path.exists()]
    if not paths:
        where = f"on port {port}" if port else f"in the background ({background.runtime_dir()})"
        print(printable(f"no sandbox is running {where}: nothing to stop"), file=sys.stderr)
        return EXIT_OK
    if len(paths) > 1:  # of several, the one this shell's client would call, if it is one
        paths = background.named_by(paths, os.environ.get(ENV_BASE_URL, "")) or paths
    if len(paths) > 1:
        ports = ", ".join(path.stem.split("-")[1] for path in paths)
        return print_error(f"sandboxes run on ports {ports}: choose one with --port", EXIT_USAGE)
    [path] = paths
    running = background.read_pid_file(path)
    if running is None:
        path.unlink(missing_ok=True)
        print(printable(f"removed an unreadable pid file: {path}"), file=sys.stderr)
        return EXIT_OK
    if background.serving_pid(running) != running.pid:
        if background.alive(running.pid):
            return print_error(
                f"pid {running.pid} is running but no sandbox answers for it on port "
                f"{running.port}: check it (ps -p {running.pid}), stop it yourself if it is "
                f"the sandbox, and remove {printable(str(path))}",
                EXIT_FAILURE,
            )
        background.remove_pid_file(running.port, running.pid)
        print(
            f"the sandbox on port {running.port} (pid {running.pid}) was not running: "
            "removed its stale pid file",
            file=sys.stderr,
        )
        return EXIT_OK
    if not background.stop_process(running.pid):
        return print_error(
            f"the sandbox on port {running.port} (pid {running.pid}) did not stop within "
            f"{background.STOP_TIMEOUT:g}s of SIGTERM",
            EXIT_FAILURE,
        )
    background.remove_pid_file(running.port, running.pid)
    print(f"stopped the sandbox on port {running.port} (pid {running.pid})", file=sys.stderr)
    return EXIT_OK


def _status(args: argparse.Namespace) -> int:
    port = chosen_port(args.port)
    paths = [background.pid_file(port)] if port else background.pid_files()
    running_any = False
    for path in paths:
        running = background.read_pid_file(path)
        if running is None:
            continue
        if background.serving_pid(running) == running.pid:
            running_any = True
            said = f"running, pid {running.pid}, {running.base_url}, log {running.log}"
            print(printable(f"port {running.port}: {said}"))
        else:
            print(printable(f"port {running.port}: not running (stale pid file {path})"))
    if not running_any:
        where = f"on port {port}" if port else f"in the background ({background.runtime_dir()})"
        print(printable(f"no sandbox is running {where}"), file=sys.stderr)
    return EXIT_OK if running_any else EXIT_FAILURE


def _env(args: argparse.Namespace) -> int:
    """Print the export lines of the one sandbox running detached (or of ``--port``'s), as
    ``--detach`` printed them, so ``eval "$(paysdk sandbox env)"`` points another shell at it."""
    port = chosen_port(args.port)
    running = [sandbox for sandbox in background.running_sandboxes() if port in (0, sandbox.port)]
    if not running:
        where = f"on port {port}" if port else f"in the background ({background.runtime_dir()})"
        return print_error(f"no sandbox is running {where}", EXIT_FAILURE)
    if len(running) > 1:
        ports = ", ".join(str(sandbox.port) for sandbox in running)
        return print_error(f"sandboxes run on ports {ports}: choose one with --port", EXIT_USAGE)
    [sandbox] = running
    for line in export_lines(sandbox.base_url, sandbox.secret_key):
        print(line)
    return EXIT_OK


def sandbox_hint() -> str | None:
    """How to point this shell at the sandboxes running detached, for an error that no base URL
    is set (a second terminal, say); ``None`` if none runs."""
    running = background.running_sandboxes()
    if not running:
        return None
    if len(running) == 1:
        return (
            f"a sandbox runs in the background at {running[0].base_url}: "
            f'`eval "$({PROG} sandbox env)"` points this shell at it'
        )
    urls = ", ".join(sandbox.base_url for sandbox in running)
    return (
        f"sandboxes run in the background at {urls}: "
        f'`eval "$({PROG} sandbox env --port PORT)"` points this shell at one'
    )

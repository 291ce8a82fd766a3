"""``paysdk sandbox``: in the foreground, or ``--detach``ed (then ``stop``, ``status`` and ``env``,
in ``_sandbox_actions.py``).

Its port and key are ``--port``/``--secret-key``, else ``$PAYSDK_SANDBOX_PORT`` and
``$PAYSDK_SANDBOX_SECRET_KEY``, so the export lines stay the same from one start to the next.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import signal
import sys
import threading
import time
from collections.abc import Generator
from contextlib import contextmanager
from types import FrameType
from typing import Any
from urllib.parse import urlsplit

from .._core.config import check_secret_key
from .._errors import ConfigurationError
from . import _background as background
from ._connection import utf8_text
from ._escape import printable
from ._exits import EXIT_OK, EXIT_USAGE
from ._report import PROG, print_error
from ._sandbox_actions import add_sandbox_actions
from ._sandbox_options import (
    ENV_SANDBOX_PORT,
    ENV_SANDBOX_SECRET_KEY,
    chosen_port,
    export_lines,
    port_number,
)

__all__ = ["add_sandbox_commands"]


class _OptionalActionFormatter(argparse.HelpFormatter):
    """Writes an optional subcommand as ``[ACTION ...]``: argparse's ``ACTION ...`` reads as
    required."""

    def _format_args(self, action: argparse.Action, default_metavar: str) -> str:
        text = super()._format_args(action, default_metavar)
        return f"[{text}]" if action.nargs == argparse.PARSER and not action.required else text


def add_sandbox_commands(commands: Any) -> None:
    """Register ``sandbox`` (and its ``stop`` and ``status``) on the ``paysdk`` subcommands."""
    sandbox = commands.add_parser(
        "sandbox",
        help="run a local sandbox of the service (--detach: in the background)",
        formatter_class=_OptionalActionFormatter,
    )
    sandbox.add_argument(
        "--host", type=utf8_text, default="127.0.0.1", help="address to bind (127.0.0.1)"
    )
    sandbox.add_argument(
        "--port",
        type=port_number,
        help=f"port (default: ${ENV_SANDBOX_PORT}, else a free one)",
    )
    sandbox.add_argument(
        "--secret-key",
        "--key",
        dest="secret_key",
        metavar="KEY",
        help=f"key clients must send (default: ${ENV_SANDBOX_SECRET_KEY}, else generated)",
    )
    sandbox.add_argument("--seed", metavar="FILE", help="JSON file of payments to serve")
    sandbox.add_argument(
        "--state",
        metavar="FILE",
        help="remember payments in FILE between runs (read at start, rewritten on each change)",
    )
    sandbox.add_argument(
        "--detach",
        action="store_true",
        help="run in the background; print its export lines (stop: paysdk sandbox stop)",
    )
    sandbox.add_argument("--quiet", action="store_true", help="do not log requests")
    sandbox.add_argument("--ready-fd", type=int, help=argparse.SUPPRESS)  # set by --detach
    sandbox.add_argument("--log-file", help=argparse.SUPPRESS)  # set by --detach
    sandbox.set_defaults(command=_sandbox)
    add_sandbox_actions(sandbox)


# --- the sandbox, in the foreground or detached -----------------------------------------------


def _sandbox(args: argparse.Namespace) -> int:
    from paysdk.sandbox import Sandbox, SeedError, load_seed

    port = chosen_port(args.port)
    secret_key = args.secret_key or os.environ.get(ENV_SANDBOX_SECRET_KEY) or None
    if secret_key is not None:
        try:
            check_secret_key(secret_key)  # the client's rule: a key no client could send
        except ConfigurationError as exc:
            source = "--secret-key" if args.secret_key else ENV_SANDBOX_SECRET_KEY
            return print_error(f"{source}: {exc}", EXIT_USAGE)
    if args.detach:
        return _detach(args, port, secret_key)
    try:
        payments = load_seed(args.seed) if args.seed is not None else None
        sandbox = Sandbox(
            secret_key=secret_key,
            host=args.host,
            port=port,
            payments=payments,
            log_requests=not args.quiet,
            state_file=args.state,
        )
    except SeedError as exc:  # the user's files: unreadable, or not payments
        return print_error(exc, EXIT_USAGE)
    with _stop_on_signals() as asked:
        try:
            sandbox.start()
        except OSError as exc:
            reason = exc.strerror or exc
            return print_error(f"cannot listen on {args.host}:{port}: {reason}", EXIT_USAGE)
        listening_on = sandbox.port  # a stopped sandbox no longer has one
        try:
            _announce(sandbox, args.state)
            if args.ready_fd is not None:
                _tell_ready(args.ready_fd, sandbox, args.log_file)
            while not asked:
                time.sleep(0.1)
        finally:
            sandbox.stop()
            if args.ready_fd is not None:
                background.remove_pid_file(listening_on, os.getpid())
    print("sandbox stopped", file=sys.stderr)
    return EXIT_OK


def _announce(sandbox: Any, state: str | None) -> None:
    references = ", ".join(p.reference for p in sandbox.payments)
    host, bound = sandbox.host, ""
    if host in ("0.0.0.0", "::", ""):  # noqa: S104 - the wildcards, which the URL names as loopback
        bound = f" (bound to every address{', ' + host if host else ''})"
    elif urlsplit(str(sandbox.base_url)).hostname != host.strip("[]").lower():
        bound = f" (bound to {host})"
    print(f"paysdk sandbox listening on {sandbox.base_url}{bound}")
    if (warning := _exposure_warning(sandbox.host)) is not None:
        print(warning, file=sys.stderr)
    print(f"secret key: {sandbox.secret_key}")
    print(printable(f"{len(sandbox.payments)} payments: {references}"))
    if state is not None:
        print(printable(f"state file: {os.path.abspath(state)}"))  # a name may hold ESC, \n
    print("\nPoint a client or the paysdk command at it:\n")
    for line in export_lines(sandbox.base_url, sandbox.secret_key):
        print(f"  {line}")
    print("\nPress Ctrl-C to stop.", flush=True)


def _exposure_warning(host: str) -> str | None:
    """What binding to ``host`` lets other machines do, unless it is a loopback address or name."""
    name = host.strip("[]").lower().removesuffix(".")
    if name == "localhost" or name.endswith(".localhost"):
        return None
    try:
        if ipaddress.ip_address(name).is_loopback:
            return None
    except ValueError:  # a host name: it may resolve to any address
        pass
    return printable(  # "" binds every address, and is named so
        f"warning: bound to {host or 'every address'}, the sandbox answers other machines too: "
        "anyone who reaches it with its key can read and add payments, and have it send "
        "callbacks (requests from this machine) to any URL"
    )


def _tell_ready(descriptor: int, sandbox: Any, log: str | None) -> None:
    """Write the pid file, then its path to ``--detach``'s pipe, and close the pipe. A log
    named for a free port not yet known takes the port's name, as a given port's log has
    (replacing an earlier one of that port), so that each run leaves no log of its own behind."""
    named = background.log_file(sandbox.port)
    if log is not None and log != str(named):
        os.replace(log, named)  # this process writes on through the descriptor it holds
        log = str(named)
    running = background.RunningSandbox(
        pid=os.getpid(),
        port=sandbox.port,
        base_url=sandbox.base_url,
        secret_key=sandbox.secret_key,
        log=log or "",
    )
    path = background.write_pid_file(running)
    with os.fdopen(descriptor, "wb") as pipe:  # a name's bytes as they are, UTF-8 or not
        pipe.write(os.fsencode(path))


def _detach(args: argparse.Namespace, port: int, secret_key: str | None) -> int:
    """Start the sandbox in the background; print its export lines (stdout) and where its pid
    file and log are (stderr), so ``eval "$(paysdk sandbox --detach)"`` sets the variables."""
    if port:
        existing = _check_port_free(port)
        if existing is not None:
            return existing
    forwarded = ["--host", args.host, "--port", str(port)]
    for flag, value in [("--seed", args.seed), ("--state", args.state)]:
        if value is not None:
            forwarded += [flag, os.path.abspath(value)]
    if args.quiet:
        forwarded.append("--quiet")
    env = dict(os.environ)
    if secret_key is not None:  # through the environment: arguments are visible in `ps`
        env[ENV_SANDBOX_SECRET_KEY] = secret_key
    started = background.spawn(forwarded, env, port)
    if started.sandbox is None:
        message = started.error.removeprefix(f"{PROG}: error: ")
        return print_error(f"the sandbox did not start: {message}", started.code)
    running = started.sandbox
    for line in export_lines(running.base_url, running.secret_key):
        print(line)
    if (warning := _exposure_warning(args.host)) is not None:
        print(warning, file=sys.stderr)
    print(
        f"paysdk sandbox running in the background on {running.base_url} (pid {running.pid})\n"
        f"log: {printable(str(running.log))}\n"  # the runtime directory's: ESC, \n in a name
        f"pid file: {printable(str(background.pid_file(running.port)))}\n"
        f"stop it with: paysdk sandbox stop --port {running.port}",
        file=sys.stderr,
    )
    return EXIT_OK


def _check_port_free(port: int) -> int | None:
    """An error if a detached sandbox runs on ``port``; a stale pid file of it is removed."""
    running = background.read_pid_file(background.pid_file(port))
    if running is None:
        background.remove_pid_file(port)
        return None
    if background.serving_pid(running) == running.pid:
        return print_error(
            f"a sandbox is already running on port {port} (pid {running.pid}, log "
            f"{printable(str(running.log))}): use it, or stop it with "
            f"`paysdk sandbox stop --port {port}`",
            EXIT_USAGE,
        )
    if not background.alive(running.pid):
        background.remove_pid_file(port)
    return None


@contextmanager
def _stop_on_signals() -> Generator[list[int], None, None]:
    """Ctrl-C and SIGTERM (main thread only) are added to the list it gives, the old handlers
    restored after. A list, not an ``Event``: a handler runs in the thread it interrupts, which
    may be inside the ``Event``'s wait holding its lock, and would wait for ever to set it."""
    asked: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield asked
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        asked.append(signum)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield asked
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)

"""A throwaway PostgreSQL cluster for the ledger's tests: a real server on 127.0.0.1, and a
throwaway PgBouncer in front of it.

``initdb``, ``pg_ctl`` and ``pgbouncer`` are found by ``scripts/find_postgres.py`` (PATH,
``pg_config --bindir``, then Debian's and Homebrew's directories), the one place ``make test``
looks for them too; a missing one fails the test with what to install, never skips it. Neither
will run as root, so as root they run as the ``postgres`` user, with their files in a temporary
directory that user owns.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.ports import unused_port
from tests.support.scripts import load_script

find_postgres = load_script("find_postgres")

__all__ = [
    "Cluster",
    "fresh_database",
    "postgres_bin",
    "restartable_cluster",
    "through",
    "throwaway_cluster",
    "throwaway_pgbouncer",
]


def postgres_bin() -> Path:
    """The bin directory of the PostgreSQL ``scripts/find_postgres.py`` finds.

    Raises:
        RuntimeError: a tool the ledger's tests run is missing; the message says what to install.
    """
    return tool("initdb").parent


def tool(name: str) -> Path:
    """Where ``scripts/find_postgres.py`` finds the tool ``name``; its error, as a failure."""
    try:
        where: Path = getattr(find_postgres.find_tools(), name)
    except find_postgres.MissingTools as missing:
        raise RuntimeError(str(missing)) from None
    return where


@dataclass(frozen=True)
class Cluster:
    """A running throwaway cluster: its URL, and how to restart it."""

    url: str
    pg_ctl: Sequence[str]
    """``pg_ctl -D <data>``, run as the ``postgres`` user when root."""
    log: Path
    """The server's log (pg_ctl must send it there: a server writing to a pipe holds it open)."""

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every connection is cut, and the server back when this
        returns (with the options it was started with)."""
        subprocess.run(
            [*self.pg_ctl, "-l", str(self.log), "-w", "-m", "fast", "restart"],
            check=True,
            capture_output=True,
        )

    def stop(self) -> None:
        """``pg_ctl stop -m immediate``: the server gone, every connection cut."""
        subprocess.run([*self.pg_ctl, "-m", "immediate", "stop"], check=True, capture_output=True)


@contextmanager
def throwaway_cluster() -> Iterator[str]:
    """Start a fresh cluster; yield its URL; stop it and delete every file of it."""
    with restartable_cluster() as cluster:
        yield cluster.url


@contextmanager
def restartable_cluster() -> Iterator[Cluster]:
    """Start a fresh cluster; yield it; stop it and delete every file of it."""
    bin_dir = postgres_bin()
    as_user: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="paysdk-pg-"))
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(root, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, log = root / "data", root / "server.log"
    port = unused_port()
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {root} -c fsync=off"
    initdb = [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"]
    pg_ctl = [*as_user, str(bin_dir / "pg_ctl"), "-D", str(data)]
    try:
        subprocess.run([*as_user, *initdb, "--no-sync"], check=True, capture_output=True)
        start = [*pg_ctl, "-l", str(log), "-w", "-o", options, "start"]
        subprocess.run(start, check=True, capture_output=True)
        try:
            yield Cluster(f"postgresql://postgres@127.0.0.1:{port}/postgres", pg_ctl, log)
        finally:
            stop = [*pg_ctl, "-m", "immediate", "stop"]
            subprocess.run(stop, check=False, capture_output=True)
    except subprocess.CalledProcessError as exc:
        details = log.read_text() if log.exists() else ""
        raise RuntimeError(f"{exc.cmd[len(as_user)]} failed: {exc.stderr!r} {details}") from exc
    finally:
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(url: str, options: str = "") -> str:
    """A new, empty database on the cluster at ``url``, made with ``options`` (the text after
    ``CREATE DATABASE name``, such as a locale); its URL."""
    import uuid

    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name} {options}")  # a generated, safe name
    return url.rsplit("/", 1)[0] + f"/{name}"


@contextmanager
def throwaway_pgbouncer(
    server_url: str, pool_mode: str, settings: Mapping[str, str | int] | None = None
) -> Iterator[str]:
    """Start PgBouncer on a free loopback port in front of the server at ``server_url``, with
    its defaults but for ``pool_mode`` (``transaction`` or ``session``) and ``settings``; yield
    its URL (the same database, user and password as ``server_url``); stop it, delete its files.

    Every database name is passed through to the server (``* = ...``), so a URL of
    :func:`fresh_database` works through it too (see :func:`through`). As root, it runs as the
    ``postgres`` user, as the server does.

    Args:
        server_url: the URL of a database on the server, as :func:`throwaway_cluster` yields.
        pool_mode: PgBouncer's ``pool_mode``.
        settings: more of ``pgbouncer.ini``'s ``[pgbouncer]`` section, by name.
    """
    binary = str(tool("pgbouncer"))
    server = urllib.parse.urlsplit(server_url)
    root = Path(tempfile.mkdtemp(prefix="paysdk-pgbouncer-"))
    port = unused_port()
    ini = {
        "listen_addr": "127.0.0.1",
        "listen_port": port,
        "unix_socket_dir": "",
        "auth_type": "trust",  # the user must still be in auth_file
        "auth_file": root / "userlist.txt",
        "logfile": root / "pgbouncer.log",
        "pool_mode": pool_mode,
        **(settings or {}),
    }
    lines = ["[databases]", f"* = host={server.hostname} port={server.port}", "[pgbouncer]"]
    (root / "pgbouncer.ini").write_text(
        "\n".join([*lines, *(f"{k} = {v}" for k, v in ini.items())])
    )
    (root / "userlist.txt").write_text(f'"{server.username}" ""\n')
    uid: int | None = None
    gid: int | None = None
    groups: list[int] | None = None
    if os.geteuid() == 0:  # PgBouncer refuses to run as root
        account = pwd.getpwnam("postgres")
        for path in (root, *root.iterdir()):
            os.chown(path, account.pw_uid, account.pw_gid)
        uid, gid, groups = account.pw_uid, account.pw_gid, []
    process = subprocess.Popen(
        [binary, str(root / "pgbouncer.ini")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        user=uid,
        group=gid,
        extra_groups=groups,
    )
    try:
        _wait_for_port(port, process, root / "pgbouncer.log")
        yield through(f"postgresql://127.0.0.1:{port}", server_url)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(root, ignore_errors=True)


def through(pooler_url: str, database_url: str) -> str:
    """``database_url`` (its user, password and database) reached at the pooler's host and port.

    Args:
        pooler_url: a URL of the pooler; only its host and port are used.
        database_url: a URL of a database on the server behind it.
    """
    database = urllib.parse.urlsplit(database_url)
    user, at, _ = database.netloc.rpartition("@")
    pooler = urllib.parse.urlsplit(pooler_url).netloc.rpartition("@")[2]
    return database._replace(netloc=f"{user}{at}{pooler}").geturl()


def _wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    """Return once ``process`` listens on ``port``; raise, with its log, if it exits first."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            details = log.read_text() if log.exists() else ""
            raise RuntimeError(f"pgbouncer exited with {process.returncode}: {details}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    raise RuntimeError(f"pgbouncer did not listen on port {port} within 10s")


@contextmanager
def an_uncommitted_claim(url: str, reference: str = "order-1") -> Iterator[None]:
    """Another worker's claim on ``reference``, inserted and not committed while the block runs:
    its row lock is held. Rolled back after 8 s at most, so an unbounded wait fails, not hangs.

    Args:
        url: the database (directly, not through a pooler) whose ledger table holds the claim.
        reference: the payment claimed.
    """
    import psycopg

    with psycopg.connect(url) as holder:
        holder.execute(
            "INSERT INTO paysdk_fulfilments (reference, state, attempts, amount, currency, "
            "claimed_at) VALUES (%s, 'claimed', 1, 2500, 'NGN', now())",
            (reference,),
        )
        watchdog = threading.Timer(8, holder.rollback)
        watchdog.start()
        try:
            yield
        finally:
            watchdog.cancel()
            holder.rollback()

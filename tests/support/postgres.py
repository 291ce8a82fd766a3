"""A throwaway PostgreSQL cluster for the ledger's tests: a real server on 127.0.0.1.

``initdb`` and ``pg_ctl`` come from Debian's postgresql package (``make test`` installs it when
missing). PostgreSQL refuses to run as root, so as root they run as the ``postgres`` user, with
the data and socket directories in a temporary directory that user owns.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["fresh_database", "postgres_bin", "throwaway_cluster"]


def postgres_bin() -> Path:
    """The newest installed PostgreSQL's bin directory (Debian: /usr/lib/postgresql/N/bin)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3])
    )
    if not found:
        raise RuntimeError(
            "PostgreSQL is not installed: `make test` installs it (apt-get install postgresql)"
        )
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def throwaway_cluster() -> Iterator[str]:
    """Start a fresh cluster; yield its URL; stop it and delete every file of it."""
    bin_dir = postgres_bin()
    as_user: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="paysdk-pg-"))
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(root, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, log = root / "data", root / "server.log"
    port = _free_port()
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {root} -c fsync=off"
    initdb = [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"]
    pg_ctl = [str(bin_dir / "pg_ctl"), "-D", str(data)]
    try:
        subprocess.run([*as_user, *initdb, "--no-sync"], check=True, capture_output=True)
        start = [*pg_ctl, "-l", str(log), "-w", "-o", options, "start"]
        subprocess.run([*as_user, *start], check=True, capture_output=True)
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            stop = [*pg_ctl, "-m", "immediate", "stop"]
            subprocess.run([*as_user, *stop], check=False, capture_output=True)
    except subprocess.CalledProcessError as exc:
        details = log.read_text() if log.exists() else ""
        raise RuntimeError(f"{exc.cmd[len(as_user)]} failed: {exc.stderr!r} {details}") from exc
    finally:
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(url: str) -> str:
    """A new, empty database on the cluster at ``url``; its URL."""
    import uuid

    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")  # a generated, safe name
    return url.rsplit("/", 1)[0] + f"/{name}"

"""Find what the ledger's tests run: PostgreSQL's ``initdb`` and ``pg_ctl``, ``pgbouncer`` and
``faketime``; on Debian or Ubuntu install them with apt-get when missing, elsewhere say what to
install and fail. Standard library only: ``make test`` runs it before any virtualenv exists.

Where each is looked for, in order:

- ``initdb`` and ``pg_ctl``: the directory of an ``initdb`` on PATH; ``pg_config --bindir``
  (``pg_config`` on PATH); Debian's ``/usr/lib/postgresql/<newest>/bin``; Homebrew's
  ``postgresql@N`` kegs, which it does not link onto PATH.
- ``pgbouncer`` and ``faketime``: PATH, then ``/usr/sbin`` (Debian's pgbouncer),
  ``/usr/local/sbin``, ``/usr/bin``, ``/usr/local/bin`` and ``/opt/homebrew/bin``.

Usage: ``python scripts/find_postgres.py [--install]``: prints where each tool is; exits 1,
saying what to install, when one is missing (after installing it with apt-get on Debian or Ubuntu
when given ``--install``).
"""

from __future__ import annotations

import argparse
import glob
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEBIAN_PACKAGES",
    "FALLBACKS",
    "Fallbacks",
    "MissingTools",
    "Tools",
    "apt_install",
    "find_tools",
    "install_hint",
    "is_debian",
    "main",
]

DEBIAN_PACKAGES = ("postgresql", "pgbouncer", "faketime")
_HINTS = {
    "debian": "sudo apt-get install postgresql pgbouncer faketime",
    "macos": "brew install postgresql@16 pgbouncer libfaketime",
    "fedora": "sudo dnf install postgresql-server pgbouncer libfaketime",
}


@dataclass(frozen=True)
class Fallbacks:
    """Where to look past PATH and ``pg_config``: glob patterns of PostgreSQL bin directories
    (the newest version wins) and directories of system binaries."""

    postgres_bins: Sequence[str] = (
        "/usr/lib/postgresql/*/bin",
        "/opt/homebrew/opt/postgresql@*/bin",
        "/usr/local/opt/postgresql@*/bin",
    )
    system_dirs: Sequence[str] = (
        "/usr/sbin",
        "/usr/local/sbin",
        "/usr/bin",
        "/usr/local/bin",
        "/opt/homebrew/bin",
    )


FALLBACKS = Fallbacks()
"""Where :func:`find_tools` looks past PATH unless told otherwise."""


@dataclass(frozen=True)
class Tools:
    """Where each tool the ledger's tests run was found."""

    initdb: Path
    pg_ctl: Path
    pgbouncer: Path
    faketime: Path


class MissingTools(RuntimeError):
    """One or more tools are missing; the message names them and says what to install."""


def find_tools(path: str | None = None, fallbacks: Fallbacks | None = None) -> Tools:
    """Every tool the ledger's tests run, or :class:`MissingTools` naming those not found.

    Args:
        path: the PATH to search (the environment's when ``None``).
        fallbacks: where to look past PATH (:data:`FALLBACKS` when ``None``).

    Raises:
        MissingTools: one or more tools were not found; the message says what to install.
    """
    fallbacks = FALLBACKS if fallbacks is None else fallbacks
    search = os.environ.get("PATH", os.defpath) if path is None else path
    bin_dir = _postgres_bin(search, fallbacks)
    found = {
        "initdb": bin_dir / "initdb" if bin_dir else None,
        "pg_ctl": bin_dir / "pg_ctl" if bin_dir else None,
        "pgbouncer": _system_tool("pgbouncer", search, fallbacks),
        "faketime": _system_tool("faketime", search, fallbacks),
    }
    missing = [name for name, where in found.items() if where is None]
    if missing:
        places = ["PATH", "pg_config --bindir", *fallbacks.postgres_bins, *fallbacks.system_dirs]
        raise MissingTools(
            f"the ledger's tests need {', '.join(missing)}, not found (looked in "
            f"{', '.join(places)}): {install_hint()}"
        )
    return Tools(**{name: where for name, where in found.items() if where is not None})


def _postgres_bin(path: str, fallbacks: Fallbacks) -> Path | None:
    """The first directory holding both ``initdb`` and ``pg_ctl``, searched as the module says."""
    candidates: list[Path] = []
    initdb = shutil.which("initdb", path=path)
    if initdb is not None:
        candidates.append(Path(initdb).parent)
    pg_config = shutil.which("pg_config", path=path)
    if pg_config is not None:
        try:
            done = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=30, check=True
            )
            candidates.append(Path(done.stdout.strip()))
        except (OSError, subprocess.SubprocessError):
            pass  # a broken pg_config: the fallbacks may still find PostgreSQL
    for pattern in fallbacks.postgres_bins:
        candidates.extend(sorted(map(Path, glob.glob(pattern)), key=_version, reverse=True))
    for directory in candidates:
        if all(_executable(directory / name) for name in ("initdb", "pg_ctl")):
            return directory
    return None


def _version(directory: Path) -> tuple[int, ...]:
    """``(16,)`` from ``/usr/lib/postgresql/16/bin`` or ``.../postgresql@16/bin``."""
    numbers = re.findall(r"\d+", directory.parent.name)
    return tuple(int(number) for number in numbers)


def _system_tool(name: str, path: str, fallbacks: Fallbacks) -> Path | None:
    on_path = shutil.which(name, path=path)
    if on_path is not None:
        return Path(on_path)
    for directory in fallbacks.system_dirs:
        if _executable(Path(directory) / name):
            return Path(directory) / name
    return None


def _executable(file: Path) -> bool:
    return file.is_file() and os.access(file, os.X_OK)


def is_debian() -> bool:
    """Debian, Ubuntu or a derivative: where apt-get installs the tools."""
    return os.path.exists("/etc/debian_version") or shutil.which("apt-get") is not None


def install_hint() -> str:
    """What to run to install the tools on this system (every known system's, elsewhere)."""
    if is_debian():
        return f"install them with `{_HINTS['debian']}` (or run `make postgres`)"
    if platform.system() == "Darwin":
        return f"install them with `{_HINTS['macos']}`"
    if shutil.which("dnf") is not None:
        return f"install them with `{_HINTS['fedora']}`"
    return "install PostgreSQL, PgBouncer and libfaketime, e.g. " + "; ".join(
        f"{system}: `{command}`" for system, command in _HINTS.items()
    )


def apt_install(packages: Sequence[str] = DEBIAN_PACKAGES) -> None:
    """``apt-get install`` Debian packages, through sudo unless root.

    Args:
        packages: the packages (the ledger's tests' tools unless told otherwise).

    Raises:
        OSError: apt-get (or sudo) cannot be run.
        subprocess.CalledProcessError: apt-get failed.
    """
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    print(f"installing {', '.join(packages)} (apt-get)", file=sys.stderr)
    # another apt-get may be running (`.ci/run` builds the matrix's chroot beside `make test`)
    apt = ["apt-get", "-o", "DPkg::Lock::Timeout=600"]
    subprocess.run([*sudo, *apt, "update", "-qq"], check=True, env=env)
    install = [*apt, "install", "-y", "-qq", "--no-install-recommends", *packages]
    subprocess.run([*sudo, *install], check=True, env=env)


def main(argv: Sequence[str] | None = None) -> int:
    """Print where each tool is and return 0, or say what is missing and return 1."""
    parser = argparse.ArgumentParser(description="Find what the ledger's tests run.")
    parser.add_argument(
        "--install", action="store_true", help="on Debian or Ubuntu, apt-get what is missing"
    )
    args = parser.parse_args(argv)
    try:
        tools = find_tools()
    except MissingTools as missing:
        if not (args.install and is_debian()):
            print(f"error: {missing}", file=sys.stderr)
            return 1
        try:
            apt_install()
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"error: apt-get failed ({exc}): {missing}", file=sys.stderr)
            return 1
        try:
            tools = find_tools()
        except MissingTools as still:
            print(f"error: {still}", file=sys.stderr)
            return 1
    for name, where in vars(tools).items():
        print(f"{name}: {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The documentation site built as `make docs` builds it, in a process kept off the network."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["build_site"]

# mkdocs in a process whose sockets refuse to connect: the build must not fetch anything.
OFFLINE_BUILD = """
import socket, sys

def refuse(*args, **kwargs):
    raise OSError("the docs build tried to use the network")

socket.socket.connect = socket.socket.connect_ex = refuse
socket.create_connection = socket.getaddrinfo = refuse

from mkdocs.__main__ import cli

cli(["build", "--strict", "--site-dir", sys.argv[1]])
"""


def build_site(project: Path, site_dir: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of the ``mkdocs.yml`` in ``project``, into ``site_dir``, offline.

    Args:
        project: the directory holding ``mkdocs.yml``.
        site_dir: where the site is written.

    Returns:
        The finished build: its exit status, and its log in ``stderr``.
    """
    return subprocess.run(
        [sys.executable, "-c", OFFLINE_BUILD, str(site_dir)],
        cwd=project,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

"""A sandbox's port and key: ``--port``/``--secret-key``, else ``$PAYSDK_SANDBOX_PORT`` and
``$PAYSDK_SANDBOX_SECRET_KEY``, so the export lines that point a shell at it stay the same from
one start to the next."""

from __future__ import annotations

import argparse
import os
import shlex
import string

from .._core.environment import ENV_BASE_URL, ENV_SECRET_KEY
from .._errors import ConfigurationError
from ._connection import whole_number

__all__ = [
    "ENV_SANDBOX_PORT",
    "ENV_SANDBOX_SECRET_KEY",
    "chosen_port",
    "export_lines",
    "port_number",
]

ENV_SANDBOX_PORT = "PAYSDK_SANDBOX_PORT"
ENV_SANDBOX_SECRET_KEY = "PAYSDK_SANDBOX_SECRET_KEY"  # noqa: S105 - the variable's name


def export_lines(base_url: str, secret_key: str) -> list[str]:
    """The two ``export`` lines that point clients at a sandbox. Each value is quoted for a POSIX
    shell (a plain one left bare), so ``eval`` sets it as given and runs nothing a key may hold
    (``$(...)``, a backtick, ``;``)."""
    return [
        f"export {ENV_BASE_URL}={shlex.quote(base_url)}",
        f"export {ENV_SECRET_KEY}={shlex.quote(secret_key)}",
    ]


def chosen_port(given: int | None) -> int:
    """``--port``, else ``$PAYSDK_SANDBOX_PORT``, else 0 (a free one)."""
    if given is not None:
        return given
    text = os.environ.get(ENV_SANDBOX_PORT, "").strip(string.whitespace)  # not U+00A0
    if not text:
        return 0
    try:
        return port_number(text)
    except argparse.ArgumentTypeError as exc:
        raise ConfigurationError(f"{ENV_SANDBOX_PORT}: {exc}") from None


def port_number(text: str) -> int:
    """``--port``: a TCP port number, 0 for a free one."""
    return whole_number(text, 0, 65535, "a port from 0 to 65535")

"""``PAYSDK_LOG=debug|info``: the ``paysdk`` logger on stderr without a line of code, set once,
with the first client made (a handler you added yourself is left alone, and a line your root
handler already writes to stderr is not written twice). Each send is logged at DEBUG and each
retry at INFO, never with the secret key."""

from __future__ import annotations

import contextlib
import logging
import os
import string
import sys
import time
from typing import TextIO

from .._core.environment import ENV_LOG
from .._errors import ConfigurationError

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO}


class CurrentStderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a line is logged, as logging's last resort
    does: a stream swapped in for a while (pytest's ``capsys``, a CLI runner) and closed since
    is never written to."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        """Kept for ``StreamHandler``'s own ``setStream``: the stream is always the current one."""

    def emit(self, record: logging.LogRecord) -> None:
        if not _on_stderr_above(record):
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:
        """Say on stderr that a line failed, as logging does, unless stderr itself cannot take
        it (closed, or of an encoding that cannot): a line lost never fails the call logging it."""
        with contextlib.suppress(ValueError):
            super().handleError(record)


def _on_stderr_above(record: logging.LogRecord) -> bool:
    """Whether a handler the ``paysdk`` logger propagates to writes ``record`` to the current
    stderr already: the application's ``logging.basicConfig()``, its level and filters passed.
    One to a file, or pytest's capture handler, is not stderr: the line is written there and
    here."""
    logger = logging.getLogger("paysdk")
    while logger.propagate and logger.parent is not None:
        logger = logger.parent
        for handler in logger.handlers:
            if (
                getattr(handler, "stream", None) is sys.stderr
                and record.levelno >= handler.level
                and handler.filter(record)
                and isinstance(handler, logging.StreamHandler)
            ):
                return True
    return False


_configured = False


def configure_logging() -> None:
    global _configured
    if _configured:
        return
    given = os.environ.get(ENV_LOG, "")
    text = given.strip(string.whitespace)  # ASCII blanks and case alone: "info\xa0" is no level
    if not text:
        return
    value = text.lower() if text.isascii() else text
    if value not in _LEVELS:
        raise ConfigurationError(f"{ENV_LOG} must be 'debug' or 'info', not {given!a}")
    _configured = True
    logger = logging.getLogger("paysdk")
    logger.setLevel(_LEVELS[value])
    if not logger.handlers:
        handler = CurrentStderrHandler()
        handler.setFormatter(_utc_formatter())
        logger.addHandler(handler)


def _utc_formatter() -> logging.Formatter:
    """Each line's time in UTC, ISO 8601 with a ``Z`` (``2026-11-02T09:15:27.123Z``), as every
    time paysdk shows: a local time says nothing of its zone, and repeats an hour each autumn
    where clocks go back."""
    formatter = logging.Formatter("%(asctime)s %(levelname)s paysdk: %(message)s")
    formatter.converter = time.gmtime
    formatter.default_time_format = "%Y-%m-%dT%H:%M:%S"
    formatter.default_msec_format = "%s.%03dZ"
    return formatter

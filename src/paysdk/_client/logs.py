"""``PAYSDK_LOG=debug|info``: the ``paysdk`` logger on stderr without a line of code.

Each send is logged at DEBUG and each retry at INFO; nothing paysdk logs holds the secret key.
Set once, the first time a client is made; a handler you added yourself is left alone.
"""

from __future__ import annotations

import logging
import os
import sys

from .._core.environment import ENV_LOG
from .._errors import ConfigurationError

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO}
_configured = False


def configure_logging() -> None:
    global _configured
    if _configured:
        return
    value = os.environ.get(ENV_LOG, "").strip().lower()
    if not value:
        return
    if value not in _LEVELS:
        raise ConfigurationError(f"{ENV_LOG} must be 'debug' or 'info', not {value!r}")
    _configured = True
    logger = logging.getLogger("paysdk")
    logger.setLevel(_LEVELS[value])
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s paysdk: %(message)s"))
        logger.addHandler(handler)

"""``--lookup`` and ``--fulfil``: the merchant's own functions, named as ``package.module:name``
(or ``package.module.name``) and imported from the current directory, as gunicorn does."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable

from .._errors import ConfigurationError

__all__ = ["import_callable"]


def import_callable(spec: str, flag: str) -> Callable[..., object]:
    """The callable ``spec`` names: ``package.module:function`` (``function`` may be dotted:
    ``module:Shop.lookup``) or ``package.module.function``. The current directory comes first
    on ``sys.path``, so a module beside the cron job's working directory is found.

    Args:
        spec: what the user wrote.
        flag: the option it came from, for the error.

    Raises:
        ConfigurationError: it cannot be imported, has no such attribute, or is not callable.
    """
    module_name, _, attribute = spec.partition(":") if ":" in spec else spec.rpartition(".")
    if (
        not module_name
        or not attribute
        or not all(part.isidentifier() for part in [*module_name.split("."), *attribute.split(".")])
    ):
        raise ConfigurationError(
            f"{flag}: expected package.module:function or package.module.function, not {spec!r}"
        )
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        found: object = importlib.import_module(module_name)
    except Exception as error:  # the module's own failure is the user's to see
        raise ConfigurationError(
            f"{flag}: cannot import {module_name!r} (from {cwd} and sys.path): "
            f"{type(error).__name__}: {error}"
        ) from None
    for name in attribute.split("."):
        if not hasattr(found, name):
            raise ConfigurationError(f"{flag}: {module_name!r} has no {attribute!r}")
        found = getattr(found, name)
    if not callable(found):
        raise ConfigurationError(
            f"{flag}: {spec!r} is of type {type(found).__name__}, not a function to call"
        )
    return found

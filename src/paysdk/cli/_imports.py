"""``--lookup`` and ``--fulfil``: the merchant's own functions, named as ``package.module:name``
(or ``package.module.name``) and imported from the current directory, as gunicorn does."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

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
    _set_up_django(flag)
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


def _set_up_django(flag: str) -> None:
    """Django's apps loaded, as ``manage.py`` loads them, where ``DJANGO_SETTINGS_MODULE`` names
    a project: a Django project's lookup reads its models, which cannot be imported before.

    Args:
        flag: the option being imported, for the error.

    Raises:
        ConfigurationError: the settings module cannot be imported or Django cannot start.
    """
    settings_module = os.environ.get("DJANGO_SETTINGS_MODULE", "")
    if not settings_module:
        return
    try:
        django: Any = importlib.import_module("django")
        apps: Any = importlib.import_module("django.apps").apps
    except ImportError:
        return  # not a Django project after all: the lookup is imported as it is
    if apps.ready:
        return
    try:
        django.setup()
    except Exception as error:  # the project's own failure is the user's to see
        raise ConfigurationError(
            f"{flag}: cannot set up Django (DJANGO_SETTINGS_MODULE={settings_module!r}, from "
            f"{os.getcwd()} and sys.path): {type(error).__name__}: {error}"
        ) from None

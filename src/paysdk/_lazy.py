"""Names a package loads on first use: its ``__getattr__`` and ``__dir__``, written once."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names", "publish"]


def lazy_names(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``package``'s ``__getattr__`` and ``__dir__`` for the names in ``homes``.

    Args:
        package: the package's ``__name__``.
        homes: each name and the module it lives in, relative to the package (``".plans"``).

    A name's module is imported the first time the name is asked for; the name is then a plain
    attribute of the package, so later lookups cost nothing. ``dir()`` lists the package's public
    names (``__all__`` and ``homes``), not what its module imports to work.
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, package), name)
        if getattr(value, "__module__", "").startswith(f"{package}._"):
            publish(package, value)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*homes, *getattr(sys.modules[package], "__all__", ())})

    return __getattr__, __dir__


def publish(package: str, *names: object) -> None:
    """Give each class and function its public module as ``__module__``.

    Tracebacks, reprs and pickles then name ``paysdk.ConfigurationError``, the name users import
    (and pickle finds it there). Pydantic models are left alone: a model builds its schema on
    first use (``defer_build``), resolving its annotations in the module its ``__module__``
    names, which must stay the one that defines them. So are aliases and constants.

    Args:
        package: the public module the objects are imported from (``"paysdk"``).
        *names: the classes and functions that module exports.
    """
    for value in names:
        if hasattr(value, "model_rebuild"):
            continue
        if isinstance(value, type) or inspect.isfunction(value):
            value.__module__ = package

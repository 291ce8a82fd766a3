"""Merchants' test files run in-process by pytester, over one copy of paysdk.

An in-process run puts ``sys.modules`` back as it found it, forgetting each module first imported
during the run, while the names ``paysdk`` resolves lazily (``paysdk.Client``) stay cached on the
package. A later run would then import a second ``Client`` class, whose instances the framework
helpers' ``isinstance`` checks refuse. Importing every module of paysdk first keeps one copy.
The same goes for the web frameworks the helpers build on: a helper holds the classes of the
Starlette modules it imports, so the rest of Starlette (its routing) and FastAPI are imported
first too, or a later run's app would mix two copies of Starlette.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import pkgutil
import warnings

import pytest

import paysdk

__all__ = ["import_all_of_paysdk", "run_inprocess"]

DJANGO_LOADS = tuple(
    f"paysdk.integrations.django.{name}" for name in ("models", "admin", "migrations")
)
"""The Django app's models, admin and migrations: only a configured Django can import them (its
app registry does, at ``django.setup()``)."""
FRAMEWORKS = ("fastapi", "starlette.applications", "starlette.routing", "flask", "django.http")


def import_all_of_paysdk() -> None:
    """Import each module of the package (but ``__main__`` ones, which run a program, and
    :data:`DJANGO_LOADS`)."""
    for module in pkgutil.walk_packages(paysdk.__path__, "paysdk."):
        if module.name.endswith(".__main__") or module.name.startswith(DJANGO_LOADS):
            continue
        importlib.import_module(module.name)
    for framework in FRAMEWORKS:
        with contextlib.suppress(ModuleNotFoundError):  # a job without that extra
            importlib.import_module(framework)


def run_inprocess(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """``pytester.runpytest_inprocess(*args)``, after collecting what earlier tests left behind.

    An unclosed socket that an earlier test abandoned in a reference cycle would otherwise be
    collected in the middle of the inner run, whose warning filters make its ResourceWarning an
    error of a merchant's test that never touched it.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    return pytester.runpytest_inprocess(*args)

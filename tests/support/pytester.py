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
import importlib
import pkgutil

import paysdk

__all__ = ["import_all_of_paysdk"]

FRAMEWORKS = ("fastapi", "starlette.applications", "starlette.routing", "flask", "django.http")


def import_all_of_paysdk() -> None:
    """Import each module of the package (but ``__main__`` ones, which run a program)."""
    for module in pkgutil.walk_packages(paysdk.__path__, "paysdk."):
        if not module.name.endswith(".__main__"):
            importlib.import_module(module.name)
    for framework in FRAMEWORKS:
        with contextlib.suppress(ModuleNotFoundError):  # a job without that extra
            importlib.import_module(framework)

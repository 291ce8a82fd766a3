"""The one Django configuration of a test process: Django's settings are the process's, so
every Django test (the callback helper's, the ledger app's, a race's worker) configures it here.

The site serves whatever ``serve`` was last given (a test's callback view, or the admin). Its
settings are the module ``django_settings`` (``DEBUG = True`` as a new project has it, the admin
stack and paysdk's app); its databases: ``default``, a SQLite file, and ``postgres``, whose
server a test fills in (:func:`use_postgres`) before its first use.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import django
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, clear_url_caches, path

__all__ = [
    "configure",
    "debug_page",
    "postgres_settings",
    "serve",
    "sqlite_settings",
    "url_of",
    "urlpatterns",
]

urlpatterns: list[URLPattern | URLResolver] = []
"""Filled by :func:`serve`: the views close over each test's own objects."""


def sqlite_settings(path: Path | str, test_path: Path | str | None = None) -> dict[str, Any]:
    """``DATABASES`` settings of a SQLite file (and of the file its test database is)."""
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(path),
        "TEST": {"NAME": str(test_path)} if test_path is not None else {},
    }


def postgres_settings(url: str) -> dict[str, Any]:
    """``DATABASES`` settings of the database at ``url`` (``postgresql://user@host:port/name``)."""
    parts = urllib.parse.urlsplit(url)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": parts.path.lstrip("/"),
        "USER": parts.username or "",
        "PASSWORD": parts.password or "",
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
    }


def configure(databases: dict[str, dict[str, Any]] | None = None) -> None:
    """Configure Django for this process, once; later calls change nothing.

    Args:
        databases: ``DATABASES``; by default a SQLite ``default`` in a directory of the process's
            own and a ``postgres`` alias whose server is not known yet.
    """
    if settings.configured:
        return
    if databases is None:
        home = Path(tempfile.mkdtemp(prefix="paysdk-django-"))
        atexit.register(shutil.rmtree, home, True)
        databases = {
            "default": sqlite_settings(home / "site.db", home / "test-site.db"),
            "postgres": postgres_settings("postgresql://postgres@127.0.0.1/paysdk_django"),
        }
    from tests.support import django_settings

    module = vars(django_settings)
    settings.configure(
        **{name: module[name] for name in module if name.isupper()}, DATABASES=databases
    )
    django.setup()


def serve(*patterns: URLPattern | URLResolver) -> None:
    """Serve these URL patterns, and only these, from now on."""
    urlpatterns[:] = patterns
    clear_url_caches()


def debug_page(view: Callable[[HttpRequest], HttpResponse]) -> str:
    """The page Django's test client gets from ``view``, which must raise: the debug page of a
    new project (``DEBUG = True``), with each frame's locals, as HTML."""
    from django.test import Client

    serve(path("page", view))
    page = Client(raise_request_exception=False).get("/page", HTTP_ACCEPT="text/html")
    html = page.content.decode()
    assert page.status_code == 500 and "Local vars" in html, html[:300]
    return html


def url_of(alias: str) -> str:
    """The URL ``paysdk.Ledger`` opens the database of Django's ``alias`` with."""
    from django.db import connections

    given = connections[alias].settings_dict
    if connections[alias].vendor == "sqlite":
        return f"sqlite:///{given['NAME']}"
    user = urllib.parse.quote(given["USER"])
    return f"postgresql://{user}@{given['HOST']}:{given['PORT']}/{given['NAME']}"

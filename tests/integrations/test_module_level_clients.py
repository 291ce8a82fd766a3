"""A client made at import time, as every example makes it, in an app whose environment has no
key: a Django project's management commands run (``migrate``, ``check``), and the first
callback is refused loudly (500 ``error``, logged with what is missing) before any request; with
the key set, the same project verifies against the sandbox. Flask and FastAPI alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox

SETTINGS = """
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
SECRET_KEY = "django-insecure-test-only"
DEBUG = True
ALLOWED_HOSTS = ["testserver"]
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "paysdk.integrations.django",
]
ROOT_URLCONF = "shop.urls"
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": BASE_DIR / "db.sqlite3"}}
USE_TZ = True
"""

URLS = f"""
from django.http import JsonResponse
from django.urls import path

import paysdk
from paysdk.integrations.django import verified_callback

ORDERS = {{"{COMPLETED_REFERENCE}": None}}
client = paysdk.Client()  # reads PAYSDK_SECRET_KEY and PAYSDK_BASE_URL


def find(reference):
    return paysdk.Expected(amount=None, currency=None) if reference in ORDERS else None


@verified_callback(client, lookup=find)
def payment_callback(request, payment):
    return JsonResponse({{"status": "ok", "reference": payment.reference}})


urlpatterns = [path("payments/callback", payment_callback)]
"""

MANAGE = """
import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shop.settings")
from django.core.management import execute_from_command_line

execute_from_command_line(sys.argv)
"""

CALLBACK = f"""
from django.test import Client

answer = Client().get("/payments/callback", {{"reference": "{COMPLETED_REFERENCE}"}})
print(answer.status_code, answer.content.decode())
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A Django project as ``startproject`` lays one out, its callback view's client made when
    its URLconf is imported."""
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "settings.py").write_text(SETTINGS)
    (tmp_path / "shop" / "urls.py").write_text(URLS)
    (tmp_path / "manage.py").write_text(MANAGE)
    return tmp_path


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with Sandbox() as running:
        yield running


def manage(project: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python manage.py ...`` in ``project``, with no PAYSDK_ variable but ``env``'s."""
    clean = {name: value for name, value in os.environ.items() if not name.startswith("PAYSDK_")}
    return subprocess.run(
        [sys.executable, "manage.py", *argv],
        cwd=project,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_management_commands_run_without_the_key_and_a_callback_is_refused_saying_why(
    project: Path,
) -> None:
    for command in (["check"], ["migrate", "--verbosity", "0"]):
        done = manage(project, *command)
        assert done.returncode == 0, done.stderr
    done = manage(project, "shell", "-c", CALLBACK)
    assert done.returncode == 0, done.stderr
    status, _, body = done.stdout.strip().splitlines()[-1].partition(" ")
    assert (status, json.loads(body)) == ("500", {"status": "error"})
    assert "no secret key: pass secret_key=... or set PAYSDK_SECRET_KEY" in done.stderr
    assert "no base URL: pass base_url=... or set PAYSDK_BASE_URL" in done.stderr


def test_with_the_key_set_the_same_project_verifies_against_the_sandbox(
    project: Path, sandbox: Sandbox
) -> None:
    env = {"PAYSDK_SECRET_KEY": sandbox.secret_key, "PAYSDK_BASE_URL": sandbox.base_url}
    done = manage(project, "shell", "-c", CALLBACK, **env)
    assert done.returncode == 0, done.stderr
    status, _, body = done.stdout.strip().splitlines()[-1].partition(" ")
    assert (status, json.loads(body)) == ("200", {"status": "ok", "reference": COMPLETED_REFERENCE})
    assert [request.path for request in sandbox.requests] == [f"/payment/{COMPLETED_REFERENCE}"]


FLASK_APP = textwrap.dedent(f"""
    import paysdk
    from flask import Flask
    from paysdk.integrations.flask import verified_callback

    app = Flask(__name__)
    client = paysdk.Client()


    @app.get("/payments/callback")
    @verified_callback(client, lookup=lambda reference: paysdk.Expected(amount=None, currency=None))
    def payment_callback(payment):
        return {{"status": "ok"}}


    answer = app.test_client().get("/payments/callback?reference={COMPLETED_REFERENCE}")
    print(answer.status_code, answer.get_data(as_text=True))
""")

FASTAPI_APP = textwrap.dedent(f"""
    import paysdk
    from fastapi import FastAPI
    from fastapi.testclient import TestClient
    from paysdk.integrations.fastapi import verified_callback

    app = FastAPI()
    client = paysdk.AsyncClient()


    @app.get("/payments/callback")
    @verified_callback(client, lookup=lambda reference: paysdk.Expected(amount=None, currency=None))
    async def payment_callback(payment: paysdk.VerifiedPayment):
        return {{"status": "ok"}}


    answer = TestClient(app).get("/payments/callback?reference={COMPLETED_REFERENCE}")
    print(answer.status_code, answer.text)
""")


@pytest.mark.parametrize("app", [FLASK_APP, FASTAPI_APP], ids=["flask", "fastapi"])
def test_a_flask_or_fastapi_app_imports_without_the_key_and_refuses_its_first_callback(
    app: str, tmp_path: Path
) -> None:
    (tmp_path / "app.py").write_text(app)
    clean = {name: value for name, value in os.environ.items() if not name.startswith("PAYSDK_")}
    done = subprocess.run(
        [sys.executable, "app.py"],
        cwd=tmp_path,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    status, _, body = done.stdout.strip().splitlines()[-1].partition(" ")
    assert (status, json.loads(body)) == ("500", {"status": "error"})
    assert "no secret key" in done.stderr

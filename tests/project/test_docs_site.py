"""The documentation site builds with ``mkdocs build --strict``, offline, with every page."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.make import dry_run

ROOT = Path(__file__).resolve().parents[2]

# mkdocs in a process whose sockets refuse to connect: the build must not fetch anything.
OFFLINE_BUILD = """
import socket, sys

def refuse(*args, **kwargs):
    raise OSError("the docs build tried to use the network")

socket.socket.connect = socket.socket.connect_ex = refuse
socket.create_connection = socket.getaddrinfo = refuse

from mkdocs.__main__ import cli

cli(["build", "--strict", "--site-dir", sys.argv[1]])
"""

PAGES = [
    "payments", "configuration", "errors", "callbacks", "fulfilment", "testing", "examples",
    "cli", "sandbox", "performance", "design", "reference", "changelog",
]  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_BUILD, str(out)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr
    return out


def page(site: Path, name: str) -> str:
    return (site / f"{name}.html").read_text(encoding="utf-8")


def test_every_page_of_the_nav_is_built(site: Path) -> None:
    assert "python-paysdk" in (site / "index.html").read_text(encoding="utf-8")
    for name in PAGES:
        assert (site / f"{name}.html").is_file(), name


def test_the_api_reference_is_generated_from_the_docstrings(site: Path) -> None:
    reference = page(site, "reference")
    assert "Whether the service reports this payment as successful." in reference
    for anchor in [
        "paysdk.Client.verify_callback",
        "paysdk.AsyncClient",
        "paysdk.PaymentMismatchError",
        "paysdk.integrations.fastapi.verified_callback",
        "paysdk.sandbox.Sandbox",
    ]:
        assert f'id="{anchor}"' in reference


def test_the_changelog_page_is_the_changelog(site: Path) -> None:
    changelog = page(site, "changelog")
    assert "Unreleased" in changelog
    assert "Keep a Changelog" in changelog


def test_pages_load_nothing_from_the_web(site: Path) -> None:
    """No web fonts, analytics or scripts from elsewhere: the site works offline too."""
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        external = re.findall(r"<(?:script|link|img)[^>]*(?:src|href)=\"(https?:)?//[^\"]*", text)
        assert not external, (html, external)
        assert "fonts.googleapis.com" not in text


SEARCH_INDEX_SCRIPT = "var __index = "


def test_search_works_opened_from_disk(site: Path) -> None:
    """Over file:// the theme loads the index as a script and runs its worker in an iframe.

    Browsers refuse fetch() and Web Workers on file:// pages: the offline plugin writes the
    index into search/search_index.js, and each page loads the iframe-worker shim from the site.
    """
    script = (site / "search" / "search_index.js").read_text(encoding="utf-8")
    assert script.startswith(SEARCH_INDEX_SCRIPT)
    index = json.loads(script.removeprefix(SEARCH_INDEX_SCRIPT))
    assert index == json.loads((site / "search" / "search_index.json").read_text("utf-8"))
    found = {entry["location"].split("#")[0] for entry in index["docs"]}
    assert {f"{name}.html" for name in PAGES} <= found
    assert any("verify_callback" in entry["text"] for entry in index["docs"])
    shim = site / "assets" / "javascripts" / "iframe-worker-shim.js"
    assert "window.Worker = IFrameWorker" in shim.read_text(encoding="utf-8")
    for html in [site / "index.html", *(site / f"{name}.html" for name in PAGES)]:
        assert '<script src="assets/javascripts/iframe-worker-shim.js">' in html.read_text("utf-8")


def test_make_docs_serve_serves_the_site_on_loopback(tmp_path: Path) -> None:
    serve = dry_run("docs-serve", tmp_path)[-1]
    assert re.search(r"mkdocs serve .*--dev-addr 127\.0\.0\.1:8000", serve)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make docs-serve" in readme
    assert "http://127.0.0.1:8000" in readme


def test_the_callback_page_shows_the_example_files_themselves(site: Path) -> None:
    callbacks = page(site, "callbacks")
    for example in ("flask_callback", "django_callback", "fastapi_callback"):
        source = (ROOT / "examples" / f"{example}.py").read_text(encoding="utf-8")
        first_code_line = next(line for line in source.splitlines() if line.startswith("client ="))
        assert f"examples/{example}.py" in callbacks
        words = re.findall(r"\w+", first_code_line)
        assert all(word in callbacks for word in words), example
    assert "examples/quickstart.py" in page(site, "examples")
    assert "CALLBACK_PATH" in page(site, "examples")

"""The documentation site builds with ``mkdocs build --strict``, offline, with every page."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

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
    "configuration", "errors", "callbacks", "fulfilment", "testing", "cli", "sandbox",
    "performance", "design", "reference", "changelog",
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

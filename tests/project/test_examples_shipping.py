"""The example apps ship in the sdist, beside the docs that show them, and stay out of the wheel.

They are programs to read and copy (docs/examples.md says so), each needing a framework paysdk
does not depend on: in the wheel they would be modules nobody imports. The sdist carries them
with docs/ and mkdocs.yml, so the docs build from it shows the same files.
"""

from __future__ import annotations

import ast
import re
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.support.installs import install_lines, installed_by, providers, third_party_imports

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(path.name for path in (ROOT / "examples").glob("*.py"))


@pytest.fixture(scope="module")
def dist(paysdk_dist: Path) -> Path:
    """The sdist and the wheel built from it, as ``python -m build`` makes them for PyPI."""
    return paysdk_dist


def test_there_are_examples() -> None:
    assert {"quickstart.py", "flask_callback.py", "django_callback.py"} <= set(EXAMPLES)


def test_the_sdist_ships_each_example_with_the_docs_that_show_it(dist: Path) -> None:
    (sdist,) = dist.glob("python_paysdk-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {f"examples/{name}" for name in EXAMPLES} <= names
    assert {"docs/examples.md", "docs/callbacks.md", "mkdocs.yml"} <= names


def test_the_wheel_ships_no_examples(dist: Path) -> None:
    (wheel,) = dist.glob("python_paysdk-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert not [name for name in names if "examples" in name or name.endswith(tuple(EXAMPLES))]


def test_the_examples_page_says_where_they_are_and_why_not_in_the_wheel() -> None:
    page = " ".join((ROOT / "docs" / "examples.md").read_text(encoding="utf-8").split())
    assert "in the source distribution" in page
    assert "not in the wheel" in page
    for name in EXAMPLES:
        assert f"examples/{name}" in page


def docs_install_line(example: str) -> list[str]:
    """The ``pip install`` arguments docs/examples.md's table gives for ``examples/<example>``."""
    page = (ROOT / "docs" / "examples.md").read_text(encoding="utf-8")
    (row,) = re.findall(rf"^\| `examples/{re.escape(example)}` \|.*$", page, flags=re.MULTILINE)
    (line,) = install_lines(row)
    return line.arguments


def header_install_line(example: str) -> list[str]:
    """The ``Install: pip install ...`` line of the example's own docstring."""
    source = (ROOT / "examples" / example).read_text(encoding="utf-8")
    docstring = ast.get_docstring(ast.parse(source)) or ""
    (line,) = install_lines("\n".join(re.findall(r"^Install: (.*)$", docstring, re.MULTILINE)))
    return line.arguments


@pytest.mark.parametrize("example", EXAMPLES)
def test_each_example_is_installed_by_the_line_the_docs_give_for_it(example: str) -> None:
    """Its header and docs/examples.md give one install line, which brings each package it
    imports: a newcomer who runs that line, then the example, meets no ModuleNotFoundError."""
    given = docs_install_line(example)
    assert header_install_line(example) == given
    installed = installed_by(given)
    source = (ROOT / "examples" / example).read_text(encoding="utf-8")
    missing = sorted(
        module for module in third_party_imports(source) if not providers(module) & installed
    )
    assert not missing, f"examples/{example} imports {missing}, which `pip install {given}` lacks"


def test_the_fastapi_example_names_its_server_on_its_install_line() -> None:
    assert "uvicorn" in docs_install_line("fastapi_callback.py")
    assert "uvicorn" in third_party_imports(
        (ROOT / "examples" / "fastapi_callback.py").read_text(encoding="utf-8")
    )


DEFAULT_PORT = re.compile(r"""environ\.get\(\s*['"]PORT['"],\s*['"](\d+)['"]\)""")
CALLBACK_EXAMPLES = ["flask_callback.py", "django_callback.py", "fastapi_callback.py"]


def test_the_callback_examples_and_docs_serve_default_to_ports_of_their_own() -> None:
    """A newcomer runs them side by side: each honours PORT, and without it takes a port no
    other one takes, the one its header and docs/examples.md name."""
    page = (ROOT / "docs" / "examples.md").read_text(encoding="utf-8")
    defaults = {}
    for example in CALLBACK_EXAMPLES:
        source = (ROOT / "examples" / example).read_text(encoding="utf-8")
        (port,) = DEFAULT_PORT.findall(source)
        assert f"http://127.0.0.1:{port}/payments/callback (set PORT" in source, example
        (row,) = re.findall(rf"^\| `examples/{example}` \|.*$", page, flags=re.MULTILINE)
        assert row.endswith(f"port {port} |"), row
        defaults[example] = int(port)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    (docs_port,) = re.findall(r"^DOCS_PORT \?= (\d+)$", makefile, flags=re.MULTILINE)
    assert f"`make docs-serve` ({docs_port})" in page
    ports = [*defaults.values(), int(docs_port)]
    assert len(set(ports)) == len(ports), ports

"""What a release needs around the code: one name and one callback path, a licence, a changelog."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT: dict[str, Any] = PYPROJECT["project"]
NAME: str = PROJECT["name"]
EXTRAS = set(PROJECT["optional-dependencies"])
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# `pip install NAME`, `pip install 'NAME[extra]'`, and `NAME[extra]` in backticks (install tables).
PIP_INSTALL = re.compile(r"pip install\s+(?:-\S+\s+)*['\"]?([A-Za-z0-9_.-]+)(?:\[([\w,]+)\])?")
NAME_WITH_EXTRAS = re.compile(r"`([A-Za-z0-9_.-]+)\[([\w,]+)\]`")


def installs(text: str) -> list[tuple[str, list[str]]]:
    """Every distribution named for installation in ``text``, with the extras asked for."""
    found = PIP_INSTALL.findall(text) + NAME_WITH_EXTRAS.findall(text)
    return [(name, [e for e in extras.split(",") if e]) for name, extras in found]


def test_the_distribution_name_is_not_the_taken_one_and_imports_as_paysdk() -> None:
    assert NAME == "python-paysdk"  # `paysdk` on PyPI is an unrelated 2018 project
    assert PROJECT["scripts"] == {"paysdk": "paysdk.cli:main"}
    assert PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["src/paysdk"]


def test_readme_and_docs_install_the_distribution_by_its_name_with_real_extras() -> None:
    seen = []
    for page in PAGES:
        for name, extras in installs(page.read_text(encoding="utf-8")):
            # Other packages a page's example needs are named too (trustme, uvicorn...).
            assert name.lower() != "paysdk", f"{page.name} installs {name!r}, not {NAME!r}"
            if name != NAME:
                continue
            assert set(extras) <= EXTRAS, f"{page.name} names unknown extras {extras}"
            seen.append((page.name, name, *extras))
    readme = [entry for entry in seen if entry[0] == "README.md"]
    assert {extra for entry in readme for extra in entry[2:]} >= {"django", "flask", "fastapi"}


def test_pyprojects_own_references_to_itself_use_its_name() -> None:
    for extra, requirements in PROJECT["optional-dependencies"].items():
        for requirement in requirements:
            name = re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0]
            assert name.lower() != "paysdk", f"extra {extra} requires the unrelated paysdk"


def test_the_readme_shows_the_real_install_line_on_its_first_screen_and_says_why() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_screen = "\n".join(readme.splitlines()[:24])
    assert f"pip install {NAME}" in first_screen
    assert "import paysdk" in first_screen
    assert "unrelated" in first_screen  # why the two names differ


def test_there_is_an_mit_licence_as_pyproject_declares() -> None:
    assert PROJECT["license"] == "MIT"
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License")
    assert "WITHOUT WARRANTY OF ANY KIND" in licence


def test_the_changelog_keeps_a_changelog_with_an_unreleased_section() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert changelog.startswith("# Changelog\n")
    assert "https://keepachangelog.com/" in changelog
    versions = re.findall(r"^## \[([^\]]+)\](.*)$", changelog, flags=re.MULTILINE)
    assert versions[0] == ("Unreleased", "")
    for version, date in versions[1:]:
        assert re.fullmatch(r"\d+\.\d+\.\d+", version)
        assert re.fullmatch(r" - \d{4}-\d{2}-\d{2}", date)
    sections = set(re.findall(r"^### (\w+)$", changelog, flags=re.MULTILINE))
    assert sections <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


CALLBACK_PATH = "/payments/callback"
# Where the merchant's callback is served or sent: local URLs, routes, Django's path() and the
# quickstart's CALLBACK_PATH.
CALLBACK_PLACES = [
    re.compile(r"https?://(?:127\.0\.0\.1|localhost)(?::\d+)?(/[^\s?\"'`)]*)"),
    re.compile(r"@app\.(?:get|route)\(\s*[\"'](/[^\"']*)[\"']"),
    re.compile(r"\bpath\(\s*[\"']([^\"']*callback[^\"']*)[\"']"),
    re.compile(r"CALLBACK_PATH = [\"']([^\"']*)[\"']"),
]


def callback_paths(text: str) -> list[str]:
    paths = [m for pattern in CALLBACK_PLACES for m in pattern.findall(text)]
    return ["/" + path.lstrip("/") for path in paths if path not in ("", "/")]


def test_one_callback_path_everywhere() -> None:
    sources = [*PAGES, *sorted((ROOT / "examples").glob("*.py")), ROOT / "src/paysdk/cli/_pay.py"]
    found = {
        (source.name, path)
        for source in sources
        for path in callback_paths(source.read_text(encoding="utf-8"))
    }
    assert {path for _, path in found} == {CALLBACK_PATH}, sorted(found)
    places = {name for name, _ in found}
    assert {"README.md", "cli.md", "callbacks.md", "quickstart.py", "_pay.py"} <= places
    assert {"django_callback.py", "flask_callback.py", "fastapi_callback.py"} <= places

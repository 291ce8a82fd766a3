"""``make docs-check``: the rendered pages are checked for what a reader would see broken.

The browser run itself is ``make docs-check`` (Debian's chromium, which the matrix's chroots do
not install); here, that ``make test`` runs it, that its checks find each kind of breakage, and
that ``make docs``, which it runs first, fails on a warning.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.make import dry_run
from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def docs_check() -> ModuleType:
    return load_script("docs_check")


def whole(docs_check: ModuleType, **changes: object) -> object:
    """A reference page measured whole, with ``changes`` made to it."""
    fields: dict[str, object] = {
        "page": "reference",
        "width": 800,
        "text": "Client\nverify(reference)\nSee Client.verify and paysdk.Lookup.",
        "table_names": [("reference", 1), ("timeout", 1)] * 60,
        "wrapped_code": [],
    }
    return docs_check.Measured(**{**fields, **changes})


def test_a_whole_page_has_no_problems(docs_check: ModuleType) -> None:
    assert docs_check.problems(whole(docs_check)) == []


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"text": "Returns a :class:`VerifiedPayment`."}, "raw reStructuredText"),
        ({"text": "Call :meth:verify first."}, "raw reStructuredText"),
        ({"text": "For example::\n\n    client.verify()"}, "raw reStructuredText"),
        ({"text": "Bases: _BaseLedger"}, "a private name"),
        ({"text": "table = _schema.DEFAULT_TABLE"}, "a private name"),
        (
            {"table_names": [("max_response_bytes", 2)] + [("timeout", 1)] * 120},
            "'max_response_bytes' breaks over 2",
        ),
        ({"table_names": [("reference", 1)]}, "the tables did not render"),
        ({"wrapped_code": ["client = paysdk.Client("]}, "a code line wraps"),
    ],
)
def test_each_kind_of_breakage_is_a_problem(
    docs_check: ModuleType, changes: dict[str, object], expected: str
) -> None:
    found = docs_check.problems(whole(docs_check, **changes))
    assert len(found) == 1, found
    assert expected in found[0]
    assert found[0].startswith("reference.html at 800px: ")


def test_private_names_are_looked_for_in_the_reference_only(docs_check: ModuleType) -> None:
    text = "POST /_sandbox/faults and __cause__; a cache under _build.dir"
    assert docs_check.problems(whole(docs_check, page="configuration", text=text)) == []
    found = docs_check.problems(whole(docs_check, text=text))
    assert len(found) == 1
    assert "a private name in" in found[0]
    assert "_build.dir" in found[0]


def test_make_test_renders_the_pages_after_building_them(tmp_path: Path) -> None:
    (steps,) = [line for line in dry_run("test", tmp_path) if "scripts/steps.py" in line]
    assert "docs-check" in steps.split()
    commands = dry_run("docs-check", tmp_path)
    build = next(i for i, line in enumerate(commands) if "mkdocs build --strict" in line)
    check = next(i for i, line in enumerate(commands) if "scripts/docs_check.py" in line)
    assert build < check
    assert commands[check].endswith("scripts/docs_check.py --install site")


def test_without_chromium_it_says_what_to_install(
    docs_check: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHROMIUM", raising=False)
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(docs_check, "is_debian", lambda: True)
    with pytest.raises(SystemExit, match=r"sudo apt-get install chromium"):
        docs_check.find_chromium(install=False)
    monkeypatch.setattr(docs_check, "is_debian", lambda: False)
    with pytest.raises(SystemExit, match=r"set CHROMIUM to its path"):
        docs_check.find_chromium(install=True)  # nothing to install it with here


def test_chromium_may_be_named(docs_check: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHROMIUM", "/opt/chrome/chrome")
    assert docs_check.find_chromium(install=False) == "/opt/chrome/chrome"


def test_a_relative_site_as_make_passes_it_gives_absolute_page_addresses(
    docs_check: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    uri: str = docs_check.page_uri(Path("site"), "reference")
    assert uri == (tmp_path / "site" / "reference.html").as_uri()


def test_a_site_without_the_pages_is_refused(docs_check: ModuleType, tmp_path: Path) -> None:
    assert docs_check.main([str(tmp_path)]) == 1


def test_make_docs_fails_on_a_warning(tmp_path: Path) -> None:
    """``--quiet`` would hide warnings from ``--strict`` too, and a build that warned would pass."""
    build = next(line for line in dry_run("docs", tmp_path) if "mkdocs build" in line)
    assert "--strict" in build.split()
    assert "--quiet" not in build.split()
    assert "-q" not in build.split()


def test_every_page_of_the_nav_is_looked_at(docs_check: ModuleType) -> None:
    """A wrapped code line reads as broken indentation on any page, not only the reference."""
    nav = re.findall(r"^\s+- [^:]+: ([\w-]+)\.md$", (ROOT / "mkdocs.yml").read_text("utf-8"), re.M)
    assert len(nav) > 10
    assert set(nav) - set(docs_check.PAGES) == {"changelog"}  # the changelog shows no code

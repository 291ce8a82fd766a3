"""Docstrings are Markdown, as mkdocstrings renders them: no reStructuredText left in src/paysdk."""

from __future__ import annotations

import re
from pathlib import Path

import griffe

from tests.support.mkdocs import build_site
from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "src" / "paysdk").rglob("*.py"))

# What reStructuredText writes and Markdown shows as text: roles (:class:`Client`), literal
# blocks opened by ``::``, and simple tables ruled with ``====  ====``.
RST = re.compile(
    r":(?:class|func|meth|attr|mod|data|exc|obj|ref|py:\w+):`"
    r"|::\s*$"
    r"|^\s*=+(?:\s{2,}=+)+\s*$",
    re.MULTILINE,
)


def test_no_restructuredtext_markup_in_the_sources() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, match.start()) + 1}: {match.group()!r}"
        for path in SOURCES
        for text in [path.read_text(encoding="utf-8")]
        for match in RST.finditer(text)
    ]
    assert not found, "\n".join(found)


def test_the_check_finds_each_kind_of_markup() -> None:
    for sample in [":class:`Client`", ":meth:`~paysdk.Client.verify`", "Example::\n", "==  ==\n"]:
        assert RST.search(sample), sample
    assert not RST.search("[`Client`][paysdk.Client] and ``Client`` and a: b")


# --- every public callable documents its arguments, as the API reference shows them -------------

GRIFFE_PUBLIC = load_script("griffe_public")
GRIFFE_SECTIONS = load_script("griffe_sections")
PUBLIC_MODULES: list[str] = list(GRIFFE_PUBLIC.PUBLIC_MODULES)
"""The modules the reference documents, as the docs' griffe extension knows them."""


def load_public_api(
    search_path: Path = ROOT / "src", extensions: tuple[type[griffe.Extension], ...] = ()
) -> griffe.GriffeLoader:
    """paysdk as the reference sees it: griffe, Google-style docstrings, mkdocs.yml's extensions
    (the section check's left out unless given: the tests call it themselves)."""
    loader = griffe.GriffeLoader(
        search_paths=[str(search_path)],
        docstring_parser="google",
        extensions=griffe.load_extensions(GRIFFE_PUBLIC.PublicNames, *extensions),
    )
    loader.load("paysdk")
    loader.resolve_aliases(implicit=True, external=False)
    return loader


def test_every_public_callable_documents_each_argument_and_what_it_returns() -> None:
    problems: list[str] = GRIFFE_SECTIONS.section_problems(load_public_api())
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)


def test_the_check_sees_the_callables_the_public_modules_export() -> None:
    shown = {name for name, _, _ in GRIFFE_SECTIONS.public_callables(load_public_api())}
    for name in [
        "paysdk.Client.verify",
        "paysdk.Expected()",
        "paysdk.Ledger.rows_after",  # the ledgers' methods, from their private base too
        "paysdk.Ledger.resolve",
        "paysdk.ledger.ReconcileReport.of_kind",
        "paysdk.sandbox.Sandbox.pay",
        "paysdk.integrations.fastapi.verified_callback",
    ]:
        assert name in shown, name


BROKEN = {
    "__init__.py": "from ._impl import fetch, total, whole\n__all__ = ['fetch', 'total', 'whole']",
    "_impl.py": '''
def fetch(reference: str, timeout: float = 5.0) -> str:
    """Fetch one payment.

    Args:
        reference: the payment's reference.
        retries: how often to try.
    """
    return reference


def total(amounts: list[int]) -> int:
    """Add the amounts; a Returns section is missing."""
    return sum(amounts)


def whole(amounts: list[int]) -> int:
    """Add the amounts.

    Args:
        amounts: in cents.

    Returns:
        Their sum.
    """
    return sum(amounts)
''',
}


MKDOCS_YML = """
site_name: broken
plugins:
  - mkdocstrings:
      handlers:
        python:
          paths: [src]
          options:
            extensions:
              - {scripts}/griffe_public.py:PublicNames
              - {scripts}/griffe_sections.py:MissingSections
            docstring_style: google
"""


def test_a_missing_section_fails_the_strict_docs_build(tmp_path: Path) -> None:
    """mkdocstrings passes the extension's warnings to mkdocs, which --strict makes a failure."""
    package = tmp_path / "src" / "paysdk"
    package.mkdir(parents=True)
    for name, text in BROKEN.items():
        (package / name).write_text(text, encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("::: paysdk\n", encoding="utf-8")
    config = MKDOCS_YML.format(scripts=ROOT / "scripts")
    (tmp_path / "mkdocs.yml").write_text(config, encoding="utf-8")
    done = build_site(tmp_path, tmp_path / "site")
    assert done.returncode != 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if line.startswith("WARNING")]
    assert any("paysdk.fetch" in w and "no Args entry for timeout" in w for w in warned), warned
    assert any("paysdk.fetch" in w and "Args names retries" in w for w in warned), warned
    assert any("paysdk.fetch" in w and "no Returns section" in w for w in warned), warned
    assert any("paysdk.total" in w and "no Returns section" in w for w in warned), warned
    assert not any("paysdk.whole" in w for w in warned), warned
    assert "Aborted with" in done.stdout + done.stderr


def test_the_docs_build_runs_the_section_check() -> None:
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "scripts/griffe_sections.py:MissingSections" in mkdocs
    assert "strict: true" in mkdocs

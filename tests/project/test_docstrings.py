"""Docstrings are Markdown, as mkdocstrings renders them: no reStructuredText left in src/paysdk."""

from __future__ import annotations

import re
from pathlib import Path

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

"""Docstrings are Markdown, as mkdocstrings renders them: no reStructuredText left in src/paysdk."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import griffe

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
PUBLIC_MODULES: list[str] = list(GRIFFE_PUBLIC.PUBLIC_MODULES)
"""The modules the reference documents, as the docs' griffe extension knows them."""


def load_public_api() -> griffe.GriffeLoader:
    """paysdk as the reference sees it: griffe, Google-style docstrings, mkdocs.yml's extension."""
    extensions = griffe.load_extensions(GRIFFE_PUBLIC.PublicNames)
    loader = griffe.GriffeLoader(
        search_paths=[str(ROOT / "src")],
        docstring_parser="google",
        extensions=extensions,
    )
    for module in PUBLIC_MODULES:
        loader.load(module)
    loader.resolve_aliases(implicit=True, external=False)
    return loader


def final(member: griffe.Object | griffe.Alias) -> griffe.Object:
    """What ``member`` stands for: itself, or an alias's target."""
    return member.final_target if isinstance(member, griffe.Alias) else member


def public_callables(
    loader: griffe.GriffeLoader,
) -> Iterator[tuple[str, griffe.Function, griffe.Object]]:
    """Each public function and method, with the object whose docstring documents its arguments
    (a constructor's: its class's docstring or its own)."""
    seen: set[str] = set()
    for module_path in PUBLIC_MODULES:
        module = loader.modules_collection[module_path]
        for name, member in module.members.items():
            if name.startswith("_") or (module.exports is not None and name not in module.exports):
                continue
            target = final(member)
            if target.path in seen:
                continue
            seen.add(target.path)
            shown = f"{module_path}.{name}"
            if isinstance(target, griffe.Function):
                yield shown, target, target
            elif isinstance(target, griffe.Class):
                for attr, method in target.all_members.items():
                    method = final(method)
                    if not isinstance(method, griffe.Function) or method.path in seen:
                        continue
                    seen.add(method.path)
                    if attr == "__init__":  # documented by the class that defines it
                        yield f"{shown}()", method, final(method.parent or target)
                    elif not attr.startswith("_") and not method.labels & {"property"}:
                        yield f"{shown}.{attr}", method, method


def documented_arguments(*owners: griffe.Object) -> set[str]:
    names: set[str] = set()
    for owner in owners:
        if owner.docstring is None:
            continue
        for section in owner.docstring.parsed:
            if isinstance(section, griffe.DocstringSectionParameters):
                names |= {parameter.name.lstrip("*") for parameter in section.value}
    return names


def documented_attributes(cls: griffe.Class) -> set[str]:
    names = {
        name
        for name, member in cls.all_members.items()
        if member.is_attribute and member.docstring is not None
    }
    if cls.docstring is not None:
        for section in cls.docstring.parsed:
            if isinstance(section, griffe.DocstringSectionAttributes):
                names |= {attribute.name for attribute in section.value}
    return names


def argument_problems() -> list[str]:
    problems: list[str] = []
    for shown, function, owner in public_callables(load_public_api()):
        wanted = [
            parameter.name
            for parameter in function.parameters
            if parameter.name not in {"self", "cls"}
        ]
        documented = documented_arguments(owner, function)
        missing = [name for name in wanted if name not in documented]
        if isinstance(owner, griffe.Class) and missing:
            missing = [name for name in missing if name not in documented_attributes(owner)]
        unknown = sorted(documented - set(wanted))
        if missing:
            problems.append(f"{shown}: no Args entry for {', '.join(missing)}")
        if unknown:
            problems.append(f"{shown}: Args names {', '.join(unknown)}, which it does not take")
    return problems


def test_every_public_callable_documents_each_of_its_arguments() -> None:
    problems = argument_problems()
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)

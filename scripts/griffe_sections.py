"""A griffe extension for the API reference (mkdocs.yml): a public callable's docstring that
leaves out a section is a warning, which ``mkdocs build --strict`` makes a failed build.

A public function or method that takes arguments documents each in its Args section (a
constructor, in its class's docstring or its own: an attribute documented there counts), names
no argument it does not take, and, if it returns something, has a Returns (or Yields) section.
It runs after ``griffe_public.PublicNames``, so what a class inherits from a private base is
checked as the class's own.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import griffe

# griffe loads an extension from its path alone: its sibling is found through sys.path.
sys.path.append(str(Path(__file__).resolve().parent))
from griffe_public import PACKAGE, exported

__all__ = ["MissingSections", "public_callables", "section_problems"]


class MissingSections(griffe.Extension):
    """Warns, once the package is loaded, of each section a public callable leaves out."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.path != PACKAGE:
            return
        for problem in section_problems(loader):
            griffe.logger.warning(problem)


def final(member: griffe.Object | griffe.Alias) -> griffe.Object:
    """What ``member`` stands for: itself, or an alias's target."""
    return member.final_target if isinstance(member, griffe.Alias) else member


def public_callables(
    loader: griffe.GriffeLoader,
) -> Iterator[tuple[str, griffe.Function, griffe.Object]]:
    """Each public function and method, as the reference shows it, with the object whose
    docstring documents its arguments (a constructor's: the class that defines it)."""
    seen: set[str] = set()
    for module_path, name, target in exported(loader):
        if name.startswith("_") or target.path in seen:
            continue
        seen.add(target.path)
        shown = f"{module_path}.{name}"
        if isinstance(target, griffe.Function):
            yield shown, target, target
        elif isinstance(target, griffe.Class):
            yield from _methods(shown, target, seen)


def _methods(
    shown: str, cls: griffe.Class, seen: set[str]
) -> Iterator[tuple[str, griffe.Function, griffe.Object]]:
    for attr, member in cls.all_members.items():
        try:
            method = final(member)
        except griffe.AliasResolutionError:
            continue
        if not isinstance(method, griffe.Function) or method.path in seen:
            continue
        seen.add(method.path)
        if attr == "__init__":  # documented by the class that defines it
            yield f"{shown}()", method, final(method.parent or cls)
        elif not attr.startswith("_") and not method.labels & {"property"}:
            yield f"{shown}.{attr}", method, method


def _sections(owner: griffe.Object) -> list[griffe.DocstringSection]:
    return [] if owner.docstring is None else list(owner.docstring.parsed)


def documented_arguments(*owners: griffe.Object) -> set[str]:
    """The names the owners' Args sections document."""
    return {
        parameter.name.lstrip("*")
        for owner in owners
        for section in _sections(owner)
        if isinstance(section, griffe.DocstringSectionParameters)
        for parameter in section.value
    }


def documented_attributes(cls: griffe.Class) -> set[str]:
    """The attributes of ``cls`` with a docstring, or in its Attributes section."""
    names = {
        name
        for name, member in cls.all_members.items()
        if member.is_attribute and member.docstring is not None
    }
    for section in _sections(cls):
        if isinstance(section, griffe.DocstringSectionAttributes):
            names |= {attribute.name for attribute in section.value}
    return names


def returns_something(function: griffe.Function) -> bool:
    """Whether ``function`` is annotated to return a value (not ``None``, not a constructor)."""
    return (
        function.name != "__init__"
        and function.returns is not None
        and str(function.returns) != "None"
    )


def section_problems(loader: griffe.GriffeLoader) -> list[str]:
    """Each public callable's missing or wrong section, one sentence each.

    Args:
        loader: the loader that loaded paysdk (with ``PublicNames`` applied).

    Returns:
        Nothing when every public callable is documented.
    """
    problems: list[str] = []
    for shown, function, owner in public_callables(loader):
        wanted = [p.name for p in function.parameters if p.name not in {"self", "cls"}]
        documented = documented_arguments(owner, function)
        missing = [name for name in wanted if name not in documented]
        if isinstance(owner, griffe.Class) and missing:
            missing = [name for name in missing if name not in documented_attributes(owner)]
        unknown = sorted(documented - set(wanted))
        where = f"{shown} ({function.relative_filepath}:{function.lineno})"
        if missing:
            problems.append(f"{where}: no Args entry for {', '.join(missing)}")
        if unknown:
            problems.append(f"{where}: Args names {', '.join(unknown)}, which it does not take")
        kinds = {type(section) for section in _sections(function)}
        if (
            wanted
            and returns_something(function)
            and not kinds & {griffe.DocstringSectionReturns, griffe.DocstringSectionYields}
        ):
            problems.append(f"{where}: no Returns section")
    return problems

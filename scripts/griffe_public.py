"""A griffe extension for the API reference (mkdocs.yml): show readers only public names.

paysdk's public classes are built on private ones (``Client`` on ``BaseClient``, ``Ledger`` on
``_BaseLedger``), and some defaults are private constants (``_schema.DEFAULT_TABLE``). Left as
they are, the reference would print ``Bases: _BaseLedger`` and
``table: str = _schema.DEFAULT_TABLE``, and would leave out every method the private base defines.
So, once the package is loaded:

- a private base is dropped from the bases, and what the class inherits from it becomes the
  class's own members (documented with it, as users call them);
- a default or value that names a private object is replaced by that object's value when that
  names nothing private (``'paysdk_fulfilments'``), else by ``...`` (the docstring says what it
  is); a member of an exported class (``Kind.MISSED``) is public, so a value naming it is shown;
- a private name in an annotation (a type variable, a type paysdk returns but does not export)
  is shown as plain text, not as a reference whose hover title names its private module;
- an argument whose default is ``NOT_GIVEN`` (the environment may fill it in) shows, in the
  parameters table, the default its Args entry states in a last sentence ``Default: ...``
  (``$PAYSDK_TIMEOUT, else 30 s``) rather than the sentinel; an entry without one is a warning,
  which fails the strict docs build.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Any, cast

import griffe

__all__ = ["PublicNames"]

PACKAGE = "paysdk"
NOT_GIVEN = "paysdk._client.options.NOT_GIVEN"
STATED_DEFAULT = re.compile(r"Default:\s+(.+?)\.?\s*\Z", re.DOTALL)
"""The last sentence of an Args entry, naming what an argument left out amounts to."""
PUBLIC_MODULES = (
    "paysdk",
    "paysdk.ledger",
    "paysdk.sandbox",
    "paysdk.testing",
    "paysdk.integrations.django",
    "paysdk.integrations.fastapi",
    "paysdk.integrations.flask",
    "paysdk.integrations.responses",
)


class PublicNames(griffe.Extension):
    """Hides private bases, defaults and values from the rendered reference."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.path != PACKAGE:
            return
        public = exported_paths(loader)
        for obj in walk(pkg):
            if isinstance(obj, griffe.Class):
                adopt_private_bases(obj, public)
                obj.bases = [plain_private_names(base, public) or base for base in obj.bases]
            if isinstance(obj, griffe.Function):
                for function in [obj, *(obj.overloads or [])]:
                    for parameter in function.parameters:
                        parameter.default = public_value(parameter.default, public, loader)
                        parameter.annotation = plain_private_names(parameter.annotation, public)
                    function.returns = plain_private_names(function.returns, public)
                for problem in state_environment_defaults(obj):
                    griffe.logger.warning(problem)
            if isinstance(obj, griffe.Attribute):
                obj.value = public_value(obj.value, public, loader)
                obj.annotation = plain_private_names(obj.annotation, public)


def state_environment_defaults(function: griffe.Function) -> list[str]:
    """Give each ``NOT_GIVEN`` argument of ``function`` its stated default in the parameters
    table; return a warning for each whose Args entry states none."""
    given_by_environment = {
        parameter.name
        for parameter in function.parameters
        if isinstance(parameter.default, griffe.ExprName | griffe.ExprAttribute)
        and parameter.default.canonical_path == NOT_GIVEN
    }
    if not given_by_environment or function.docstring is None:
        return []
    stated: set[str] = set()
    for section in function.docstring.parsed:
        if not isinstance(section, griffe.DocstringSectionParameters):
            continue
        for entry in section.value:
            found = STATED_DEFAULT.search(entry.description)
            if entry.name in given_by_environment and found:
                entry.value = " ".join(found[1].replace("`", "").split())
                stated.add(entry.name)
    return [
        f"{function.path}: the Args entry of {name!r} (default NOT_GIVEN) ends with no "
        "'Default: ...' sentence saying what leaving it out amounts to"
        for name in sorted(given_by_environment - stated)
    ]


def walk(obj: griffe.Object) -> Iterator[griffe.Object]:
    """``obj`` and everything defined in it (aliases, which point elsewhere, are skipped)."""
    yield obj
    for member in list(obj.members.values()):
        if not member.is_alias:
            yield from walk(member)  # type: ignore[arg-type]


def exported(loader: griffe.GriffeLoader) -> Iterator[tuple[str, str, griffe.Object]]:
    """Each public module's path, with each name it exports and what that name stands for
    (an alias's target); a name whose import griffe cannot follow is skipped."""
    for module_path in PUBLIC_MODULES:
        try:
            module = loader.modules_collection[module_path]
        except KeyError:
            continue
        for name, member in module.members.items():
            if module.exports is not None and name not in module.exports:
                continue
            try:
                target = member.final_target if isinstance(member, griffe.Alias) else member
            except griffe.AliasResolutionError:
                continue
            yield module_path, name, target


def exported_paths(loader: griffe.GriffeLoader) -> set[str]:
    """The canonical path of everything a public module exports."""
    return {target.path for _, _, target in exported(loader)}


def is_private(path: str, public: set[str]) -> bool:
    """Whether ``path`` is a paysdk object that no public module exports, nor a member of one
    that does (``Kind.MISSED`` is public: ``paysdk.ledger`` exports ``Kind``)."""
    if path.split(".")[0] != PACKAGE or path in PUBLIC_MODULES:
        return False
    parts = path.split(".")
    owners = (".".join(parts[:end]) for end in range(len(parts), 1, -1))
    return not any(owner in public and owner not in PUBLIC_MODULES for owner in owners)


def expression_path(expr: str | griffe.Expr) -> str | None:
    """What a base, default or value names: ``BaseClient[...]`` names ``BaseClient``."""
    if isinstance(expr, griffe.ExprSubscript):
        expr = expr.left
    if isinstance(expr, griffe.ExprName | griffe.ExprAttribute):
        return expr.canonical_path
    return None


def adopt_private_bases(cls: griffe.Class, public: set[str]) -> None:
    """Drop ``cls``'s private bases, making what it inherits from them its own members.

    What a public base documents already (``SQLAlchemyLedger`` inherits ``fulfil_once`` through
    ``Ledger``) is left to it. What comes from a private base named before the class's main base,
    the last (a mixin: ``class Ledger(FulfilOnce, Closes, BaseLedger)``), is listed first, in the
    order Python looks it up; what comes from the main base, after the class's own members.
    """
    private = [
        base
        for base in cls.bases
        if (path := expression_path(base)) is not None and is_private(path, public)
    ]
    if not private:
        return
    resolved = [base for base in cls.resolved_bases if isinstance(base, griffe.Class)]
    documented = {
        name for base in resolved if not is_private(base.path, public) for name in base.all_members
    }
    mixins = {ancestor.path for base in resolved[:-1] for ancestor in [base, *base.mro()]}
    inherited = cls.inherited_members
    adopted = [
        name
        for name, alias in inherited.items()
        if (origin := alias.final_target.parent) is not None
        and is_private(origin.path, public)
        and name not in cls.members
        and name not in documented
    ]
    for name in adopted:
        cls.set_member(name, griffe.Alias(name, inherited[name].final_target, parent=cls))
    # the reference lists a class's members as they stand here (a public name of the class is
    # an alias, whose members keep this order but not their lines)
    first = [
        name
        for ancestor in cls.mro()
        if ancestor.path in mixins
        for name in ancestor.members
        if name in adopted
    ]
    members = {name: cls.members[name] for name in first} | cls.members
    cls.members.clear()
    cls.members.update(members)
    cls.bases = [base for base in cls.bases if base not in private]


def public_value(
    value: str | griffe.Expr | None, public: set[str], loader: griffe.GriffeLoader
) -> str | griffe.Expr | None:
    """``value``, or what to show instead where it names a private object."""
    if not names_private(value, public):
        return value
    shown = constant(expression_path(value), loader) if isinstance(value, griffe.Expr) else None
    return shown if shown is not None and not names_private(shown, public) else "..."


def names_private(value: str | griffe.Expr | None, public: set[str]) -> bool:
    """Whether ``value`` names a private object anywhere in it."""
    return isinstance(value, griffe.Expr) and any(
        isinstance(part, griffe.ExprName) and is_private(part.canonical_path, public)
        for part in value.iterate(flat=True)
    )


def constant(path: str | None, loader: griffe.GriffeLoader) -> str | griffe.Expr | None:
    """The value of the constant at ``path`` (``'paysdk_fulfilments'``, ``timedelta(...)``)."""
    if path is None:
        return None
    try:
        target = loader.modules_collection[path]
    except (KeyError, griffe.AliasResolutionError):
        return None
    if isinstance(target, griffe.Alias):
        target = target.final_target
    return target.value if isinstance(target, griffe.Attribute) else None


def plain_private_names(
    expr: str | griffe.Expr | None, public: set[str]
) -> str | griffe.Expr | None:
    """``expr`` with each name of a private object made plain text (no reference, no title)."""
    if isinstance(expr, griffe.ExprName):
        return expr.name if is_private(expr.canonical_path, public) else expr
    if isinstance(expr, griffe.Expr):
        for field in dataclasses.fields(expr):
            value: object = getattr(expr, field.name)
            if isinstance(value, list):
                items = cast("list[str | griffe.Expr]", value)
                setattr(expr, field.name, [plain_private_names(item, public) for item in items])
            elif isinstance(value, griffe.Expr):
                setattr(expr, field.name, plain_private_names(value, public))
    return expr

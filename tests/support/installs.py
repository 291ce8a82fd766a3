"""What a page's ``pip install`` lines install, and what a program imports from outside paysdk.

Shared by the tests that hold the docs and the examples to their install lines: each third-party
package a program imports must be installed by a ``pip install`` line the reader has been given
(or come with paysdk itself, as a core dependency).
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

__all__ = [
    "CORE",
    "DISTRIBUTION",
    "InstallLine",
    "canonical",
    "install_lines",
    "installed_by",
    "packages_distributions",
    "providers",
    "third_party_imports",
]

ROOT = Path(__file__).resolve().parents[2]
PROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
    "project"
]
DISTRIBUTION = "python-paysdk"
PIP_INSTALL = re.compile(r"pip install ([^`\n#]+)")
"""A ``pip install`` and its arguments, up to the end of its code span, line or comment."""
REQUIREMENT = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[([^\]]*)\])?")


def canonical(name: str) -> str:
    """A distribution's name as PEP 503 compares names."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _named(requirements: list[str]) -> list[tuple[str, list[str]]]:
    """Each requirement's distribution and extras, from PEP 508 strings or pip arguments."""
    found = []
    for text in requirements:
        if text.startswith("-"):
            continue
        match = REQUIREMENT.match(text)
        if match:
            extras = [extra.strip() for extra in (match[2] or "").split(",") if extra.strip()]
            found.append((canonical(match[1]), extras))
    return found


CORE = {name for name, _ in _named(PROJECT["dependencies"])}
"""What ``pip install python-paysdk`` installs beside paysdk."""


def installed_by(arguments: list[str]) -> set[str]:
    """The distributions ``pip install ARGUMENTS`` installs that paysdk declares or the line
    names: each one named, and for python-paysdk its core dependencies and those of each extra
    (extras of extras too); what those bring in turn is not counted."""
    found: set[str] = set()
    pending = _named(arguments)
    while pending:
        name, extras = pending.pop()
        if name in found and not extras:
            continue
        found.add(name)
        if name == DISTRIBUTION:
            found |= CORE
            for extra in extras:
                pending += _named(PROJECT["optional-dependencies"][extra])
    return found


class InstallLine:
    """One ``pip install`` a page gives: where it is, and its arguments."""

    def __init__(self, offset: int, arguments: list[str]) -> None:
        self.offset = offset
        self.arguments = arguments

    def __repr__(self) -> str:
        return f"pip install {shlex.join(self.arguments)}"


def install_lines(text: str) -> list[InstallLine]:
    """Every ``pip install`` in ``text`` (a shell block's line, or inline code), in order."""
    return [
        InstallLine(match.start(), shlex.split(match[1])) for match in PIP_INSTALL.finditer(text)
    ]


@functools.cache
def packages_distributions() -> dict[str, list[str]]:
    """Each importable top-level name, with the distributions that install it.

    From each distribution's ``top_level.txt`` or, without one (wheels built by hatchling and
    others have none), its installed files: Python 3.11's ``packages_distributions`` does both,
    3.10's reads ``top_level.txt`` alone.
    """
    found: dict[str, list[str]] = {}
    for distribution in importlib.metadata.distributions():
        names = set((distribution.read_text("top_level.txt") or "").split())
        if not names:
            names = {
                file.parts[0] if len(file.parts) > 1 else file.stem
                for file in distribution.files or []
                if file.suffix == ".py"
            }
        for name in names:
            found.setdefault(name, []).append(distribution.metadata["Name"])
    return found


@functools.cache
def module_providers() -> dict[str, set[str]]:
    """Each importable module and package (dotted), with the distributions whose files make it.

    A namespace package (``opentelemetry``) has many; each of its subpackages
    (``opentelemetry.instrumentation.httpx``) has the one that installs it.
    """
    found: dict[str, set[str]] = {}
    for distribution in importlib.metadata.distributions():
        name = canonical(distribution.metadata["Name"])
        for file in distribution.files or []:
            if file.suffix != ".py" or ".." in file.parts:
                continue
            parts = list(file.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            for end in range(1, len(parts) + 1):
                found.setdefault(".".join(parts[:end]), set()).add(name)
    return found


def providers(module: str) -> set[str]:
    """The distributions that install ``module`` (dotted): those of its longest known prefix."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        found = module_providers().get(".".join(parts[:end]))
        if found:
            return found
    return set()


DRIVER = re.compile(r"\b[a-z]+\+(\w+)://")
"""A SQLAlchemy URL's driver (``sqlite+aiosqlite://``): the module SQLAlchemy imports for it."""


def _imported(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:  # `from opentelemetry import trace`: a module, maybe
                full = f"{node.module}.{alias.name}"
                yield full if full in module_providers() else node.module
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield from DRIVER.findall(node.value)


def third_party_imports(code: str) -> set[str]:
    """The modules (dotted) ``code`` imports anywhere in it, or has SQLAlchemy import for a URL's
    driver, that are neither the standard library nor paysdk."""
    names = set(_imported(ast.parse(code)))
    return {
        name
        for name in names
        if name.split(".")[0] not in sys.stdlib_module_names and name.split(".")[0] != "paysdk"
    }

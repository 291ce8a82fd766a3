"""What pyproject.toml declares for a job's Python, and what the lowest job must have installed:
each declared minimum is exactly what ``uv --resolution lowest-direct`` installs."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

ROOT = Path(__file__).resolve().parents[1]


def requirements(
    project: dict[str, Any], extras: Iterable[str], python_full_version: str
) -> list[Requirement]:
    """The requirements ``pip install .[extras]`` asks for on that Python, extras expanded.

    Args:
        project: pyproject.toml's ``[project]`` table.
        extras: the extras asked for.
        python_full_version: the interpreter's version, for markers such as
            ``python_version < '3.11'``.
    """
    python_version = ".".join(python_full_version.split(".")[:2])
    environment = {"python_version": python_version, "python_full_version": python_full_version}
    own = canonicalize_name(project["name"])
    optional: dict[str, list[str]] = project.get("optional-dependencies", {})
    found: list[Requirement] = []
    seen_extras: set[str] = set()

    def add(texts: Iterable[str], extra: str = "") -> None:
        for text in texts:
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate(
                {**environment, "extra": extra}
            ):
                continue
            if canonicalize_name(requirement.name) == own:
                expand(requirement.extras)
            else:
                found.append(requirement)

    def expand(names: Iterable[str]) -> None:
        for name in sorted(names):
            if name not in seen_extras:
                seen_extras.add(name)
                add(optional[name], name)

    add(project["dependencies"])
    expand(extras)
    return found


def floor(requirement: Requirement) -> Version | None:
    """The lowest version ``requirement`` admits, from its ``>=``, ``==`` or ``~=`` clause."""
    floors = [
        Version(spec.version)
        for spec in requirement.specifier
        if spec.operator in (">=", "==", "~=") and "*" not in spec.version
    ]
    return max(floors, default=None)


def unproven_floors(wanted: Sequence[Requirement], installed: dict[str, str]) -> list[str]:
    """Each declared minimum the lowest resolution did not install, as a sentence.

    Args:
        wanted: the declared requirements (``requirements()``).
        installed: distribution name (any spelling) to installed version.
    """
    have = {canonicalize_name(name): Version(version) for name, version in installed.items()}
    problems: list[str] = []
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        lowest = floor(requirement)
        if lowest is None:
            problems.append(f"{requirement}: declares no minimum, so none is tested")
        elif name not in have:
            problems.append(f"{requirement}: not installed")
        elif have[name] != lowest:
            problems.append(
                f"{requirement}: the lowest resolution installed {have[name]}, not {lowest};"
                f" {lowest} cannot be installed with the rest, so the floor is {have[name]}"
            )
    return problems


def load_project() -> dict[str, Any]:
    """pyproject.toml's ``[project]`` table."""
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    return project


def versions_of(freeze: str) -> dict[str, str]:
    """``uv pip freeze`` output as name -> version (editable and URL lines left out)."""
    found: dict[str, str] = {}
    for line in freeze.splitlines():
        name, sep, version = line.partition("==")
        if sep:
            found[name.strip()] = version.strip()
    return found


def direct_versions(wanted: Sequence[Requirement], installed: dict[str, str]) -> list[str]:
    """``name==version`` of each declared requirement, as installed."""
    have = {canonicalize_name(name): version for name, version in installed.items()}
    names = sorted({canonicalize_name(requirement.name) for requirement in wanted})
    return [f"{name}=={have.get(name, 'missing')}" for name in names]

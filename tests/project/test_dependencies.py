"""Every third-party package paysdk's modules import is declared in pyproject.toml: what a core
module imports, in ``[project] dependencies``; what an optional module imports, there or in the
extra that installs it. A package that comes only as another's dependency can change under paysdk
in any release of that other; declared, it gets paysdk's own bounds.

Imports are read from the source with ``ast``, wherever they sit (module level or inside a
function: a lazy import runs too), except under ``if TYPE_CHECKING:``, which never runs.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.installs import packages_distributions

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "paysdk"
PROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
    "project"
]

OPTIONAL = {
    "_transport/aiohttp_sender.py": "aiohttp",
    "integrations/django": "django",
    "ledger/_databases/django": "django",
    "ledger/_django": "django",
    "integrations/flask.py": "flask",
    "integrations/fastapi.py": "fastapi",
    "ledger/_databases/postgres": "postgres",
    "ledger/_databases/alchemy.py": "sqlalchemy",
    "ledger/_databases/_async/alchemy.py": "sqlalchemy",
    "ledger/_databases/_sync/alchemy.py": "sqlalchemy",
    "ledger/sqlalchemy.py": "sqlalchemy",
    "testing/_mock_api.py": "testing",
    "testing/_mock_requests.py": "testing",
}
"""Where a module's path (under src/paysdk) starts with one of these, it is loaded only with the
extra named: its imports may come from that extra. Every other module is core."""

HOSTED = {
    "testing/plugin.py": {"pytest": "pytest loads it, through the pytest11 entry point"},
    "_client/trio_task.py": {"trio": "verify_many loads it only when trio runs the caller"},
}
"""Packages a module may import undeclared, because only that package ever loads the module."""


def canonical(name: str) -> str:
    """A distribution's name as PEP 503 compares names."""
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(requirements: list[str]) -> set[str]:
    """The distributions ``requirements`` (PEP 508 strings) name."""
    names = (re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", text) for text in requirements)
    return {canonical(name[0]) for name in names if name is not None}


CORE = declared(PROJECT["dependencies"])
EXTRAS = {extra: declared(listed) for extra, listed in PROJECT["optional-dependencies"].items()}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported(tree: ast.AST) -> Iterator[str]:
    """The top-level names of the absolute imports in ``tree`` that can run."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for branch in node.orelse:  # ``else:`` runs
                yield from imported(branch)
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]
        yield from imported(node)


def third_party(path: Path) -> set[str]:
    """What the module at ``path`` imports that is neither the standard library nor paysdk."""
    names = set(imported(ast.parse(path.read_text(encoding="utf-8"), str(path))))
    return {name for name in names if name not in sys.stdlib_module_names and name != "paysdk"}


def extra_of(module: str) -> str | None:
    return next((extra for prefix, extra in OPTIONAL.items() if module.startswith(prefix)), None)


MODULES = sorted(path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("module", MODULES)
def test_each_third_party_import_is_declared_where_the_module_is_installed(module: str) -> None:
    extra = extra_of(module)
    allowed = CORE | (EXTRAS[extra] if extra is not None else set())
    where = "[project] dependencies" + (f" or the {extra!r} extra" if extra else "")
    undeclared = []
    for name in sorted(third_party(PACKAGE / module) - set(HOSTED.get(module, {}))):
        distributions = {canonical(d) for d in packages_distributions().get(name, [])}
        assert distributions, f"{module} imports {name!r}, which no installed distribution has"
        if not distributions & allowed:
            undeclared.append(f"{name} (from {', '.join(sorted(distributions))})")
    assert not undeclared, f"{module} imports, undeclared in {where}: {'; '.join(undeclared)}"


def test_the_map_of_optional_modules_names_real_modules_and_extras() -> None:
    for prefix, extra in OPTIONAL.items():
        assert any(module.startswith(prefix) for module in MODULES), prefix
        assert extra in EXTRAS, extra
    for module in HOSTED:
        assert module in MODULES, module


def test_a_core_module_importing_an_extras_package_is_caught() -> None:
    """The check bites: a core module's import of aiohttp is declared only in an extra."""
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import psycopg\n"
        "def f():\n    import aiohttp.web\n    from httpx import Client\n    from . import x\n"
    )
    assert set(imported(tree)) == {"typing", "aiohttp", "httpx"}
    assert "aiohttp" not in CORE
    assert "aiohttp" in EXTRAS["aiohttp"]


def test_the_testing_extras_respx_reads_each_httpx_the_core_allows() -> None:
    """respx before 0.22 hands httpx 0.28's requests to its routes with a bytes method
    (``b"GET"``), which no route matches: ``MockPaymentAPI`` answered every call 405 ("b'GET' is
    not allowed here") and a merchant's own respx routes never matched. While the core allows
    httpx 0.28, the ``testing`` extra must not allow such a respx."""
    from packaging.requirements import Requirement

    def requirement(name: str, listed: list[str]) -> Requirement:
        [found] = [
            Requirement(text) for text in listed if canonical(Requirement(text).name) == name
        ]
        return found

    httpx = requirement("httpx", PROJECT["dependencies"])
    respx = requirement("respx", PROJECT["optional-dependencies"]["testing"])
    assert httpx.specifier.contains("0.28.1")
    assert not respx.specifier.contains("0.21.1")

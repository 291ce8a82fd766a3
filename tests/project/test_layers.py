"""The import contracts (pyproject.toml's [tool.importlinter]) hold, and breaking one fails them;
and no class name stands for two things.

``make lint`` runs ``lint-imports`` on the package; these tests run it on a copy of the package
with one forbidden import added, so a contract that stopped biting would be noticed.
"""

from __future__ import annotations

import ast
import importlib
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import paysdk

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(source: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the project's contracts, on the package found under ``source``;
    its output without the colours that some import-linter releases write even to a pipe."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    result = subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        capture_output=True,
        text=True,
        env=env,
        cwd=source,
        timeout=120,
    )
    result.stdout = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout)
    return result


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    """A copy of ``src/``, with the benchmarks beside the package as the contracts find them,
    to break on purpose."""
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "src", tmp_path / "src", ignore=skip)
    shutil.copytree(ROOT / "benchmarks", tmp_path / "src" / "benchmarks", ignore=skip)
    return tmp_path / "src"


def _add_import(source: Path, module: str, statement: str) -> None:
    path = source / module if module.startswith("benchmarks/") else source / "paysdk" / module
    path.write_text(path.read_text(encoding="utf-8") + f"\n{statement}\n", encoding="utf-8")


def test_the_package_keeps_every_contract(package_copy: Path) -> None:
    result = _lint(package_copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout


@pytest.mark.parametrize(
    ("module", "statement", "contract"),
    [
        ("_core/steps.py", "import httpx", "The core, parsing and the models import no HTTP"),
        ("_core/plans.py", "from .._transport import deadline", "Layers: each imports only"),
        ("_models/wire.py", "from .._errors import PaySDKError", "The models import nothing"),
        (
            "cli/_main.py",
            "from ..ledger import _fulfilment",
            "Only paysdk.ledger imports its insides",
        ),
        ("testing/_factories.py", "from ..sandbox import _server", "Only paysdk.sandbox imports"),
        ("_core/retry.py", "from . import plans", "No import cycles between modules of a"),
        (
            "benchmarks/_reconcile.py",
            "from . import _rows",
            "No import cycles between modules of the",
        ),
        (
            "sandbox/_callback.py",
            "from .._transport._sync import pool",
            "Only the transport and the client import the transport's insides",
        ),
        (
            "ledger/_fulfilment.py",
            "from .._transport._async.drive import drive",
            "Only the transport and the client import the transport's insides",
        ),
        (
            "testing/_mock_api.py",
            "from .._transport.network import Network",
            "Only the transport and the client import the transport's insides",
        ),
    ],
)
def test_breaking_a_contract_fails_the_lint(
    package_copy: Path, module: str, statement: str, contract: str
) -> None:
    _add_import(package_copy, module, statement)
    result = _lint(package_copy)
    assert result.returncode != 0
    broken = [line for line in result.stdout.splitlines() if " BROKEN" in line]
    assert any(line.startswith(contract) for line in broken), result.stdout


def test_no_class_name_is_defined_twice_in_paysdk() -> None:
    """One name, one concept: no two classes of the package share a name (but Django's
    ``Migration``, which each migration module must define)."""
    package = Path(paysdk.__file__).parent
    homes: dict[str, list[str]] = {}
    for module in sorted(package.rglob("*.py")):
        migration = module.parent.name == "migrations"
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not (migration and node.name == "Migration"):
                homes.setdefault(node.name, []).append(str(module.relative_to(package)))
    assert {name: where for name, where in homes.items() if len(where) > 1} == {}


@pytest.mark.parametrize(
    "package", ["paysdk", "paysdk._core", "paysdk._transport", "paysdk.testing"]
)
def test_no_name_a_package_loads_lazily_is_also_one_of_its_modules(package: str) -> None:
    """Importing a submodule sets it on its package: an export of the same name would then be
    the module, not what the package exports (``_core.confirm``, the plan)."""
    module = importlib.import_module(package)
    submodules = {info.name for info in pkgutil.iter_modules(module.__path__)}
    assert submodules & set(module.__all__) == set()

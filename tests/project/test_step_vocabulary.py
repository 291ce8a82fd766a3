"""One step vocabulary, one driver per plan kind.

Every plan speaks steps defined in one of two modules of one convention (``_core/steps.py``,
``ledger/_steps.py``), and each kind of plan has one driver that carries its steps out (one per
mode: the ``_async/`` source and its generated ``_sync/`` twin). These tests read the package:
a step dispatched on anywhere but its driver (``isinstance``, ``match``, ``type(step) is``), a
driver missing or repeating a step of its vocabulary, or a plan module yielding a step outside
its vocabulary fails them; and they drive each driver with a step it does not speak.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

import paysdk
from paysdk._core import steps as core_steps
from paysdk._core.config import SealedHeaders, Timeout
from paysdk._core.steps import CALL_STEPS, ITEM_STEPS, Read, Send
from paysdk._transport._sync import drive
from paysdk.ledger import _steps as ledger_steps
from paysdk.ledger._databases.sqlite import SQLiteDriver
from paysdk.ledger._schema import SQLITE
from paysdk.ledger._steps import LEDGER_STEPS, RECONCILE_STEPS, Begin, Query, Verify
from paysdk.ledger._sync import reconcile as sync_reconcile
from paysdk.ledger._sync import run as ledger_run

PACKAGE = Path(paysdk.__file__).parent
STEPS_MODULES = (core_steps, ledger_steps)

DRIVERS: dict[str, tuple[tuple[type, ...], str, str]] = {
    "a call": (CALL_STEPS, "_transport/drive.py", "run"),
    "an item plan": (ITEM_STEPS, "_transport/drive.py", "_items"),
    "a ledger plan": (LEDGER_STEPS, "ledger/run.py", "LedgerSteps._carry_out"),
    "reconciliation": (RECONCILE_STEPS, "ledger/reconcile.py", "reconcile.carry_out"),
}
"""Each kind of plan: its vocabulary, and its driver (the file, ``_async/`` or ``_sync/``
left out, and the function in it, named as in ``_sync/``)."""

LEDGER_PLAN_MODULES = (
    "ledger/_fulfilment.py",
    "ledger/_accounts.py",
    "ledger/_reads.py",
    "ledger/_migration.py",
)
"""The ledger's plans, one concept a module."""

PLAN_MODULES: dict[str, tuple[type, ...]] = {
    "_core/plans.py": ITEM_STEPS,  # a call's steps and an item plan's
    "_core/attempts.py": CALL_STEPS,
    **dict.fromkeys(LEDGER_PLAN_MODULES, LEDGER_STEPS),
    "ledger/_reconcile/plan.py": RECONCILE_STEPS,
}
"""The modules that build the steps they yield, and the vocabulary each may yield from."""

ALL_STEPS = {step for vocabulary, _, _ in DRIVERS.values() for step in vocabulary}


def _modules() -> Iterator[tuple[str, str, ast.Module]]:
    """Each module of the package: its dotted name, its path under the package, its tree."""
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        dotted = ".".join(("paysdk", *relative.with_suffix("").parts)).removesuffix(".__init__")
        yield dotted, relative.as_posix(), ast.parse(path.read_text(encoding="utf-8"))


class _Uses(ast.NodeVisitor):
    """Where a module dispatches on a step class or yields one it builds, each with the
    function it is in; a name is resolved through the module's own imports."""

    def __init__(self, dotted: str, tree: ast.Module, is_package: bool) -> None:
        self.dotted = dotted
        self.package = dotted if is_package else dotted.rpartition(".")[0]
        self.names: dict[str, tuple[str, str | None]] = {}  # local name: (module, attribute)
        self.scope: list[str] = []
        self.dispatches: list[tuple[str, type]] = []
        self.yields: list[tuple[str, type]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = importlib.util.resolve_name(
                    "." * node.level + (node.module or ""), self.package
                )
                for alias in node.names:
                    self.names[alias.asname or alias.name] = (source, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    self.names[alias.asname or alias.name.partition(".")[0]] = (
                        alias.name if alias.asname else alias.name.partition(".")[0],
                        None,
                    )
        self.visit(tree)

    def _resolve(self, node: ast.expr) -> object:
        """The object an expression of names and attributes stands for, if it is paysdk's."""
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                return None
            source, attribute = self.names[node.id]
            if not source.startswith("paysdk"):
                return None
            found: object = importlib.import_module(source)
            return found if attribute is None else getattr(found, attribute, None)
        if isinstance(node, ast.Attribute):
            owner = self._resolve(node.value)
            return None if owner is None else getattr(owner, node.attr, None)
        return None

    def _steps_in(self, node: ast.expr) -> list[type]:
        parts = node.elts if isinstance(node, ast.Tuple) else [node]
        resolved = [self._resolve(part) for part in parts]
        return [found for found in resolved if isinstance(found, type) and found in ALL_STEPS]

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def _at(self, steps: list[type], into: list[tuple[str, type]]) -> None:
        into += [(".".join(self.scope), step) for step in steps]

    def visit_Call(self, node: ast.Call) -> None:
        called = node.func.id if isinstance(node.func, ast.Name) else None
        if called in ("isinstance", "issubclass") and len(node.args) == 2:
            self._at(self._steps_in(node.args[1]), self.dispatches)
        self.generic_visit(node)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        self._at(self._steps_in(node.cls), self.dispatches)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        sides = [node.left, *node.comparators]
        if any(
            isinstance(side, ast.Call)
            and isinstance(side.func, ast.Name)
            and side.func.id == "type"
            for side in sides
        ):
            for side in sides:
                self._at(self._steps_in(side), self.dispatches)
        self.generic_visit(node)

    def visit_Yield(self, node: ast.Yield) -> None:
        if isinstance(node.value, ast.Call):
            self._at(self._steps_in(node.value.func), self.yields)
        self.generic_visit(node)


def _split_mode(relative: str) -> tuple[str, str]:
    """``ledger/_async/run.py`` -> (``async``, ``ledger/run.py``); a module of one mode: ``""``."""
    for mode in ("_async", "_sync"):
        marker = f"/{mode}/"
        if marker in f"/{relative}":
            return mode.lstrip("_"), f"/{relative}".replace(marker, "/").lstrip("/")
    return "", relative


def _uses() -> Iterator[tuple[str, str, _Uses]]:
    for dotted, relative, tree in _modules():
        yield dotted, relative, _Uses(dotted, tree, relative.endswith("__init__.py"))


def test_each_kind_of_plan_is_carried_out_by_its_one_driver_alone() -> None:
    """Every place that tells steps apart is a driver, each driver tells apart exactly its
    plan's vocabulary, each step once, and it does so in both modes."""
    found: dict[tuple[str, str, str], list[str]] = {}
    for _, relative, uses in _uses():
        mode, file = _split_mode(relative)
        for function, step in uses.dispatches:
            place = (mode, file, re.sub(r"\bAsync(?=[A-Z])", "", function))  # as in _sync/
            found.setdefault(place, []).append(step.__name__)
    expected = {
        (mode, file, function): sorted(step.__name__ for step in vocabulary)
        for vocabulary, file, function in DRIVERS.values()
        for mode in ("async", "sync")
    }
    assert {place: sorted(steps) for place, steps in found.items()} == expected


def test_every_step_a_plan_builds_is_of_its_vocabulary() -> None:
    built: dict[str, set[type]] = {}
    for _, relative, uses in _uses():
        for _, step in uses.yields:
            built.setdefault(relative, set()).add(step)
    assert set(built) <= set(PLAN_MODULES), "steps are built and yielded outside the plans"
    for module, steps in built.items():
        assert steps <= set(PLAN_MODULES[module]), module
    # the scan sees what the plans build: every step of the ledger's and reconcile's
    assert set().union(*(built[module] for module in LEDGER_PLAN_MODULES)) == set(LEDGER_STEPS)
    assert built["ledger/_reconcile/plan.py"] == set(RECONCILE_STEPS)


def test_the_vocabulary_is_named_tuples_defined_in_its_two_modules() -> None:
    """One convention: every step and answer is a named tuple (``Emit``, generic, is a slotted
    class: a generic named tuple needs Python 3.11; ``Chunk``, what a ``Read`` is answered with,
    is bytes) whose docstring says what answers it; a meaning both halves share is one class
    (the ledger waits with the core's ``Sleep``)."""
    homes = {module.__name__ for module in STEPS_MODULES}
    assert {step.__module__ for step in ALL_STEPS} == homes
    assert ledger_steps.Sleep is core_steps.Sleep
    for module in STEPS_MODULES:
        defined = [
            value
            for value in vars(module).values()
            if isinstance(value, type) and value.__module__ == module.__name__
        ]
        for kind in defined:
            if kind is core_steps.Chunk:
                assert issubclass(kind, bytes)
            elif kind is not core_steps.Emit:
                assert issubclass(kind, tuple) and hasattr(kind, "_fields"), kind
            if kind in ALL_STEPS:
                assert "answered with" in " ".join((kind.__doc__ or "").split()), kind
    shared = set(vars(core_steps)) & set(vars(ledger_steps)) & {s.__name__ for s in ALL_STEPS}
    assert shared == {"Sleep"}
    assert all(getattr(ledger_steps, name) is getattr(core_steps, name) for name in shared)


FOREIGN: dict[str, object] = {
    "a call": Query("SELECT 1"),
    "an item plan": Begin(),
    "a ledger plan": Read(1.0),
    "reconciliation": Send(
        "GET", "http://127.0.0.1:9/payments", SealedHeaders({}), Timeout(1.0, 1.0, 1.0, 1.0)
    ),
}
"""For each kind of plan, a step of another kind's vocabulary, which its driver must refuse."""


def _asking(step: object, seen: list[object]) -> Generator[Any, Any, None]:
    """A plan that asks for ``step`` and records whatever it is answered with or thrown, taking
    any failure for the step's, as reconcile's plan takes one of the merchant's ``lookup``."""
    try:
        seen.append((yield step))
    except Exception as error:
        seen.append(error)


@pytest.mark.parametrize("kind", list(DRIVERS))
def test_a_driver_refuses_a_step_outside_its_plans_vocabulary(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    step = FOREIGN[kind]
    assert not isinstance(step, DRIVERS[kind][0])
    carried: list[object] = []
    seen: list[object] = []
    plan = _asking(step, seen)

    def record(*args: object) -> Any:
        carried.append(args)

    runs: dict[str, Callable[[], object]] = {
        "a call": lambda: drive.run(plan, record, record),
        "an item plan": lambda: list(drive.ItemIterator(plan, record, record)),
        "a ledger plan": lambda: ledger_run.run_plan(
            SQLiteDriver(str(tmp_path / "ledger.db"), busy_timeout=1.0), plan, record, timeout=1
        ),
        "reconciliation": lambda: sync_reconcile.reconcile(
            ledger, client, fulfil=record, lookup=None, progress=record
        ),
    }
    monkeypatch.setattr(sync_reconcile, "reconcile_plan", lambda **_: plan)
    with (
        paysdk.Ledger(tmp_path / "ledger.db") as ledger,
        paysdk.Client(secret_key="sk_test_refused", base_url="http://127.0.0.1:9") as client,
        pytest.raises(TypeError, match=r"asked for"),
    ):
        runs[kind]()
    assert carried == []  # nothing was sent, slept, run or reported
    assert seen == []  # never answered, and the refusal never thrown in for the plan to take


def test_a_plan_run_in_its_callers_transaction_runs_only_statements(tmp_path: Path) -> None:
    """The Django migration's way in: the transaction is the caller's to begin and end."""
    driver = SQLiteDriver(str(tmp_path / "ledger.db"), busy_timeout=1.0)
    connection = driver.begin()
    try:
        answered = ledger_run.run_in_transaction(connection, SQLITE, _one_query())
        assert answered.rows == [(1,)]
        with pytest.raises(TypeError, match=r"asked for Begin.*its steps \(Query\)"):
            ledger_run.run_in_transaction(connection, SQLITE, _asking(Begin(), []))
        with pytest.raises(TypeError, match="asked for Verify"):
            ledger_run.run_in_transaction(connection, SQLITE, _asking(Verify("r-1"), []))
    finally:
        connection.rollback()
        driver.done(connection)
        driver.close()


def _one_query() -> Generator[Query, Any, ledger_steps.Rows]:
    rows: ledger_steps.Rows = yield Query("SELECT 1")
    return rows

"""A framework helper imported without its extra says which extra to install."""

from __future__ import annotations

import importlib
import sys

import pytest

from paysdk.integrations._extras import DISTRIBUTION
from tests.project.test_release import NAME


@pytest.mark.parametrize(
    ("helper", "extra", "framework"),
    [
        ("paysdk.integrations.django", "django", "django"),
        ("paysdk.integrations.flask", "flask", "flask"),
        ("paysdk.integrations.fastapi", "fastapi", "starlette"),
    ],
)
def test_a_missing_framework_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, helper: str, extra: str, framework: str
) -> None:
    for name in [m for m in sys.modules if m == framework or m.startswith(f"{framework}.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, framework, None)  # what an uninstalled package looks like
    monkeypatch.delitem(sys.modules, helper, raising=False)
    with pytest.raises(ModuleNotFoundError) as raised:
        importlib.import_module(helper)
    assert str(raised.value) == (
        f"{helper} needs {framework!r}, which is not installed: pip install '{NAME}[{extra}]'"
    )
    assert raised.value.name == framework


def test_the_helpers_name_the_distribution_pyproject_declares() -> None:
    assert DISTRIBUTION == NAME

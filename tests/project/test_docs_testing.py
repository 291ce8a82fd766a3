"""docs/testing.md's Python examples run exactly as written, each pasted into a file of its own.

A block that defines ``test_*`` functions is a merchant's test module: it is written alone to a
fresh directory and run there by ``python -m pytest``, in a process whose environment names no
service (no ``PAYSDK_*`` variables), with paysdk installed and so its plugin registered; every test
in it must pass. Any other block is a script, run by ``python example.py``. Nothing is added to
either: a block imports what it uses.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```python\n(.*?)^```", PAGE, flags=re.DOTALL | re.MULTILINE)
TEST_FUNCTION = re.compile(r"^(?:async )?def (test_\w+)", flags=re.MULTILINE)
TEST_BLOCKS = [block for block in BLOCKS if TEST_FUNCTION.search(block)]
SCRIPT_BLOCKS = [block for block in BLOCKS if not TEST_FUNCTION.search(block)]


def merchants_environment() -> dict[str, str]:
    """This process's environment without PAYSDK_*, and the repository's paysdk importable."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PAYSDK_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    return env


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=merchants_environment(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


NOT_A_MERCHANTS = "hypothesispytest"  # a pytest plugin's name
"""Hypothesis is one of paysdk's own test tools, not a merchant's: its pytest plugin, which this
environment would load, costs each of these pytest runs a second of CPU."""


def _first_line(block: str) -> str:
    return block.strip().split("\n")[0]


def test_the_page_has_examples_of_both_kinds() -> None:
    assert len(TEST_BLOCKS) >= 7
    assert len(SCRIPT_BLOCKS) >= 2


@pytest.mark.parametrize("block", SCRIPT_BLOCKS, ids=_first_line)
def test_a_script_example_runs_as_a_file(block: str, tmp_path: Path) -> None:
    (tmp_path / "example.py").write_text(block, encoding="utf-8")
    done = run(["example.py"], tmp_path)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("block", TEST_BLOCKS, ids=lambda block: TEST_FUNCTION.findall(block)[0])
def test_a_pytest_example_passes_in_a_project_of_its_own(block: str, tmp_path: Path) -> None:
    (tmp_path / "test_example.py").write_text(block, encoding="utf-8")
    quiet = ["-q", "-p", "no:cacheprovider", "-p", f"no:{NOT_A_MERCHANTS}"]
    done = run(["-m", "pytest", *quiet, "test_example.py"], tmp_path)
    passed = len(TEST_FUNCTION.findall(block))
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(rf"\b{passed} passed\b", done.stdout), done.stdout


FAULT_ROW = re.compile(r"^\| `(Fault\.\w+\([^`]*\))` \|.*`(\w+Error)` \|$", flags=re.MULTILINE)


@pytest.mark.parametrize(("fault", "error"), FAULT_ROW.findall(PAGE), ids=lambda value: value)
def test_each_fault_of_the_table_raises_the_error_it_names(fault: str, error: str) -> None:
    import paysdk
    from paysdk.testing import Fault, MockPaymentAPI

    with MockPaymentAPI() as api, api.client(max_retries=0) as client:
        api.inject(eval(fault, {"Fault": Fault}))  # noqa: S307 - the page's own table
        with pytest.raises(getattr(paysdk, error)) as raised:
            client.list_payments()
    assert type(raised.value).__name__ == error


def test_every_fault_of_the_table_names_its_error() -> None:
    """Each named fault's row says what the client raises (the last row is any other fault)."""
    named = re.findall(r"^\| `Fault\.(?!json\()\w+\(", PAGE, flags=re.MULTILINE)
    assert len(FAULT_ROW.findall(PAGE)) == len(named) == 6

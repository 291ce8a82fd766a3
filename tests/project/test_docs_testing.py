"""docs/testing.md's Python examples run as written.

Convention for the ```python blocks of that page: each block is self-contained and may assume
only ``import paysdk``. A block that defines ``test_*`` functions is a pytest test module: it is
written to a fresh directory (with ``import paysdk`` prepended) and run by pytest with paysdk's
plugin, as a merchant would run it, and every test in it must pass. Any other block is run as a
script with ``paysdk`` in its namespace.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import paysdk
from tests.support.pytester import import_all_of_paysdk

pytest_plugins = ["pytester"]
import_all_of_paysdk()  # before any in-process run: tests/support/pytester.py says why

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "testing.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE, flags=re.DOTALL)
TEST_FUNCTION = re.compile(r"^(?:async )?def (test_\w+)", flags=re.MULTILINE)
TEST_BLOCKS = [block for block in BLOCKS if TEST_FUNCTION.search(block)]
SCRIPT_BLOCKS = [block for block in BLOCKS if not TEST_FUNCTION.search(block)]


def _first_line(block: str) -> str:
    return block.strip().split("\n")[0]


def test_the_page_has_examples_of_both_kinds() -> None:
    assert len(TEST_BLOCKS) >= 6
    assert len(SCRIPT_BLOCKS) >= 2


@pytest.mark.parametrize("block", SCRIPT_BLOCKS, ids=_first_line)
def test_a_script_example_runs(block: str) -> None:
    namespace: dict[str, object] = {"paysdk": paysdk, "__name__": "docs_testing"}
    exec(compile(block, "docs/testing.md", "exec"), namespace)  # noqa: S102 - our own docs


@pytest.mark.parametrize("block", TEST_BLOCKS, ids=lambda block: TEST_FUNCTION.findall(block)[0])
def test_a_pytest_example_passes(block: str, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_example="import paysdk\n\n" + block)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(TEST_FUNCTION.findall(block)))

"""docs/fulfilment.md's Python examples run as written (SQLite in a temp dir, the sandbox)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = (Path(__file__).resolve().parents[2] / "docs" / "fulfilment.md").read_text("utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", DOC, flags=re.DOTALL)


def test_the_guide_has_its_examples() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block-{n}" for n in range(len(BLOCKS))])
def test_a_fulfilment_guide_example_runs(
    block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # an example that names a relative file leaves it here
    exec(compile(block, "docs/fulfilment.md", "exec"), {"__name__": "fulfilment_doc"})  # noqa: S102

"""docs/fulfilment.md's Python examples run as written (SQLite in a temp dir, the sandbox); one
that configures Django runs in a fresh interpreter, since Django's settings are the process's."""

from __future__ import annotations

import re
import subprocess
import sys
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
    if "django.setup()" in block:
        run = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        return
    exec(compile(block, "docs/fulfilment.md", "exec"), {"__name__": "fulfilment_doc"})  # noqa: S102

"""docs/observability.md's tracing example prints what its comments say it prints.

tests/project/test_docs_examples.py runs every block; this one also checks the block's output.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from paysdk.sandbox import Sandbox

DOC = (Path(__file__).resolve().parents[2] / "docs" / "observability.md").read_text("utf-8")
TRACING_EXAMPLE = re.compile(
    r"```python\n(import paysdk\nfrom opentelemetry import trace\n.*?)```", flags=re.DOTALL
)


def test_the_tracing_example_prints_the_spans_it_shows() -> None:
    """The example's two spans come out as its comments say."""
    (block,) = TRACING_EXAMPLE.findall(DOC)
    with Sandbox() as sandbox:
        env = os.environ | {
            "PAYSDK_SECRET_KEY": sandbox.secret_key,
            "PAYSDK_BASE_URL": sandbox.base_url,
        }
        result = subprocess.run(
            [sys.executable, "-c", block], capture_output=True, text=True, env=env, timeout=60
        )
    assert result.returncode == 0, result.stderr
    shown = [line[2:] for line in block.splitlines() if line.startswith("# ")]
    assert result.stdout.splitlines() == shown

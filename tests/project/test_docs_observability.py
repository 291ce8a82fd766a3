"""docs/observability.md's tracing example runs as written, in a fresh interpreter: it sets the
process's tracer provider, which can be set once, so it must not run inside the test process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from paysdk.sandbox import Sandbox

DOC = (Path(__file__).resolve().parents[2] / "docs" / "observability.md").read_text("utf-8")
IN_ITS_OWN_PROCESS = re.compile(
    r"<!-- docs-test: skip: sets the process's one tracer provider[^>]*-->\n```python\n(.*?)```",
    flags=re.DOTALL,
)


def test_the_tracing_example_prints_the_spans_it_shows() -> None:
    """The example's two spans come out as its comments say."""
    (block,) = IN_ITS_OWN_PROCESS.findall(DOC)
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

"""The README's Python examples run as written, against the sandbox."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import paysdk
from paysdk.sandbox import Sandbox

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)
NEEDS_A_WEB_REQUEST = "verify_callback(request"


def test_the_readme_has_runnable_examples() -> None:
    runnable = [block for block in BLOCKS if NEEDS_A_WEB_REQUEST not in block]
    assert len(runnable) >= 4
    assert len(BLOCKS) - len(runnable) == 2  # the callback snippets need a framework's request


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if NEEDS_A_WEB_REQUEST not in b], ids=lambda b: b.split("\n")[0]
)
def test_a_readme_example_runs(
    block: str, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAYSDK_SECRET_KEY", sandbox.secret_key)
    monkeypatch.setenv("PAYSDK_BASE_URL", sandbox.base_url)
    namespace: dict[str, object] = {"paysdk": paysdk, "__name__": "readme"}
    with paysdk.Client() as client:
        namespace["client"] = client
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - our own README
    for left in namespace.values():  # the quickstart keeps a client for the process, as apps do
        if isinstance(left, paysdk.Client):
            left.close()

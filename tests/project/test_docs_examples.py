"""Every Python code block in README.md and docs/*.md runs as written, against the sandbox.

The convention, for whoever writes a page:

- A ```` ```python ```` block runs on its own, in a fresh namespace (so it must import what it
  uses), with ``PAYSDK_BASE_URL`` and ``PAYSDK_SECRET_KEY`` pointing at a fresh sandbox holding
  the bundled seed (``order-1042`` succeeded, ``order-1043`` failed, ...).
- ``<!-- docs-test: continue -->`` on the line before a block runs it after the Python block
  before it on the same page, in that block's namespace: for a snippet that goes on from the
  last one.
- ``<!-- docs-test: skip: REASON -->`` on the line before a block leaves it out, for the reason
  given (a framework's request, your own models). Prefer a block that runs.

Other fences (``sh``, ``json``) are not run. Clients a block leaves open are closed afterwards,
and the logging configuration a block changes is put back.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import paysdk
from paysdk.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]
RUN_ELSEWHERE = {
    "testing.md": "tests/project/test_docs_testing.py",  # its blocks are merchants' pytest modules
}
"""Pages whose blocks a test of their own runs, under that page's own convention."""
PAGES = [
    ROOT / "README.md",
    *sorted(page for page in (ROOT / "docs").glob("*.md") if page.name not in RUN_ELSEWHERE),
]
MARKER = re.compile(r"<!--\s*docs-test:(.*?)-->")
CONTINUE = re.compile(r"\s*continue\s*")
SKIP = re.compile(r"\s*skip:\s*(\S.*?)\s*")


@dataclasses.dataclass(frozen=True)
class Block:
    page: str
    line: int
    code: str
    mode: str  # "run", "continue" or "skip"
    reason: str = ""

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def blocks_of(page: Path) -> Iterator[Block]:
    """The page's Python blocks, each with the marker on the line before it (if any)."""
    name = page.relative_to(ROOT).as_posix()
    lines = page.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        if lines[index].strip() != "```python":
            index += 1
            continue
        start = index
        index += 1
        while lines[index].strip() != "```":
            index += 1
        code = "\n".join(lines[start + 1 : index]) + "\n"
        before = lines[start - 1] if start > 0 else ""
        marker = MARKER.fullmatch(before.strip())
        if marker is None:
            yield Block(name, start + 1, code, "run")
        elif CONTINUE.fullmatch(marker[1]):
            yield Block(name, start + 1, code, "continue")
        elif skip := SKIP.fullmatch(marker[1]):
            yield Block(name, start + 1, code, "skip", skip[1])
        else:
            raise ValueError(f"{name}:{start}: unknown marker {before.strip()!r}")


BLOCKS = [block for page in PAGES for block in blocks_of(page)]


def chains() -> list[list[Block]]:
    """Blocks to run together: one that runs alone, then those that continue it."""
    result: list[list[Block]] = []
    for block in BLOCKS:
        if block.mode == "run":
            result.append([block])
        elif block.mode == "continue":
            assert result, f"{block.id}: nothing before it to continue"
            assert result[-1][0].page == block.page, f"{block.id}: continues another page"
            result[-1].append(block)
    return result


def test_every_marker_stands_before_a_python_block() -> None:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for marker in re.finditer(rf"^\s*{MARKER.pattern}\s*$", text, flags=re.MULTILINE):
            after = text[marker.end() :]
            assert after.startswith("\n```python\n"), f"{page.name}: {marker[0]} before no block"


def test_what_is_skipped_says_why_and_most_blocks_run() -> None:
    skipped = [block for block in BLOCKS if block.mode == "skip"]
    assert all(len(block.reason) >= 10 for block in skipped)
    running = [block for block in BLOCKS if block.mode != "skip"]
    assert len(running) >= 2 * len(skipped)
    pages = {block.page for block in running}
    assert {"README.md", "docs/index.md", "docs/configuration.md", "docs/errors.md"} <= pages
    assert {"docs/sandbox.md", "docs/callbacks.md"} <= pages


@pytest.fixture
def docs_sandbox(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    """A fresh sandbox that ``paysdk.Client()`` finds through the environment."""
    with Sandbox() as sandbox:
        monkeypatch.setenv("PAYSDK_SECRET_KEY", sandbox.secret_key)
        monkeypatch.setenv("PAYSDK_BASE_URL", sandbox.base_url)
        yield sandbox


@pytest.fixture
def logging_restored() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    paysdk_loggers = [logging.getLogger(name) for name in ("paysdk", "paysdk.callbacks")]
    paysdk_state = [(logger, logger.handlers[:], logger.level) for logger in paysdk_loggers]
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for logger, old_handlers, old_level in paysdk_state:
        logger.handlers[:] = old_handlers
        logger.setLevel(old_level)


@pytest.mark.parametrize("chain", chains(), ids=lambda chain: chain[0].id)
@pytest.mark.usefixtures("docs_sandbox", "logging_restored")
def test_a_documented_example_runs(chain: list[Block]) -> None:
    namespace: dict[str, object] = {"__name__": "__docs__"}
    try:
        for block in chain:
            code = compile(block.code, block.id, "exec")
            exec(code, namespace)  # noqa: S102 - our own documentation
    finally:
        for value in namespace.values():
            if isinstance(value, paysdk.Client):
                value.close()
            elif isinstance(value, paysdk.AsyncClient):
                asyncio.run(value.close())

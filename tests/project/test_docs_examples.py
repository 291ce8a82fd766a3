"""Every Python code block in README.md and docs/*.md runs exactly as written, as a file of its own.

The convention, for whoever writes a page (docs/design.md repeats it for contributors):

- A ```` ```python ```` block is a whole program: it is pasted into ``example.py`` in an empty
  directory and run by ``python example.py``. Nothing is added to it, so it imports what it uses.
- A block that reads ``PAYSDK_BASE_URL`` and ``PAYSDK_SECRET_KEY`` says so where a reader sees
  it: the block names the variables (``paysdk.Client()  # reads PAYSDK_SECRET_KEY and
  PAYSDK_BASE_URL``). Only those blocks run with the two set, to a fresh sandbox holding the
  bundled seed (``order-1042`` succeeded, ``order-1043`` failed, ...); the others run with no
  ``PAYSDK_*`` variable at all.
- A block whose first line is ``# ...continuing the example above`` runs after the Python blocks
  before it on the same page, in one file.
- A block whose first line is ``# Fragment: REASON`` is part of a program the reader brings
  (their framework's view, their order table): it is not run, and says why.
- A block that is only ``--8<-- "examples/NAME.py"`` shows that file (pymdownx.snippets); the
  example's own tests run it (``EXAMPLE_TESTS``).

Each block's third-party imports (and a SQLAlchemy URL's driver) are installed by a ``pip install``
line given earlier on its page, or come with paysdk (its core dependencies).

Other fences (``sh``, ``json``, ``toml``) are not run. docs/testing.md's blocks are merchants'
pytest modules: tests/project/test_docs_testing.py runs them.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from paysdk.sandbox import Sandbox
from tests.support.installs import (
    CORE,
    install_lines,
    installed_by,
    providers,
    third_party_imports,
)

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
REQUIRES_PYTHON = PYPROJECT.split('requires-python = "', 1)[1].split('"', 1)[0]
RUN_ELSEWHERE = {
    "testing.md": "tests/project/test_docs_testing.py",  # its blocks are merchants' pytest modules
}
"""Pages whose blocks a test of their own runs, under that page's own convention."""
PAGES = [
    ROOT / "README.md",
    *sorted(page for page in (ROOT / "docs").glob("*.md") if page.name not in RUN_ELSEWHERE),
]
EXAMPLE_TESTS = {
    "examples/quickstart.py": "tests/sandbox/test_quickstart.py",
    "examples/flask_callback.py": "tests/integrations/test_example_apps.py",
    "examples/fastapi_callback.py": "tests/integrations/test_example_apps.py",
    "examples/django_callback.py": "tests/integrations/test_example_apps.py",
}
"""Each example file the docs show, and the test that runs it."""
CONTINUE = "# ...continuing the example above"
FRAGMENT = re.compile(r"# Fragment: (\S.*)")
SNIPPET = re.compile(r'--8<-- "([^"]+)"')
NEEDS_SERVICE = re.compile(r"PAYSDK_(?:SECRET_KEY|BASE_URL)")
FENCE = re.compile(r"^```python(?: [^\n]*)?\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Block:
    page: str
    line: int
    code: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def mode(self) -> str:
        first = self.code.split("\n", 1)[0].strip()
        if first == CONTINUE:
            return "continue"
        if FRAGMENT.fullmatch(first):
            return "fragment"
        if SNIPPET.fullmatch(self.code.strip()):
            return "snippet"
        return "run"


def blocks_of(page: Path) -> Iterator[Block]:
    name = page.relative_to(ROOT).as_posix()
    text = page.read_text(encoding="utf-8")
    for fence in FENCE.finditer(text):
        yield Block(name, text.count("\n", 0, fence.start()) + 1, fence[1])


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


def test_fragments_say_why_and_most_blocks_run() -> None:
    fragments = [block for block in BLOCKS if block.mode == "fragment"]
    assert all(len(block.code.split("\n", 1)[0]) >= 25 for block in fragments)
    running = [block for block in BLOCKS if block.mode in ("run", "continue")]
    assert len(running) >= 3 * len(fragments)
    pages = {block.page for block in running}
    assert {"README.md", "docs/index.md", "docs/configuration.md", "docs/errors.md"} <= pages
    assert {"docs/sandbox.md", "docs/observability.md", "docs/fulfilment.md"} <= pages


def test_no_hidden_markers_decide_how_a_block_runs() -> None:
    for page in [*PAGES, ROOT / "docs" / "testing.md"]:
        assert "docs-test:" not in page.read_text(encoding="utf-8"), page.name


def test_each_example_a_page_shows_is_run_by_its_test() -> None:
    shown = {
        SNIPPET.fullmatch(block.code.strip())[1]  # type: ignore[index]
        for block in BLOCKS
        if block.mode == "snippet"
    }
    assert shown, "the pages show no example file"
    for example in shown:
        assert (ROOT / example).is_file(), example
        test = EXAMPLE_TESTS[example]
        assert Path(example).stem in (ROOT / test).read_text(encoding="utf-8"), (example, test)


def environment(sandbox: Sandbox | None) -> dict[str, str]:
    """This process's environment without PAYSDK_* (but the sandbox's, if given)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PAYSDK_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    if sandbox is not None:
        env |= {"PAYSDK_SECRET_KEY": sandbox.secret_key, "PAYSDK_BASE_URL": sandbox.base_url}
    return env


@pytest.mark.parametrize("chain", chains(), ids=lambda chain: chain[0].id)
def test_a_documented_example_runs_as_a_file_and_leaves_nothing_unclosed(
    chain: list[Block], tmp_path: Path
) -> None:
    """Each program a page shows runs, and closes what it opens: a reader who copies it into an
    app (or runs it under pytest, or ``python -X dev``) gets no ResourceWarning of an unclosed
    client's connection."""
    code = "\n".join(block.code for block in chain)
    (tmp_path / "example.py").write_text(code, encoding="utf-8")
    with Sandbox() as sandbox:
        done = subprocess.run(
            [sys.executable, "-W", "default::ResourceWarning", "example.py"],
            cwd=tmp_path,
            env=environment(sandbox if NEEDS_SERVICE.search(code) else None),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert "ResourceWarning" not in done.stderr, done.stderr


ALL_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def shown_code(block: Block) -> str:
    """What the reader sees of a block: an example file's text for a snippet."""
    snippet = SNIPPET.fullmatch(block.code.strip())
    return (ROOT / snippet[1]).read_text(encoding="utf-8") if snippet else block.code


@pytest.mark.parametrize(
    "block", [block for page in ALL_PAGES for block in blocks_of(page)], ids=lambda b: b.id
)
def test_each_package_a_block_imports_is_installed_by_a_line_before_it(block: Block) -> None:
    text = (ROOT / block.page).read_text(encoding="utf-8")
    starts = len("".join(text.splitlines(keepends=True)[: block.line - 1]))
    given = [line for line in install_lines(text) if line.offset < starts]
    installed = CORE | {name for line in given for name in installed_by(line.arguments)}
    missing = []
    for module in sorted(third_party_imports(shown_code(block))):
        made_by = providers(module)
        assert made_by, f"{block.id} imports {module!r}, which no installed distribution has"
        if not made_by & installed:
            missing.append(f"{module} ({' or '.join(sorted(made_by))})")
    assert not missing, (
        f"{block.id} needs what no `pip install` line before it names: {'; '.join(missing)};"
        f" the lines before it: {given}"
    )


@pytest.mark.parametrize(
    "block", [block for page in ALL_PAGES for block in blocks_of(page)], ids=lambda b: b.id
)
def test_each_block_is_written_in_the_oldest_supported_python(block: Block) -> None:
    """The blocks run on ``make test``'s Python alone (an interpreter-independent tier), so no
    block may use syntax that the oldest Python paysdk supports (pyproject.toml) would reject."""
    oldest = tuple(int(part) for part in REQUIRES_PYTHON.removeprefix(">=").split("."))
    assert oldest == (3, 10)
    try:
        ast.parse(shown_code(block), feature_version=(oldest[0], oldest[1]))
    except SyntaxError as error:
        pytest.fail(f"{block.id}: {error.msg} on Python {REQUIRES_PYTHON} (line {error.lineno})")


def test_the_syntax_check_knows_a_newer_python_s_syntax() -> None:
    newer = Block("page.md", 1, "try:\n    pass\nexcept* ValueError:\n    pass\n")
    with pytest.raises(pytest.fail.Exception, match=r"page\.md:1"):
        test_each_block_is_written_in_the_oldest_supported_python(newer)


def test_the_install_check_reads_what_a_page_gives() -> None:
    page = """Install: `pip install 'python-paysdk[sqlalchemy,flask]' aiosqlite`.

```sh
pip install -U python-json-logger   # the formatter
```
"""
    (first, second) = install_lines(page)
    assert installed_by(first.arguments) >= CORE | {"flask", "sqlalchemy", "aiosqlite"}
    assert installed_by(second.arguments) == {"python-json-logger"}
    code = (
        "from opentelemetry import trace\n"
        "import opentelemetry.instrumentation.httpx\n"
        "engine = f'sqlite+aiosqlite:///{tmp}/shop.db'  # postgresql+psycopg:// in a comment\n"
        "import json, paysdk.sandbox\n"
    )
    assert third_party_imports(code) == {
        "opentelemetry.trace",
        "opentelemetry.instrumentation.httpx",
        "aiosqlite",
    }
    assert providers("opentelemetry.instrumentation.httpx") == {
        "opentelemetry-instrumentation-httpx"
    }
    assert providers("opentelemetry.trace") == {"opentelemetry-api"}

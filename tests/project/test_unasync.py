"""scripts/unasync.py: the generated sync code is what its async source makes, and --check says
so only when it is true."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "unasync.py"


unasync = load_script("unasync")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the repository's async sources and their generated twins, nothing else."""
    for directory in unasync.DIRECTORIES:
        source = ROOT / directory
        for twin in (source, source.with_name("_sync")):
            shutil.copytree(twin, tmp_path / twin.relative_to(ROOT))
    return tmp_path


def generated_files(root: Path) -> list[Path]:
    return [
        path
        for directory in unasync.DIRECTORIES
        for path in sorted((root / directory).with_name("_sync").glob("*.py"))
    ]


def test_the_repository_is_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_every_generated_file_says_where_it_comes_from() -> None:
    generated = generated_files(ROOT)
    assert {path.name for path in generated} >= {"__init__.py", "run.py", "reconcile.py"}
    for path in generated:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith(f"# Generated from ../_async/{path.name} by scripts/unasync.py")


def test_the_check_catches_an_edited_generated_file(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert unasync.check(tree) == []
    edited = tree / "src/paysdk/ledger/_sync/run.py"
    text = edited.read_text(encoding="utf-8")
    edited.write_text(text.replace("connection.rollback()", "pass"), encoding="utf-8")

    assert unasync.main(["--check"], root=tree) == 1
    out = capsys.readouterr().out
    assert "src/paysdk/ledger/_sync/run.py (as it is)" in out
    assert "-        pass\n+        connection.rollback()\n" in out
    assert edited.read_text(encoding="utf-8") != text  # a check changes nothing

    assert unasync.main([], root=tree) == 0
    assert edited.read_text(encoding="utf-8") == text
    assert unasync.check(tree) == []


def test_the_check_catches_a_source_edited_without_regenerating(tree: Path) -> None:
    source = tree / "src/paysdk/ledger/_async/reconcile.py"
    source.write_text(
        source.read_text(encoding="utf-8").replace(
            "await ledger._found_rows(", "await ledger.lookup("
        ),
        encoding="utf-8",
    )
    [problem] = unasync.check(tree)
    assert "-                return ledger._found_rows(step.references, account=" in problem
    assert "+                return ledger.lookup(step.references, account=" in problem


def test_the_check_catches_a_missing_or_orphaned_generated_file(tree: Path) -> None:
    sync = tree / "src/paysdk/ledger/_sync"
    (sync / "reconcile.py").unlink()
    (sync / "leftover.py").write_text("x = 1\n", encoding="utf-8")
    problems = unasync.check(tree)
    assert len(problems) == 2
    assert all("/dev/null" in problem for problem in problems)

    unasync.generate(tree)
    assert (sync / "reconcile.py").exists()
    assert not (sync / "leftover.py").exists()
    assert unasync.check(tree) == []


@pytest.mark.parametrize(
    ("line", "sync"),
    [
        ("async def f(self) -> None:", "def f(self) -> None:"),
        ("    async with AsyncExitStack() as stack:", "    with ExitStack() as stack:"),
        ("x = await stack.enter_async_context(cm)", "x = stack.enter_context(cm)"),
        ("await listing.aclose()", "listing.close()"),
        ("    async def __anext__(self) -> T:", "    def __next__(self) -> T:"),
        ("        return await anext(self._items)", "        return next(self._items)"),
        ("it = aiter(stream)", "it = iter(stream)"),
        ("p: AsyncIterator[int] | None = None", "p: Iterator[int] | None = None"),
        ("reply = await async_take(p, 5)", "reply = take(p, 5)"),
        ("from .._driver import AsyncDriver", "from .._driver import Driver"),
        ("from ..._transport import async_drive", "from ..._transport import drive"),
        ("    from ..._transport._async import drive", "    from ..._transport._sync import drive"),
        ("from ..._client._async.client import A", "from ..._client._sync.client import A"),
        ('"""``_async/`` is the source"""', '"""``_async/`` is the source"""'),
        ("ledger.aclosed = enter_async_contexts", "ledger.aclosed = enter_async_contexts"),
        ('"""made by ``async_direct.py``"""', '"""made by ``async_direct.py``"""'),  # a file
    ],
)
def test_a_line_becomes_its_sync_twin(line: str, sync: str) -> None:
    assert unasync.unasync_line(line) == sync


def test_a_passage_becomes_what_the_sync_twin_says_and_the_rules_leave_it_alone() -> None:
    source = (
        "    async def close(self) -> None:\n"
        '        """Close the connections, unless the http_client was given '
        "(then it is yours to close).\n\n"
        "        Safe from any event loop: the connections are closed in the loop they belong to.\n"
        '        """\n'
        "        await self._sender.aclose()\n\n"
        "    async def __aenter__(self) -> Self:\n"
    )
    used: set[str] = set()
    generated = unasync.unasync_source("client.py", source, used)
    assert generated.endswith(
        "    def close(self) -> None:\n"
        '        """Close the connections, unless the http_client was given '
        '(then it is yours to close)."""\n'
        "        self._sender.close()\n\n"
        "    def __enter__(self) -> Self:\n"
    )
    assert any(passage.startswith("(then it is yours to close).") for passage in used)


def test_the_check_names_a_passage_no_source_has(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    passages = {**unasync.PASSAGES, "an async sentence no docstring has": "a sync one"}
    monkeypatch.setattr(unasync, "PASSAGES", passages)
    monkeypatch.setattr(
        unasync,
        "PASSAGE_PATTERN",
        unasync.re.compile("(" + "|".join(map(unasync.re.escape, passages)) + ")"),
    )
    problems = unasync.check(tree)
    assert problems == ["passage 'an async sentence no docstring has' is in no source: remove it\n"]

"""Every shell block of README.md and docs/*.md runs as written, or says, visibly, why not.

The pages' convention is ``tests/support/shell_blocks.py``'s: a page's shell blocks run in
order in one ``sh -e`` from a fresh empty directory (once per content-tab label), files the
reader is told to save are saved, and a block whose first line is ``# Not run by the docs
tests: REASON`` is not run. Each run's surroundings, and all that differs from a reader's:

- The reader has installed paysdk (``pip install python-paysdk``, the Quickstart's first step):
  ``python`` and ``paysdk`` are a fresh venv's, holding the wheel built from this checkout (one
  venv shared by the pages that install nothing more, so cannot change it).
- ``pip install`` installs into the venv whose ``python`` is first on PATH, from uv's cache (no
  network), at the versions the tests' own environment has: ``python-paysdk`` is that wheel
  (extras as named). ``python -m venv DIR`` makes a venv with uv, so its ``pip`` is this one.
- Words substituted: the ports the pages name (8000, 8001 and 8002, the example apps'; 8321,
  sandbox.md's sandbox) become free ports, so that runs in parallel never meet. Nothing else:
  every path a block names is relative to its fresh directory, and the sandbox's runtime
  directory (its pid files and logs) is a private one through ``PAYSDK_SANDBOX_DIR``, set in
  the environment as a reader may set it. No ``PAYSDK_*`` variable is set otherwise; Python's
  output is unbuffered (``PYTHONUNBUFFERED``), as a terminal's is line by line.
- A block naming ``examples/`` runs from a checkout, so its directory holds ``examples/``.
- Everything a page starts, it must stop: a process (or a background sandbox) still running
  when the page ends fails the run, and is killed then, as on any failure or a timeout.
- On docs/first-hour.md, each ```` ```text ```` block after a command is what it prints, and
  each of its lines (``...`` for what changes) must be in the run's output.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from paysdk.cli._background import alive
from tests.support.ports import unused_port
from tests.support.shell_blocks import (
    PORTS,
    ROOT,
    blocks_of,
    expected_lines,
    pages,
    put_back,
    run_script,
    script,
    shown_by,
    variants,
    write_shims,
)
from tests.support.wheels import fresh_venv, uv

BLOCKS = {page.relative_to(ROOT).as_posix(): list(blocks_of(page)) for page in pages()}
SHELL = [block for blocks in BLOCKS.values() for block in blocks if block.is_shell]
OUTPUT_CHECKED = {"docs/first-hour.md"}
"""The pages whose ```text blocks after a command are checked against what it prints."""
FRAMEWORKS = ["Flask", "FastAPI", "Django"]


def runs() -> list[tuple[str, str | None]]:
    """Each page with a block to run, once per tab label."""
    return [
        (page, variant)
        for page, blocks in BLOCKS.items()
        if any(block.is_shell and block.exempt is None for block in blocks)
        for variant in variants(blocks)
    ]


def test_each_shell_block_runs_or_says_why_it_does_not() -> None:
    exempt = [block for block in SHELL if block.exempt is not None]
    for block in exempt:
        assert len(block.exempt or "") >= 25, f"{block.id}: say why it is not run"
    assert len(exempt) <= 4, [block.id for block in exempt]  # docs/design.md says four
    running = {block.page for block in SHELL if block.exempt is None}
    assert {"README.md", "docs/first-hour.md", "docs/sandbox.md", "docs/cli.md"} <= running


def test_output_is_text_and_commands_are_shell() -> None:
    """A shell block holds commands (and comments), a reader's prompt never: output is a
    ```text block of its own, which a reader's copy button does not paste."""
    for block in SHELL:
        for line in block.code.splitlines():
            assert not line.startswith(("$ ", "> ", ">>> ")), f"{block.id}: {line!r}"
    assert all(block.lang != "console" for block in SHELL), "```console shows prompts"


def test_the_first_hour_runs_in_each_framework_and_is_where_a_newcomer_looks() -> None:
    blocks = BLOCKS["docs/first-hour.md"]
    assert variants(blocks) == FRAMEWORKS
    commands = "\n".join(block.code for block in blocks if block.is_shell)
    for needed in ["python3 -m venv", "paysdk sandbox --detach", "paysdk pay", "--callback"]:
        assert needed in commands
    assert "examples/" not in commands  # a newcomer has the wheel, not a checkout
    assert all(block.exempt is None for block in blocks if block.is_shell)
    saved = {block.saved_as: block.code for block in blocks if block.saved_as}
    assert set(saved) == {"flask_callback.py", "fastapi_callback.py", "django_callback.py"}
    for name, code in saved.items():  # the example apps, which their own tests run
        assert code == (ROOT / "examples" / name).read_text(encoding="utf-8"), name
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "  - Quickstart: index.md\n  - Your first hour: first-hour.md\n" in nav
    assert "](docs/first-hour.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert "](first-hour.md)" in index.split("\n## ", 1)[0]  # before its first section


START_LINES = {
    "Flask": [" * Running on http://127.0.0.1:8000"],
    "FastAPI": ["INFO:     Uvicorn running on http://127.0.0.1:8002 (Press CTRL+C to quit)"],
    "Django": [
        "Starting development server at http://127.0.0.1:8001/",  # Django 4.2 to 5.2
        "Starting WSGI development server at http://127.0.0.1:8001/",  # Django 6
    ],
}
"""What each framework's server prints once it listens, in each version its extra allows: the
page's run sees only the tests' own versions, a newcomer on Python 3.12+ the newest."""


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_first_hours_start_up_line_is_each_versions(framework: str) -> None:
    found = expected_lines(BLOCKS["docs/first-hour.md"], framework)
    expected = [line for _, line in found if line.strip() != "..."]  # "..." is any line
    for printed in START_LINES[framework]:
        assert any(shown_by(line, [printed]) for line in expected), (framework, printed)


def test_the_harness_reads_tabs_saved_files_and_exemptions(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```sh\necho all 8000\n```\n\n"
        '=== "A"\n\n    ```python title="app.py"\n    print(1)\n    ```\n\n'
        '=== "B"\n\n    ```bash\n    echo b\n    ```\n\n'
        "```text\nall ...\n```\n\n"
        "```sh\n# Not run by the docs tests: it runs until you stop it\nsleep 1000\n```\n",
        encoding="utf-8",
    )
    blocks = list(blocks_of(page, tmp_path))
    assert variants(blocks) == ["A", "B"]
    assert [block.tab for block in blocks] == [None, "A", "B", None, None]
    assert blocks[1].saved_as == "app.py"
    assert blocks[4].exempt == "it runs until you stop it"
    ports = {port: str(10000 + n) for n, port in enumerate(PORTS)}
    first = script(blocks, "A", ports)
    assert "echo all 10000" in first and "print(1)" in first and "echo b" not in first
    assert "sleep 1000" not in first
    assert "echo b" in script(blocks, "B", ports) and "print(1)" not in script(blocks, "B", ports)
    assert expected_lines(blocks, "A") == []  # a saved file is between: not its output
    assert expected_lines(blocks, "B") == [(blocks[3].id, "all ...")]
    assert shown_by("all ...", ["x", " all 8000 "]) and not shown_by("all ...", ["al 8"])


def test_what_a_page_leaves_running_is_named_and_stopped(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    run = run_script("sleep 61 &\necho started\n", cwd=work, env=dict(os.environ),
                     runtime=tmp_path / "run")  # fmt: skip
    assert (run.returncode, run.stdout) == (0, "started\n")
    (left,) = run.left_running
    assert left.endswith(": sleep 61")
    assert not alive(int(left.split(":")[0]))


@pytest.fixture(scope="module")
def wheel_venv(paysdk_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the wheel alone, shared by the pages that install nothing more (so cannot
    change it)."""
    return fresh_venv(tmp_path_factory.mktemp("venv"), str(paysdk_wheel))


def free_ports(text: str) -> dict[str, str]:
    """A free port for each port the pages name, none of them a number the page has."""
    ports: dict[str, str] = {}
    while len(ports) < len(PORTS):
        port = str(unused_port())
        if port not in text and port not in ports.values():
            ports[PORTS[len(ports)]] = port
    return ports


def environment(venv: Path, shims: Path, runtime: Path) -> dict[str, str]:
    """This process's environment without what would tell a command where paysdk, the service,
    Django's settings or a ledger are; PATH with the shims and the venv first, and no other
    directory holding a ``paysdk`` or this test's own Python."""
    dropped = ("PAYSDK_", "PYTHON", "VIRTUAL_ENV", "DJANGO_", "LEDGER_URL", "PORT", "PIP_")
    env = {name: value for name, value in os.environ.items() if not name.startswith(dropped)}
    others = [
        entry
        for entry in env.get("PATH", "").split(os.pathsep)
        if entry
        and not (Path(entry) / "paysdk").exists()
        and Path(entry) != Path(sys.executable).parent
    ]
    env["PATH"] = os.pathsep.join([str(shims), str(venv / "bin"), *others])
    env["PAYSDK_SANDBOX_DIR"] = str(runtime)
    env["PYTHONUNBUFFERED"] = "1"  # each line written out as it is printed, as on a terminal
    return env


@pytest.mark.parametrize(("page", "variant"), runs(), ids=lambda value: value or "all")
def test_a_page_runs_as_written(
    page: str, variant: str | None, paysdk_wheel: Path, wheel_venv: Path, tmp_path: Path
) -> None:
    blocks = BLOCKS[page]
    ports = free_ports((ROOT / page).read_text(encoding="utf-8"))
    text = script(blocks, variant, ports)
    assert put_back(text, ports) == script(blocks, variant, {port: port for port in PORTS})
    running = [b for b in blocks if b.is_shell and b.exempt is None and b.tab in (None, variant)]
    installs = any("pip install" in block.code for block in running)
    venv = fresh_venv(tmp_path / "venv", str(paysdk_wheel)) if installs else wheel_venv
    work = tmp_path / "work"
    work.mkdir()
    if any("examples/" in block.code for block in running):
        shutil.copytree(ROOT / "examples", work / "examples")
    runtime = tmp_path / "run"
    write_shims(tmp_path / "bin", wheel=paysdk_wheel, uv=uv(), python=sys.executable,
                base=venv / "bin" / "python")  # fmt: skip
    run = run_script(text, cwd=work, env=environment(venv, tmp_path / "bin", runtime),
                     runtime=runtime)  # fmt: skip
    said = put_back(f"{run.stdout}\n--- stderr:\n{run.stderr}", ports)
    started = [line for line in run.stderr.splitlines() if line.startswith(">>> ")]
    where = started[-1][4:] if started else page
    assert run.returncode == 0, f"failed in the block at {where} ({run.returncode}):\n{said}"
    assert not run.left_running, f"{page} left these running: {run.left_running}\n{said}"
    if page in OUTPUT_CHECKED:
        lines = put_back(run.stdout + run.stderr, ports).splitlines()
        missing = [f"{at}: {line}" for at, line in expected_lines(blocks, variant)
                   if not shown_by(line, lines)]  # fmt: skip
        assert not missing, f"not printed as the page says:\n{missing}\n{said}"

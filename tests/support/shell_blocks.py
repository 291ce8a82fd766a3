"""The shell blocks of README.md and docs/*.md, found and run as a reader runs them.

The convention, for whoever writes a page (tests/project/test_docs_shell.py holds the pages to it):

- Every ```` ```sh ````, ```` ```bash ````, ```` ```console ```` or ```` ```shell ```` block is a
  command the reader types. A page's blocks run in the order they appear, in one ``sh`` with
  ``set -e`` (as one reader follows the page in one terminal), from a fresh empty directory.
- Output shown to the reader is a ```` ```text ```` block, never a shell block.
- A block whose first line is ``# Not run by the docs tests: REASON`` is not run, and says why
  where the reader sees it. Few blocks are: one that needs a clone of the repository and the
  network, or runs for minutes, or a production database.
- A ```` ```python title="NAME" ```` block is a file the reader saves as ``NAME`` (relative to
  the directory the page's commands are in at that point): it is written there, as shown (an
  ``--8<-- "FILE"`` snippet is that file), before the commands after it run.
- Content tabs (``=== "Flask"``, pymdownx.tabbed) are alternatives: the page runs once per tab
  label, with the blocks outside tabs and those in that label's tabs.

A block that names ``examples/`` runs from a checkout of the repository, so its directory holds
a copy of ``examples/``; no other file of the repository is there.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.metadata
import json
import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from paysdk.cli._background import alive

__all__ = [
    "EXEMPT",
    "PORTS",
    "ROOT",
    "Block",
    "blocks_of",
    "moved",
    "pages",
    "script",
    "variants",
]

ROOT = Path(__file__).resolve().parents[2]
SHELLS = ("sh", "bash", "console", "shell")
EXEMPT = re.compile(r"# Not run by the docs tests: (\S.*)")
FENCE = re.compile(
    r"^(?P<indent> *)```(?P<lang>\w+)(?P<attrs>[^\n]*)\n(?P<code>.*?)^(?P=indent)```[ \t]*$",
    flags=re.DOTALL | re.MULTILINE,
)
TAB = re.compile(r'^(?P<indent> *)=== "(?P<label>[^"]+)"', flags=re.MULTILINE)
TITLE = re.compile(r'title="([^"]+)"')
SNIPPET = re.compile(r'--8<-- "([^"]+)"')
PORTS = ("8000", "8001", "8002", "8321")
"""The ports the pages name: the example apps' (Flask, Django, FastAPI) and sandbox.md's
sandbox. Each run moves them to free ports, so runs in parallel never meet."""
PORT_WORD = re.compile(r"\b(" + "|".join(PORTS) + r")\b")


@dataclasses.dataclass(frozen=True)
class Block:
    """One fenced block of a page: where it is, its language, its tab label (if in a tab)."""

    page: str
    line: int
    lang: str
    attrs: str
    code: str
    tab: str | None

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def is_shell(self) -> bool:
        return self.lang in SHELLS

    @property
    def exempt(self) -> str | None:
        """Why the block is not run, if its first line says so."""
        found = EXEMPT.fullmatch(self.code.split("\n", 1)[0].strip())
        return found[1] if found else None

    @property
    def saved_as(self) -> str | None:
        """The file name a ``python title="NAME"`` block is saved as."""
        found = TITLE.search(self.attrs)
        return found[1] if self.lang == "python" and found else None

    def shown(self) -> str:
        """What the reader sees: a snippet's file, else the block."""
        snippet = SNIPPET.fullmatch(self.code.strip())
        return (ROOT / snippet[1]).read_text(encoding="utf-8") if snippet else self.code


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks_of(page: Path, root: Path = ROOT) -> Iterator[Block]:
    """Each fenced block of ``page`` (named relative to ``root``), dedented out of any content
    tab it is in."""
    name = page.relative_to(root).as_posix()
    text = page.read_text(encoding="utf-8")
    for fence in FENCE.finditer(text):
        indent = len(fence["indent"])
        tab = None
        tabs = [t for t in TAB.finditer(text, 0, fence.start()) if len(t["indent"]) < indent]
        if tabs:  # in that tab if every line since is blank or indented under it
            between = text[tabs[-1].end() : fence.start()].splitlines()[1:]
            if all(not line.strip() or line.startswith(" " * indent) for line in between):
                tab = tabs[-1]["label"]
        code = "".join(  # the tab's indentation off each line (a blank line may have none)
            line[indent:] if line.startswith(" " * indent) else line.lstrip(" ")
            for line in fence["code"].splitlines(keepends=True)
        )
        line = text.count("\n", 0, fence.start()) + 1
        yield Block(name, line, fence["lang"], fence["attrs"].strip(), code, tab)


def variants(blocks: list[Block]) -> list[str | None]:
    """The tab labels a page's blocks are in, in order of appearance; ``[None]`` for none."""
    labels: list[str | None] = list(dict.fromkeys(block.tab for block in blocks if block.tab))
    return labels or [None]


def moved(code: str, ports: dict[str, str]) -> str:
    """``code`` with each documented port moved to its free one, and nothing else changed."""
    return PORT_WORD.sub(lambda word: ports[word[1]], code)


def script(blocks: list[Block], variant: str | None, ports: dict[str, str]) -> str:
    """The page's blocks of ``variant`` as one ``sh`` script: each block that runs (its ports
    moved), each file the reader saves written, each block's start said on stderr."""
    parts = ["set -e"]
    for block in blocks:
        if block.tab not in (None, variant) or block.exempt is not None:
            continue
        if block.is_shell:
            parts.append(f"echo {shlex.quote(f'>>> {block.id}')} >&2")
            parts.append(moved(block.code, ports))
        elif block.saved_as is not None:
            content = block.shown()
            end = "PAYSDK_DOCS_END_OF_FILE"
            assert end not in content
            name = shlex.quote(block.saved_as)
            parts.append(f'mkdir -p "$(dirname {name})"')
            parts.append(f"cat > {name} <<'{end}'\n{content.rstrip()}\n{end}")
    return "\n".join(parts) + "\n"


# --- running a page ---------------------------------------------------------------------------

PIP = """#!{python}
# `pip install ...` as the docs tests mean it: python-paysdk is the wheel built from this
# checkout (with the extras named), everything else comes from uv's cache, at the versions the
# tests' own environment has (which uv installed, so its cache holds them); into the venv whose
# `python` is first on PATH (an activated one, else the run's own).
import os, re, shutil, sys
arguments = sys.argv[1:]
if arguments[:1] != ["install"]:
    sys.exit("pip: the docs tests know `pip install` alone")
named = [
    re.sub(r"(?i)^python[-_.]paysdk(?=\\[|$)", {wheel!r}, argument) for argument in arguments[1:]
]
here = os.path.dirname(os.path.abspath(__file__))
path = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep) if d and d != here)
python = shutil.which("python", path=path)
uv = [{uv!r}, "pip", "install", "--quiet", "--offline", "--constraint", {constraints!r}]
os.execv(uv[0], [*uv, "--python", python, *named])
"""
PYTHON = """#!{python}
# `python` before any venv is activated: the run's own venv's, and `python -m venv DIR` makes a
# venv whose `pip install` is the one above (uv's, through its cache, not PyPI).
import os, sys
arguments = sys.argv[1:]
if arguments[:2] == ["-m", "venv"] and len(arguments) == 3:
    os.execv({uv!r}, [{uv!r}, "venv", "--quiet", "--python", {base!r}, arguments[2]])
os.execv({base!r}, [{base!r}, *arguments])
"""


def write_shims(bin_dir: Path, *, wheel: Path, uv: str, python: str, base: Path) -> None:
    """``pip``, ``python`` and ``python3`` for a run, in ``bin_dir`` (first on its PATH);
    ``python`` is the interpreter the shims themselves run on, ``base`` the run's venv's."""
    bin_dir.mkdir(parents=True)
    constraints = bin_dir / "constraints.txt"
    constraints.write_text(
        "".join(
            f"{distribution.metadata['Name']}=={distribution.version}\n"
            for distribution in importlib.metadata.distributions()
            if distribution.metadata["Name"] != "python-paysdk"
        ),
        encoding="utf-8",
    )
    shims = {
        "pip": PIP.format(python=python, wheel=str(wheel), uv=uv, constraints=str(constraints)),
        "python": PYTHON.format(python=python, uv=uv, base=str(base)),
    }
    shims["pip3"], shims["python3"] = shims["pip"], shims["python"]
    for name, text in shims.items():
        (bin_dir / name).write_text(text, encoding="utf-8")
        (bin_dir / name).chmod(0o755)


@dataclasses.dataclass
class Run:
    """What a page's script did, its free ports put back as the page names them."""

    returncode: int | None  # None: it did not finish in time
    stdout: str
    stderr: str
    left_running: list[str]


def put_back(text: str, ports: dict[str, str]) -> str:
    for documented, free in ports.items():
        text = re.sub(rf"\b{free}\b", documented, text)
    return text


def expected_lines(blocks: list[Block], variant: str | None) -> list[tuple[str, str]]:
    """Each line of the ```` ```text ```` blocks that follow a block that runs (nothing but prose
    between them), with that text block's id: what the page says its commands print; ``...``
    stands for what changes from run to run (pids, keys, free ports)."""
    found: list[tuple[str, str]] = []
    after_command = False
    for block in blocks:
        if block.tab not in (None, variant):
            continue
        if block.lang == "text" and after_command:
            found += [(block.id, line) for line in block.code.splitlines() if line.strip()]
            continue
        after_command = block.is_shell and block.exempt is None
    return found


def shown_by(expected: str, lines: list[str]) -> bool:
    """Whether an output line is ``expected``, where its ``...`` stand for anything."""
    pattern = re.compile(".*".join(re.escape(part) for part in expected.strip().split("...")))
    return any(pattern.fullmatch(line.strip()) for line in lines)


def group_members(pgid: int) -> dict[int, str]:
    """The live processes of process group ``pgid`` (Linux's /proc), with their command lines."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # it ended meanwhile
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found[int(entry.name)] = command.strip()
    return found


TIMEOUT = 120
"""Seconds a page may take: a first hour takes about 20 here, installs included; one that
starts a server in the foreground never ends, and fails at this."""


def run_script(text: str, *, cwd: Path, env: dict[str, str], runtime: Path) -> Run:
    """``text`` under ``sh`` in a process group of its own; then everything it left running (in
    that group, or a sandbox in the ``runtime`` directory) is named in ``left_running`` and
    killed, whether the script succeeded, failed or ran out of time."""
    out, err = cwd.parent / f"{cwd.name}.stdout", cwd.parent / f"{cwd.name}.stderr"
    returncode: int | None = None
    # Output to files, not pipes: a process the script left running would hold a pipe open.
    with out.open("w") as stdout, err.open("w") as stderr:
        shell = subprocess.Popen(
            ["sh", "-c", text], cwd=cwd, env=env, stdout=stdout, stderr=stderr,
            start_new_session=True,
        )  # fmt: skip
        try:
            returncode = shell.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
        finally:
            left = stop_everything(shell.pid, runtime)
            shell.wait()
    return Run(returncode, out.read_text(), err.read_text(), left)


def stop_everything(pgid: int, runtime: Path) -> list[str]:
    """Kill what is left of process group ``pgid`` and the sandboxes with a pid file in
    ``runtime``, after giving them 5 seconds to end of their own (a stopped app may take a
    moment); return what was left, as pid and command line."""
    deadline = time.monotonic() + 5
    while True:
        left = {pid: command for pid, command in group_members(pgid).items() if pid != pgid}
        for pid_file in runtime.glob("sandbox-*.pid"):
            pid = json.loads(pid_file.read_text())["pid"]
            if alive(pid):
                left[pid] = f"the sandbox of {pid_file.name}"
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in left) and time.monotonic() < deadline:
        time.sleep(0.05)  # gone before the test ends: nothing holds its files or ports then
    return [f"{pid}: {command}" for pid, command in left.items()]

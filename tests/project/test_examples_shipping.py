"""The example apps ship in the sdist, beside the docs that show them, and stay out of the wheel.

They are programs to read and copy (docs/examples.md says so), each needing a framework paysdk
does not depend on: in the wheel they would be modules nobody imports. The sdist carries them
with docs/ and mkdocs.yml, so the docs build from it shows the same files.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(path.name for path in (ROOT / "examples").glob("*.py"))


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    return out


def test_there_are_examples() -> None:
    assert {"quickstart.py", "flask_callback.py", "django_callback.py"} <= set(EXAMPLES)


def test_the_sdist_ships_each_example_with_the_docs_that_show_it(dist: Path) -> None:
    (sdist,) = dist.glob("python_paysdk-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {f"examples/{name}" for name in EXAMPLES} <= names
    assert {"docs/examples.md", "docs/callbacks.md", "mkdocs.yml"} <= names


def test_the_wheel_ships_no_examples(dist: Path) -> None:
    (wheel,) = dist.glob("python_paysdk-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert not [name for name in names if "examples" in name or name.endswith(tuple(EXAMPLES))]


def test_the_examples_page_says_where_they_are_and_why_not_in_the_wheel() -> None:
    page = " ".join((ROOT / "docs" / "examples.md").read_text(encoding="utf-8").split())
    assert "in the source distribution" in page
    assert "not in the wheel" in page
    for name in EXAMPLES:
        assert f"examples/{name}" in page

"""The README is a user's front page, the docs link by title, and each table lives on one page."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import paysdk
from paysdk.integrations.fastapi import verified_callback

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_LIMIT = 8_704  # 8.5 KiB: what it is, install, a quickstart, make, and where to read on
LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)")
FILE_NAME = re.compile(r"`?[\w./-]+\.md(?:#[\w-]*)?`?")
ERROR_ROW = re.compile(r"^\| `\w+Error`")


def error_tables(text: str) -> int:
    """How many tables of the text list ten exceptions or more: the errors table, copied."""
    tables = re.split(r"\n(?!\|)", text)
    return sum(
        1
        for table in tables
        if sum(1 for line in table.splitlines() if ERROR_ROW.match(line)) >= 10
    )


def test_the_readme_is_short() -> None:
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes: move the detail into docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_links_read_as_titles_not_file_names(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    named = [match[0] for match in LINK.finditer(text) if FILE_NAME.fullmatch(match[1])]
    assert named == [], f"{page.name}: links whose text is a file name"


def test_the_errors_table_is_on_one_page() -> None:
    found = {page.name: error_tables(page.read_text("utf-8")) for page in PAGES}
    assert {name: count for name, count in found.items() if count} == {"errors.md": 1}


def test_the_checks_see_what_they_guard_against() -> None:
    assert FILE_NAME.fullmatch("fulfilment.md") and FILE_NAME.fullmatch("`docs/cli.md`")
    assert not FILE_NAME.fullmatch("Fulfilment")
    rows = "\n".join(f"| `E{n}Error` | when | no |" for n in range(12))
    assert error_tables(f"text\n\n| Exception | When |\n|---|---|\n{rows}\n\nmore") == 1


def test_the_configuration_table_lists_every_argument_of_the_clients() -> None:
    """docs/configuration.md's first table is where a newcomer looks an option up: each keyword
    argument of ``Client`` and ``AsyncClient`` has its row, and no row names one they lack."""
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    table = text.split("| Argument |", 1)[1].split("\n\n", 1)[0]
    rows = set(re.findall(r"^\| `(\w+)` \|", table, flags=re.MULTILINE))
    arguments = {
        name
        for client in (paysdk.Client, paysdk.AsyncClient)
        for name in inspect.signature(client).parameters
    }
    assert rows == arguments


HELPER_TEXTS = [
    *PAGES,
    *sorted((ROOT / "examples").glob("*.py")),
    *sorted((ROOT / "src" / "paysdk" / "integrations").rglob("*.py")),
]
NAMES_A_HELPER = re.compile(r"_callback\.py|verified_callback|helper")
HELPER_KIND = re.compile(r"\b(?:a|an|the)(?: [\w'`]+)? (decorator|dependency|middleware)\b", re.I)
"""What a text calls a callback helper: ``the same decorator``, ``a FastAPI dependency``..."""


def test_the_callback_helpers_are_called_what_they_are_everywhere() -> None:
    """callbacks.md says each framework's helper is a decorator; nothing calls one otherwise."""
    callbacks = (ROOT / "docs" / "callbacks.md").read_text(encoding="utf-8")
    defined = re.search(r"Each framework has the same (\w+)", callbacks)
    assert defined is not None and defined[1] == "decorator"
    named = {}
    for path in HELPER_TEXTS:
        for part in re.split(r"\n\s*\n|\n(?=\|)", path.read_text(encoding="utf-8")):
            if NAMES_A_HELPER.search(part):
                for kind in HELPER_KIND.finditer(part):
                    named[f"{path.relative_to(ROOT)}: {kind[0]!r}"] = kind[1].lower()
    assert named, "no text names what the helpers are"
    wrong = [where for where, kind in named.items() if kind != defined[1]]
    assert not wrong, wrong


def test_the_fastapi_helper_is_a_decorator() -> None:
    """It takes the endpoint and gives back the endpoint to route, as callbacks.md shows."""
    with paysdk.Client(secret_key="sk_test_decorator", base_url="http://127.0.0.1:9") as client:
        endpoint = verified_callback(client, lookup=no_order)(payment_callback)
    assert callable(endpoint)
    assert endpoint.__name__ == "payment_callback"


def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
    return {"status": "ok"}


def no_order(reference: str) -> None:
    return None

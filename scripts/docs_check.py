"""``make docs-check``: the documentation's pages as headless Chromium renders them.

Give it the site ``make docs`` built. In each page's rendered DOM it looks for what a reader would
see broken, and fails naming it:

- reStructuredText left raw by the Markdown renderer (``:class:`Client```, a lone ``::`` line);
- a private module path or base class in the reference (``paysdk._errors.APIError``);
- a name in a table's first column broken over two lines (each name must be one box);
- a line of a code block wrapped onto a second line (it would start at column 0 and read as
  broken indentation: long lines scroll sideways instead).

Each page is looked at 1280 and 800 pixels wide, and screenshots of some are left in
``.docs-check/``.

Chromium is Debian's ``chromium`` package, driven by playwright (which then downloads no browser).
With ``--install`` apt-get installs it where it is missing on Debian or Ubuntu; elsewhere set
``CHROMIUM`` to a Chromium or Chrome binary.

Usage: ``python scripts/docs_check.py [--install] SITE_DIR``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from find_postgres import apt_install, is_debian

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

__all__ = [
    "PAGES",
    "PRIVATE_NAME",
    "RAW_ROLE",
    "Measured",
    "find_chromium",
    "main",
    "problems",
    "raw_markup",
]

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / ".docs-check"
WIDTHS = (1280, 800)

PAGES: dict[str, list[str] | None] = {
    "index": [],
    "first-hour": [],
    "configuration": [],
    "callbacks": [],
    "reference": ["paysdk.Client", "paysdk.CallOptions", "paysdk.ledger.Ledger"],
    **dict.fromkeys(
        ("payments", "errors", "observability", "fulfilment", "testing", "examples", "cli")
    ),
    **dict.fromkeys(("sandbox", "performance", "design", "support")),
}
"""Each page looked at, with the anchors its screenshots are taken at (``[]``: the whole page;
``None``: no screenshot)."""

MIN_TABLE_NAMES = {"configuration": 10, "reference": 100}
"""Fewer names than this in a page's tables means the tables did not render."""

PRIVATE_NAME = re.compile(r"(?<![\w/])_[A-Za-z]\w*\.[A-Za-z_]|Bases:\s*(?:<[^>]*>\s*)*_\w")
"""A private module path (``paysdk._errors.APIError``, ``_schema.DEFAULT_TABLE``) or a private
base class, in a page's text or its HTML (links, anchors and hover titles)."""

RAW_ROLE = re.compile(r":(?:class|func|meth|attr|mod|data|exc|obj):(?:`|<code>)")
"""What a reStructuredText role looks like in HTML once Markdown has rendered it."""

_ROLE_TEXT = re.compile(r":(?:class|func|meth|attr|mod|data|exc|obj|ref):`?\S")
_LITERAL_BLOCK_TEXT = re.compile(r"^\s*::\s*$|\S::\s*$", re.MULTILINE)


def raw_markup(text: str) -> list[str]:
    """The reStructuredText a page's visible text shows: roles and literal-block markers.

    Args:
        text: the page's text as a reader sees it.

    Returns:
        Each piece of raw markup, with a little of what surrounds it.
    """
    return [
        text[max(0, match.start() - 20) : match.end() + 20].strip()
        for pattern in (_ROLE_TEXT, _LITERAL_BLOCK_TEXT)
        for match in pattern.finditer(text)
    ]


@dataclass(frozen=True)
class Measured:
    """What the browser measured of one page at one width."""

    page: str
    width: int
    text: str
    """The article's text, as rendered."""
    table_names: Sequence[tuple[str, int]]
    """Each ``code`` in a table's first column, with how many boxes (lines) it takes."""
    wrapped_code: Sequence[str]
    """The start of each code line the browser wrapped onto more than one line."""


def problems(measured: Measured) -> list[str]:
    """What a reader would see broken in a rendered page, one sentence each.

    Args:
        measured: the page, as the browser measured it.

    Returns:
        Nothing when the page is whole.
    """
    where = f"{measured.page}.html at {measured.width}px"
    found = [f"{where}: raw reStructuredText {piece!r}" for piece in raw_markup(measured.text)]
    if measured.page == "reference":
        text = measured.text
        found += [
            f"{where}: a private name in {text[max(0, match.start() - 20) : match.end() + 20]!r}"
            for match in PRIVATE_NAME.finditer(text)
        ]
    found += [
        f"{where}: the table name {name!r} breaks over {boxes} lines"
        for name, boxes in measured.table_names
        if boxes != 1
    ]
    wanted = MIN_TABLE_NAMES.get(measured.page, 0)
    if len(measured.table_names) < wanted:
        found.append(
            f"{where}: {len(measured.table_names)} names in its tables, fewer than {wanted}:"
            " the tables did not render"
        )
    found += [f"{where}: a code line wraps: {start!r}" for start in measured.wrapped_code]
    return found


_TABLE_NAMES = """codes => codes.map(code => [code.textContent, code.getClientRects().length])"""
_WRAPPED_CODE = """codes => codes.flatMap(code => {
    const texts = [];
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) texts.push(node);
    const at = position => {
        for (const node of texts) {
            if (position <= node.length) return [node, position];
            position -= node.length;
        }
        const last = texts[texts.length - 1];
        return [last, last.length];
    };
    const wrapped = [];
    let start = 0;
    for (const line of code.textContent.split("\\n")) {
        if (line.trim()) {
            const range = document.createRange();
            range.setStart(...at(start));
            range.setEnd(...at(start + line.length));
            const bottoms = [...range.getClientRects()]
                .filter(rect => rect.width > 0)
                .map(rect => rect.bottom)
                .sort((a, b) => a - b);
            if (bottoms.length && bottoms[bottoms.length - 1] - bottoms[0] > 4) {
                wrapped.push(line.slice(0, 60));
            }
        }
        start += line.length + 1;
    }
    return wrapped;
})"""
"""Each code line whose text the browser laid out on more than one line."""


def page_uri(site: Path, page: str) -> str:
    """The ``file://`` address of a built page, whether ``site`` is relative (``make``'s
    ``site``) or absolute.

    Args:
        site: the built site's directory.
        page: the page's path in it, without ``.html``.

    Returns:
        The page's absolute ``file://`` URI.
    """
    return (site / f"{page}.html").resolve().as_uri()


def measure(view: Page, page: str, width: int) -> Measured:
    """Lay ``page``, loaded in ``view``, out at ``width`` and measure it; leave its screenshots
    in ``.docs-check/``."""
    view.set_viewport_size({"width": width, "height": 900})
    measured = Measured(
        page=page,
        width=width,
        text=view.inner_text("article"),
        table_names=[
            (str(name), int(boxes))
            for name, boxes in view.eval_on_selector_all(
                "article table td:first-child code", _TABLE_NAMES
            )
        ],
        wrapped_code=[
            str(start) for start in view.eval_on_selector_all("pre > code", _WRAPPED_CODE)
        ],
    )
    anchors = PAGES[page]
    if anchors == []:
        view.screenshot(path=str(SCREENSHOTS / f"{page}-{width}.png"), full_page=True)
    for anchor in anchors or []:
        view.locator(f'[id="{anchor}"]').scroll_into_view_if_needed()
        view.screenshot(path=str(SCREENSHOTS / f"{page}-{anchor}-{width}.png"))
    return measured


def find_chromium(install: bool) -> str:
    """The Chromium to drive: ``$CHROMIUM``, else ``chromium`` on PATH (apt-get installs Debian's
    with ``install``).

    Args:
        install: on Debian or Ubuntu, install the ``chromium`` package when none is found.

    Returns:
        The browser's path.

    Raises:
        SystemExit: none found (or installed); the message says what to do.
    """
    chosen = (
        os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    )
    if chosen is None and install and is_debian():
        try:
            apt_install(["chromium"])
        except (OSError, subprocess.CalledProcessError) as exc:
            raise SystemExit(f"error: apt-get could not install chromium ({exc})") from None
        chosen = shutil.which("chromium")
    if chosen is None:
        raise SystemExit(
            "error: make docs-check renders the docs in headless Chromium and found none: "
            + (
                "install it with `sudo apt-get install chromium`"
                if is_debian()
                else "install Chromium or Chrome and set CHROMIUM to its path"
            )
        )
    return chosen


_LONG_LINE = "    value = " + " + ".join(f"part_{n}" for n in range(40))
WRAP_SAMPLE = f"""<pre><code style="white-space: pre-wrap">def kept():\n{_LONG_LINE}</code></pre>
<pre><code style="white-space: pre; overflow-x: auto">def scrolled():\n{_LONG_LINE}</code></pre>"""
"""A wrapped block and a scrolling one with the same long line: only the first one wraps."""


def sees_wrapped_lines(browser: Browser) -> list[str]:
    """Nothing when the wrapped-line measure finds exactly the wrapped line of ``WRAP_SAMPLE``
    in this browser, laid out again at a narrower width after loading (as each page is); else
    why the check cannot be trusted."""
    view = browser.new_page(viewport={"width": 3840, "height": 600})
    try:
        view.set_content(WRAP_SAMPLE)
        view.set_viewport_size({"width": 800, "height": 600})  # as measure() lays pages out
        seen = view.eval_on_selector_all("pre > code", _WRAPPED_CODE)
    finally:
        view.close()
    if seen == [_LONG_LINE[:60]]:
        return []
    return [f"docs-check: this browser's wrapped code lines are not measured right ({seen!r})"]


def check(site: Path, chromium: str) -> list[str]:
    """Every problem the rendered pages show, at every width."""
    from playwright.sync_api import sync_playwright

    SCREENSHOTS.mkdir(exist_ok=True)
    found: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            found += sees_wrapped_lines(browser)
            # one tab, each page loaded once and laid out at each width: a page's load (its
            # scripts, styles and fonts) costs several times its layout
            view = browser.new_page()
            for page in PAGES:
                view.goto(page_uri(site, page))
                for width in WIDTHS:
                    found += problems(measure(view, page, width))
        finally:
            browser.close()
    return found


def main(argv: Iterable[str] | None = None) -> int:
    """Check the pages; print each problem and return 1, or return 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("site", type=Path, help="the built site (make docs: site/)")
    parser.add_argument(
        "--install", action="store_true", help="on Debian or Ubuntu, apt-get chromium if missing"
    )
    args = parser.parse_args(None if argv is None else list(argv))
    missing = [page for page in PAGES if not (args.site / f"{page}.html").is_file()]
    if missing:
        print(f"error: no {', '.join(missing)} page in {args.site}: run make docs", file=sys.stderr)
        return 1
    found = check(args.site, find_chromium(args.install))
    for problem in found:
        print(problem, file=sys.stderr)
    if found:
        return 1
    print(f"docs-check: {', '.join(PAGES)} render whole; screenshots in {SCREENSHOTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

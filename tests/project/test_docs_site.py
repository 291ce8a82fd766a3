"""The documentation site builds with ``mkdocs build --strict``, offline, with every page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.make import dry_run
from tests.support.mkdocs import build_site
from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]

PAGES = [
    "first-hour", "payments", "configuration", "errors", "callbacks", "fulfilment", "testing",
    "examples", "cli", "sandbox", "performance", "design", "reference", "changelog",
]  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = build_site(ROOT, out)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr
    return out


def page(site: Path, name: str) -> str:
    return (site / f"{name}.html").read_text(encoding="utf-8")


def test_every_page_of_the_nav_is_built(site: Path) -> None:
    assert "python-paysdk" in (site / "index.html").read_text(encoding="utf-8")
    for name in PAGES:
        assert (site / f"{name}.html").is_file(), name


def test_the_api_reference_is_generated_from_the_docstrings(site: Path) -> None:
    reference = page(site, "reference")
    assert "Whether the service reports this payment as successful." in reference
    for anchor in [
        "paysdk.Client.verify_callback",
        "paysdk.AsyncClient",
        "paysdk.PaymentMismatchError",
        "paysdk.integrations.fastapi.verified_callback",
        "paysdk.sandbox.Sandbox",
    ]:
        assert f'id="{anchor}"' in reference


def test_the_first_hour_shows_each_framework_in_a_tab_with_its_app(site: Path) -> None:
    first_hour = page(site, "first-hour")
    assert first_hour.count('class="tabbed-set') >= 5  # install, app, start, pay, ledger
    for label, app in [("Flask", "flask"), ("FastAPI", "fastapi"), ("Django", "django")]:
        assert f">{label}</label>" in first_hour
        assert f">{app}_callback.py</span>" in first_hour  # the file's name, over its code
    assert "--8&lt;--" not in first_hour and "=== " not in first_hour


def test_the_changelog_page_is_the_changelog(site: Path) -> None:
    changelog = page(site, "changelog")
    assert "Unreleased" in changelog
    assert "Keep a Changelog" in changelog


def test_pages_load_nothing_from_the_web(site: Path) -> None:
    """No web fonts, analytics or scripts from elsewhere: the site works offline too."""
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        external = re.findall(r"<(?:script|link|img)[^>]*(?:src|href)=\"(https?:)?//[^\"]*", text)
        assert not external, (html, external)
        assert "fonts.googleapis.com" not in text


SEARCH_INDEX_SCRIPT = "var __index = "


def test_search_works_opened_from_disk(site: Path) -> None:
    """Over file:// the theme loads the index as a script and runs its worker in an iframe.

    Browsers refuse fetch() and Web Workers on file:// pages: the offline plugin writes the
    index into search/search_index.js, and each page loads the iframe-worker shim from the site.
    """
    script = (site / "search" / "search_index.js").read_text(encoding="utf-8")
    assert script.startswith(SEARCH_INDEX_SCRIPT)
    index = json.loads(script.removeprefix(SEARCH_INDEX_SCRIPT))
    assert index == json.loads((site / "search" / "search_index.json").read_text("utf-8"))
    found = {entry["location"].split("#")[0] for entry in index["docs"]}
    assert {f"{name}.html" for name in PAGES} <= found
    assert any("verify_callback" in entry["text"] for entry in index["docs"])
    shim = site / "assets" / "javascripts" / "iframe-worker-shim.js"
    assert "window.Worker = IFrameWorker" in shim.read_text(encoding="utf-8")
    for html in [site / "index.html", *(site / f"{name}.html" for name in PAGES)]:
        assert '<script src="assets/javascripts/iframe-worker-shim.js">' in html.read_text("utf-8")


def test_make_docs_serve_serves_the_site_on_loopback(tmp_path: Path) -> None:
    """On 8100: 8000, mkdocs's own default, is the Flask example's (and most dev servers')."""
    serve = dry_run("docs-serve", tmp_path)[-1]
    assert re.search(r"mkdocs serve .*--dev-addr 127\.0\.0\.1:8100", serve)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make docs-serve" in readme
    assert "http://127.0.0.1:8100" in readme


def test_the_callback_page_shows_the_example_files_themselves(site: Path) -> None:
    callbacks = page(site, "callbacks")
    for example in ("flask_callback", "django_callback", "fastapi_callback"):
        source = (ROOT / "examples" / f"{example}.py").read_text(encoding="utf-8")
        first_code_line = next(line for line in source.splitlines() if line.startswith("client ="))
        assert f"examples/{example}.py" in callbacks
        words = re.findall(r"\w+", first_code_line)
        assert all(word in callbacks for word in words), example
    assert "examples/quickstart.py" in page(site, "examples")
    assert "CALLBACK_PATH" in page(site, "examples")


# The patterns `make docs-check` looks for in the rendered pages, here in the built HTML.
DOCS_CHECK = load_script("docs_check")
PRIVATE_NAME: re.Pattern[str] = DOCS_CHECK.PRIVATE_NAME
RAW_ROLE: re.Pattern[str] = DOCS_CHECK.RAW_ROLE


def test_the_api_reference_names_no_private_module_or_base(site: Path) -> None:
    reference = page(site, "reference")
    found = sorted({match.group() for match in PRIVATE_NAME.finditer(reference)})
    assert not found, found


def test_the_private_name_check_finds_what_the_reference_once_showed() -> None:
    for html in [
        'Bases: <code><span title="x">_BaseLedger</span></code>',
        "table: str = _schema.DEFAULT_TABLE",
        'title="APIError (paysdk._errors.APIError)"',
        "-&gt; _drive.ItemIterator[ListedPayment]",
    ]:
        assert PRIVATE_NAME.search(html), html
    assert not PRIVATE_NAME.search("POST /_sandbox/faults and __cause__ and paysdk.Client")


def test_no_page_shows_restructuredtext_roles(site: Path) -> None:
    for html in site.glob("*.html"):
        text = html.read_text(encoding="utf-8")
        assert not RAW_ROLE.findall(text), html.name


def test_the_reference_shows_what_signatures_use_and_what_private_bases_define(site: Path) -> None:
    reference = page(site, "reference")
    for anchor in [
        "paysdk.CallOptions",
        "paysdk.Lookup",
        "paysdk.TimeoutTypes",
        "paysdk.VerifyTypes",
        "paysdk.Client.with_options",  # defined by the clients' private base
        "paysdk.ledger.Ledger.resolve",  # likewise, the ledgers'
        "paysdk.ledger.DEFAULT_TABLE",
    ]:
        assert f'id="{anchor}"' in reference, anchor
    assert 'href="#paysdk.CallOptions"' in reference  # linked from the methods' signatures
    assert "paysdk_fulfilments" in reference  # the table's default shown as its value


def text_of(html: str) -> str:
    """What a reader sees of some HTML: its text, entities left as they are."""
    return re.sub(r"<[^>]+>", "", html)


def entry(reference: str, anchor: str) -> str:
    """The HTML of one object's entry in the reference, up to the next entry of its level."""
    start = reference.index(f'id="{anchor}"')
    level = reference.rindex("<h", 0, start)
    tag = reference[level : level + 3]
    end = reference.find(f"{tag} ", start)
    return reference[start : end if end != -1 else len(reference)]


def test_the_reference_shows_the_value_of_a_constant_made_of_public_names(site: Path) -> None:
    alarms = text_of(entry(page(site, "reference"), "paysdk.ledger.ALARMS"))
    assert "ALARMS = ..." not in alarms
    for kind in ("NOT_COMPLETED", "NOT_LISTED", "MISMATCH", "UNKNOWN"):
        assert f"Kind.{kind}" in alarms, alarms


def test_the_reference_links_the_pages_its_docstrings_point_to(site: Path) -> None:
    reference = page(site, "reference")
    mentioned = re.findall(r"docs/\w+\.md", text_of(reference))
    assert not mentioned, f"pages named as plain text, not linked: {mentioned}"
    ledger = entry(reference, "paysdk.ledger")
    assert 'href="fulfilment.html"' in ledger
    assert 'href="callbacks.html#the-fulfilment-rule-only-a-success-is-recorded"' in reference
    assert 'id="the-fulfilment-rule-only-a-success-is-recorded"' in page(site, "callbacks")


def test_the_reference_shows_each_sync_class_before_its_async_twin(site: Path) -> None:
    reference = page(site, "reference")
    anchors = re.findall(r'id="(paysdk[\w.]*)"', reference)
    for anchor in anchors:
        module, _, name = anchor.rpartition(".")
        twin = f"{module}.{name.removeprefix('Async')}"
        if name.startswith("Async") and twin in anchors:
            assert anchors.index(twin) < anchors.index(anchor), (twin, anchor)
    assert anchors.index("paysdk.ledger.Ledger") < anchors.index("paysdk.ledger.AsyncLedger")


def test_the_reference_lists_what_a_mixin_gives_first_and_once(site: Path) -> None:
    """``fulfil_once`` comes from a private mixin (``ledger/_twins.py``): each ledger lists it
    first, as it did when the ledger defined it, and the SQLAlchemy ledgers, which have it from
    the public ``Ledger`` and ``AsyncLedger``, leave it to them."""
    anchors = re.findall(r'id="(paysdk[\w.]*)"', page(site, "reference"))
    for ledger in ("paysdk.ledger.Ledger", "paysdk.ledger.AsyncLedger"):
        methods = [anchor for anchor in anchors if anchor.startswith(f"{ledger}.")]
        assert methods[0] == f"{ledger}.fulfil_once", methods
    for ledger in ("SQLAlchemyLedger", "AsyncSQLAlchemyLedger"):
        assert f"paysdk.ledger.sqlalchemy.{ledger}" in anchors
        assert f"paysdk.ledger.sqlalchemy.{ledger}.fulfil_once" not in anchors


def parameter_defaults(html: str) -> dict[str, str]:
    """Each row of the first parameters table in ``html``: its name and its Default cell's text."""
    table = html[: html.index("</table>")]
    rows = re.findall(r'<tr class="doc-section-item">(.*?)</tr>', table, flags=re.DOTALL)
    cells = [re.findall(r"<td>(.*?)</td>", row, flags=re.DOTALL) for row in rows]
    return {text_of(row[0]).strip(): " ".join(text_of(row[-1]).split()) for row in cells}


def test_the_client_table_states_the_defaults_the_environment_may_replace(site: Path) -> None:
    reference = page(site, "reference")
    for client in ("paysdk.Client", "paysdk.AsyncClient"):
        defaults = parameter_defaults(entry(reference, client))
        assert defaults["timeout"] == "$PAYSDK_TIMEOUT, else 30 s (5 s to connect)", defaults
        assert defaults["max_retries"] == "$PAYSDK_MAX_RETRIES, else 2", defaults
        assert "NOT_GIVEN" not in defaults.values()

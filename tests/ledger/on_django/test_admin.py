"""The ledger's read-only admin, through Django's test client: each state its filter shows, the
expired claim (``unknown`` only by the database's clock) included."""

from __future__ import annotations

import datetime as dt
import re
import time

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.test import Client as DjangoClient
from django.urls import path
from django.utils import timezone

from paysdk.integrations.django import DjangoLedger
from paysdk.integrations.django.admin import FulfilmentAdmin, with_current_state
from paysdk.integrations.django.models import Fulfilment
from tests.support.django_site import serve, url_of
from tests.support.either_ledger import paid
from tests.support.ledger_worker import abandon_claim

REFERENCES = {
    "fulfilled": "order-shipped",
    "claimed": "order-shipping",
    "released": "order-failed",
    "unknown": "order-lost",
    "refused": "order-refused",
    "ignored": "order-ignored",
}


def fill(using: str) -> None:
    """One payment in each state, made as the ledger makes them where it does."""
    ledger = DjangoLedger(using)
    ledger.fulfil_once(paid(REFERENCES["fulfilled"]), lambda payment: None)

    def broken(payment: object) -> None:
        raise RuntimeError("warehouse offline")

    with pytest.raises(RuntimeError):
        ledger.fulfil_once(paid(REFERENCES["released"]), broken)
    abandon_claim(url_of(using), REFERENCES["claimed"], lease=600)
    abandon_claim(url_of(using), REFERENCES["unknown"], lease=0.2)
    ledger.refuse(paid(REFERENCES["refused"]), "refused by the fraud rules")  # as a view's 4xx
    ledger.ignore(REFERENCES["ignored"], "ignored by the fraud rules")  # a person, by reference
    time.sleep(0.4)  # the abandoned short lease runs out


def test_the_state_the_ledger_reads_on_either_database(using: str) -> None:
    fill(using)
    rows = with_current_state(Fulfilment.objects.using(using).all())
    assert {row.reference: row.current_state for row in rows} == {  # type: ignore[attr-defined]
        reference: state for state, reference in REFERENCES.items()
    }
    assert {
        r.reference: r.state for r in DjangoLedger(using).rows(list(REFERENCES.values())).values()
    } == {reference: state for state, reference in REFERENCES.items()}


def shown(html: str) -> set[str]:
    """The references the changelist lists."""
    return set(re.findall(r'class="field-payment"><a [^>]*>([^<]+)<', html))


@pytest.fixture
def browser(django_sqlite: str) -> DjangoClient:
    """Django's test client, logged in to the admin as a superuser; the ledger filled anew."""
    Fulfilment.objects.all().delete()
    fill(django_sqlite)
    serve(path("admin/", admin.site.urls))
    client = DjangoClient()
    user = User.objects.filter(username="ops").first()
    client.force_login(user or User.objects.create_superuser("ops", "ops@example.com", "x"))
    return client


def test_the_changelist_filters_each_state(browser: DjangoClient) -> None:
    assert isinstance(admin.site._registry[Fulfilment], FulfilmentAdmin)
    everything = browser.get("/admin/paysdk/fulfilment/")
    assert everything.status_code == 200
    assert shown(everything.content.decode()) == set(REFERENCES.values())
    for state, reference in REFERENCES.items():
        page = browser.get("/admin/paysdk/fulfilment/", {"state": state})
        assert page.status_code == 200
        html = page.content.decode()
        assert shown(html) == {reference}, state
        assert re.search(r'class="field-state_now">' + state + "<", html), state
    for state in ("refused", "ignored"):  # set aside, with the reason why
        listed = browser.get("/admin/paysdk/fulfilment/", {"state": state}).content.decode()
        assert re.search(r'class="field-reason">' + state + " by the fraud rules<", listed), state


def test_the_admin_is_read_only(browser: DjangoClient) -> None:
    shipped = REFERENCES["fulfilled"]
    assert browser.get("/admin/paysdk/fulfilment/add/").status_code == 403
    detail = browser.get(f"/admin/paysdk/fulfilment/{shipped}/change/")  # a bare reference
    assert detail.status_code == 200
    assert 'name="_save"' not in detail.content.decode()
    assert shipped in detail.content.decode()
    refused = browser.post(f"/admin/paysdk/fulfilment/{shipped}/change/", {"state": "released"})
    assert refused.status_code == 403
    assert browser.post(f"/admin/paysdk/fulfilment/{shipped}/delete/").status_code == 403
    row = Fulfilment.objects.get(reference=shipped)
    assert row.state == "fulfilled"
    assert row.fulfilled_at is not None
    assert row.fulfilled_at > timezone.now() - dt.timedelta(minutes=1)


SHARED = "order/1042"
"""A reference two accounts share; a ``/`` in it too (the row's page names account first)."""


@pytest.fixture
def two_accounts(browser: DjangoClient, django_sqlite: str) -> DjangoClient:
    """The filled ledger, plus ``SHARED`` fulfilled by two labelled accounts and refused by
    the unlabelled one."""
    ledger = DjangoLedger(django_sqlite)
    for account in ("lagos-1", "abuja-2"):
        payment = paid(SHARED, amount=len(account) * 100).issued_by(account, f"key-{account}")
        assert ledger.fulfil_once(payment, lambda payment: None).fulfilled_now
    ledger.refuse(SHARED, "not ours")
    return browser


def links(html: str) -> dict[str, str]:
    """Each listed row's page, by the account the changelist shows beside it."""
    rows = re.findall(
        r'class="field-payment"><a href="([^"]+)">[^<]*</a></t[hd]>'
        r'<td class="field-account_shown">([^<]*)<',
        html,
    )
    return {account: page for page, account in rows}


def test_two_accounts_rows_of_one_reference_each_have_their_page(
    two_accounts: DjangoClient,
) -> None:
    listed = two_accounts.get("/admin/paysdk/fulfilment/", {"q": "1042"})
    assert listed.status_code == 200
    pages = links(listed.content.decode())
    assert set(pages) == {"lagos-1", "abuja-2", "(unlabelled)"}
    assert len(set(pages.values())) == 3
    for account, page in pages.items():
        detail = two_accounts.get(page)
        assert detail.status_code == 200, account
        html = detail.content.decode()
        labelled = account != "(unlabelled)"
        if labelled:  # Django shows an empty string as "-" or as nothing, by its version
            assert re.search(r'<div class="readonly">' + account + "</div>", html), account
        amount = str(len(account) * 100) if labelled else "0"
        assert re.search(r'<div class="readonly">' + amount + "</div>", html), account
    assert 'name="_save"' not in two_accounts.get(pages["lagos-1"]).content.decode()


def test_the_changelist_shows_and_filters_each_account(two_accounts: DjangoClient) -> None:
    everything = two_accounts.get("/admin/paysdk/fulfilment/").content.decode()
    assert 'href="?account=lagos-1"' in everything and 'href="?account=abuja-2"' in everything
    assert "(unlabelled)" in everything
    for account in ("lagos-1", "abuja-2"):
        page = two_accounts.get("/admin/paysdk/fulfilment/", {"account": account})
        assert links(page.content.decode()).keys() == {account}
        assert shown(page.content.decode()) == {SHARED}
    unlabelled = two_accounts.get("/admin/paysdk/fulfilment/", {"account": "_unlabelled"})
    assert shown(unlabelled.content.decode()) == {*REFERENCES.values(), SHARED}


def test_a_currency_of_a_look_alike_letter_is_shown_as_an_escape(
    browser: DjangoClient, django_sqlite: str
) -> None:
    """A payment refused for its currency, ``KES`` with a Kelvin sign (U+212A): the changelist
    and the row's page show the sign as an escape, never as ``KES``; a code in ASCII as it is."""
    DjangoLedger(django_sqlite).refuse(paid("order-kelvin", currency="\u212aES"), "currency")
    listed = browser.get("/admin/paysdk/fulfilment/", {"q": "kelvin"}).content.decode()
    assert re.search(r'class="field-currency_shown">\\u212aES<', listed)
    assert "\u212a" not in listed
    detail = browser.get("/admin/paysdk/fulfilment/order-kelvin/change/").content.decode()
    assert re.search(r'<div class="readonly">\\u212aES</div>', detail)
    assert "\u212a" not in detail
    shipped = browser.get(f"/admin/paysdk/fulfilment/{REFERENCES['fulfilled']}/change/")
    assert re.search(r'<div class="readonly">NGN</div>', shipped.content.decode())


def test_a_reference_holding_a_character_shown_as_nothing_is_listed_with_it_escaped(
    browser: DjangoClient, django_sqlite: str
) -> None:
    """A refused ``order-1042`` beside a fulfilled ``order-1042`` followed by a Hangul filler
    (a blank as wide as a letter) or the blank Braille pattern: the changelist shows each such
    character as an escape, as ``paysdk ledger list`` does, so the rows are told apart."""
    ledger = DjangoLedger(django_sqlite)
    ledger.refuse(paid("order-1042"), "no such order")
    for reference in ("order-1042\u3164", "order-1042\u2800"):
        ledger.fulfil_once(paid(reference), lambda payment: None)
    listed = browser.get("/admin/paysdk/fulfilment/", {"q": "1042"}).content.decode()
    assert shown(listed) == {"order-1042", "order-1042\\u3164", "order-1042\\u2800"}
    assert "\u3164" not in listed and "\u2800" not in listed


def test_a_reference_holding_a_character_shown_as_nothing_is_escaped_on_its_row_s_page(
    browser: DjangoClient, django_sqlite: str
) -> None:
    """The row's page of ``order-1042`` followed by a Hangul filler (its title, breadcrumbs and
    reference) shows the filler as an escape, as the changelist that links to it does."""
    DjangoLedger(django_sqlite).fulfil_once(paid("order-1042\u3164"), lambda payment: None)
    page = browser.get("/admin/paysdk/fulfilment/order-1042%E3%85%A4/change/")
    detail = page.content.decode()
    assert page.status_code == 200
    assert "order-1042\\u3164" in detail
    assert "\u3164" not in detail

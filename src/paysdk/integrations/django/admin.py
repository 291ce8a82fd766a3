"""A read-only admin of the ledger's table, registered when ``django.contrib.admin`` is installed.

The state shown is the ledger's (``DjangoLedger.state_sql``): an expired claim is ``unknown``,
which the stored ``state`` never says. The model's key is the reference alone, but a row is one
account's: its page is ``<account>/<reference>`` (a label has no ``/``), looked up by both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from django.apps import apps
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.db import connections
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from ...ledger._django import DjangoLedger
from .models import Fulfilment

if TYPE_CHECKING:  # the types django-stubs declares these options with
    from django.contrib.admin.options import _ListDisplayT, _ListFilterT
    from django.db.models.query import _OrderByFieldName
    from django.utils.datastructures import _ListOrTuple
    from django.utils.functional import _StrOrPromise

__all__ = ["AccountFilter", "FulfilmentAdmin", "StateFilter", "row_id"]

STATES = (
    ("fulfilled", "fulfilled"),
    ("claimed", "in progress (claimed)"),
    ("refused", "refused"),
    ("ignored", "ignored"),
    ("released", "released (will be retried)"),
    ("unknown", "unknown (claim expired: resolve it)"),
)


def with_current_state(queryset: QuerySet[Fulfilment]) -> QuerySet[Fulfilment]:
    """``queryset`` with each row's ``current_state``, read by its database's clock."""
    vendor = connections[queryset.db].vendor
    state = DjangoLedger.state_sql(vendor)  # the ledger's own SQL: constants, no caller input
    rows: Any = queryset  # django-stubs leaves annotate's result untyped
    annotated: QuerySet[Fulfilment] = rows.annotate(current_state=RawSQL(state, ()))  # noqa: S611
    return annotated


class StateFilter(admin.SimpleListFilter):
    """Filter by the state the ledger reads, ``unknown`` included."""

    title: _StrOrPromise | None = "state"
    parameter_name: str | None = "state"

    def lookups(self, request: HttpRequest, model_admin: Any) -> tuple[tuple[str, str], ...]:
        return STATES

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        rows: Any = queryset
        filtered: QuerySet[Any] = rows.filter(current_state=value) if value else queryset
        return filtered


UNLABELLED = "_unlabelled"
"""The account filter's value for the unlabelled account (``""``): no label starts with ``_``."""
UNLABELLED_SHOWN = "(unlabelled)"
"""How the admin names the unlabelled account, in its column and its filter alike (Django
shows an empty string differently from one version to the next)."""


class AccountFilter(admin.SimpleListFilter):
    """Filter by merchant account (``Client(account=...)``), the unlabelled one included."""

    title: _StrOrPromise | None = "account"
    parameter_name: str | None = "account"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        labels = model_admin.get_queryset(request).order_by("account").values_list("account")
        return [(label or UNLABELLED, label or UNLABELLED_SHOWN) for (label,) in labels.distinct()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if not value:
            return queryset
        rows: Any = queryset  # django-stubs leaves filter's result untyped for pyright
        filtered: QuerySet[Any] = rows.filter(account="" if value == UNLABELLED else value)
        return filtered


def row_id(row: Fulfilment) -> str:
    """The admin's name for ``row``: ``<account>/<reference>`` (the reference may hold ``/``;
    an account label never does)."""
    return f"{row.account}/{row.reference}"


if TYPE_CHECKING:
    _ModelAdmin = admin.ModelAdmin[Fulfilment]
else:  # not generic at run time
    _ModelAdmin = admin.ModelAdmin


class FulfilmentAdmin(_ModelAdmin):
    """The ledger's rows, read-only: the ledger alone writes them (``resolve`` settles one)."""

    list_display: _ListDisplayT[Fulfilment] = (
        "payment",
        "account_shown",
        "state_now",
        "amount",
        "currency_shown",
        "attempts",
        "fulfilled_at",
        "reason",
    )
    list_display_links: _ListDisplayT[Fulfilment] | None = None
    """``payment`` links each row by account and reference; Django's links would name the
    reference alone, which two accounts share."""
    readonly_fields: ClassVar[_ListOrTuple[str]] = ("reference_shown", "currency_shown")
    list_filter: ClassVar[_ListOrTuple[_ListFilterT]] = (StateFilter, AccountFilter)
    search_fields: ClassVar[_ListOrTuple[str]] = ("reference", "account")
    ordering: ClassVar[_ListOrTuple[_OrderByFieldName] | None] = ("-claimed_at",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Fulfilment]:
        return with_current_state(super().get_queryset(request))

    def get_fields(
        self, request: HttpRequest, obj: Fulfilment | None = None
    ) -> _ListOrTuple[str | _ListOrTuple[str]]:
        """A row's page shows the model's fields, the reference and currency in their places
        as ``reference_shown`` and ``currency_shown`` do."""
        shown: dict[object, str] = {"reference": "reference_shown", "currency": "currency_shown"}
        fields = [name for name in super().get_fields(request, obj) if name not in shown.values()]
        return [shown.get(name, name) for name in fields]

    def get_object(
        self, request: HttpRequest, object_id: str, from_field: str | None = None
    ) -> Fulfilment | None:
        """The row named ``<account>/<reference>`` (``object_id``'s form); a name without
        ``/`` is a reference of the unlabelled account."""
        if from_field is not None:
            found: Fulfilment | None = super().get_object(request, object_id, from_field)
            return found
        account, named, reference = object_id.partition("/")
        if not named:
            account, reference = "", object_id
        rows: Any = self.get_queryset(request)  # django-stubs leaves filter untyped for pyright
        row: Fulfilment | None = rows.filter(account=account, reference=reference).first()
        return row

    @admin.display(description="reference", ordering="reference")
    def payment(self, row: Fulfilment) -> str:
        """The reference, linked to its row's page (by account and reference): each character a
        browser shows as nothing or a blank an escape (``order-1042\\u3164``, a backslash of
        the text doubled), as ``paysdk ledger list`` shows it, so it is told from ``order-1042``."""
        meta: Any = self.opts
        page = reverse(
            f"admin:{meta.app_label}_{meta.model_name}_change",
            args=(quote(row_id(row)),),
            current_app=self.admin_site.name,
        )
        return format_html('<a href="{}">{}</a>', page, str(row))  # escaped as __str__ does

    @admin.display(description="reference")
    def reference_shown(self, row: Fulfilment) -> str:
        """The reference as ``payment`` shows it, unlinked: on the row's own page."""
        return str(row)

    @admin.display(description="account", ordering="account")
    def account_shown(self, row: Fulfilment) -> str:
        return row.account or UNLABELLED_SHOWN

    @admin.display(description="currency", ordering="currency")
    def currency_shown(self, row: Fulfilment) -> str:
        """The currency in ASCII, each other character an escape: a code the service sent with
        a look-alike letter (``\\u212aES``, a Kelvin sign) never reads as ``KES``."""
        return row.currency.encode("ascii", "backslashreplace").decode("ascii")

    @admin.display(description="state", ordering="current_state")
    def state_now(self, row: Fulfilment) -> str:
        return str(getattr(row, "current_state", row.state))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


if apps.is_installed("django.contrib.admin"):
    admin.site.register(Fulfilment, FulfilmentAdmin)

"""A read-only admin of the ledger's table, registered when ``django.contrib.admin`` is installed.

The state shown and filtered on is the one the ledger reads (``DjangoLedger.state_sql``): a claim
whose lease ran out by the database's clock is ``unknown``, which the stored ``state`` never says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from django.apps import apps
from django.contrib import admin
from django.db import connections
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL
from django.http import HttpRequest

from ...ledger._django import DjangoLedger
from .models import Fulfilment

if TYPE_CHECKING:  # the types django-stubs declares these options with
    from django.contrib.admin.options import _ListDisplayT, _ListFilterT
    from django.db.models.query import _OrderByFieldName
    from django.utils.datastructures import _ListOrTuple
    from django.utils.functional import _StrOrPromise

__all__ = ["FulfilmentAdmin", "StateFilter"]

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


if TYPE_CHECKING:
    _ModelAdmin = admin.ModelAdmin[Fulfilment]
else:  # not generic at run time
    _ModelAdmin = admin.ModelAdmin


class FulfilmentAdmin(_ModelAdmin):
    """The ledger's rows, read-only: the ledger alone writes them (``resolve`` settles one)."""

    list_display: _ListDisplayT[Fulfilment] = (
        "reference",
        "state_now",
        "amount",
        "currency",
        "attempts",
        "fulfilled_at",
        "reason",
    )
    list_filter: ClassVar[_ListOrTuple[_ListFilterT]] = (StateFilter,)
    search_fields: ClassVar[_ListOrTuple[str]] = ("reference",)
    ordering: ClassVar[_ListOrTuple[_OrderByFieldName] | None] = ("-claimed_at",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Fulfilment]:
        return with_current_state(super().get_queryset(request))

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

"""The Django app ``paysdk.integrations.django`` (label ``paysdk``): the ledger's table as a
migration, and a read-only admin of it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.apps import AppConfig

if TYPE_CHECKING:  # the types django-stubs declares these settings with
    from django.utils.functional import _Getter, _StrOrPromise

__all__ = ["PaysdkConfig"]


class PaysdkConfig(AppConfig):
    """In ``INSTALLED_APPS`` as ``"paysdk.integrations.django"``; ``manage.py migrate`` creates
    ``paysdk_fulfilments``, the table
    [`DjangoLedger`][paysdk.integrations.django.DjangoLedger] uses."""

    name = "paysdk.integrations.django"
    label = "paysdk"
    verbose_name: _StrOrPromise = "Payments (paysdk)"
    default_auto_field: str | _Getter[str] = "django.db.models.BigAutoField"

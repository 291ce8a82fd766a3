"""The Django app ``paysdk.integrations.django`` (label ``paysdk``): the ledger's table as a
migration, and a read-only admin of it."""

from __future__ import annotations

from django.apps import AppConfig

__all__ = ["PaysdkConfig"]


class PaysdkConfig(AppConfig):
    """In ``INSTALLED_APPS`` as ``"paysdk.integrations.django"``; ``manage.py migrate`` creates
    ``paysdk_fulfilments``, the table :class:`~paysdk.integrations.django.DjangoLedger` uses."""

    name = "paysdk.integrations.django"
    label = "paysdk"
    verbose_name = "Payments (paysdk)"
    default_auto_field = "django.db.models.BigAutoField"

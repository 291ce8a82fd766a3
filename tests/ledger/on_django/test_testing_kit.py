"""The testing kit's ``CallbackSender`` sending to a Django app's ``WSGIHandler()`` inside Django's
own ``TestCase``, which runs each test inside a transaction on each of its databases."""

from __future__ import annotations

from typing import ClassVar

import pytest
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.wsgi import WSGIHandler
from django.http import HttpRequest, JsonResponse
from django.test import TestCase
from django.urls import path

import paysdk
from paysdk.integrations.django import verified_callback
from paysdk.integrations.django.models import Fulfilment
from paysdk.testing import CallbackSender, MockPaymentAPI
from tests.support.django_site import serve

ORDERS = {"order-1": {"amount": 5000, "currency": "NGN"}}


@pytest.mark.usefixtures("django_sqlite", "django_postgres")
class TestInADjangoTestCase(TestCase):
    """As a merchant's own test class: the test's rows live in its transaction."""

    databases: ClassVar[set[str]] = {"default", "postgres"}  # type: ignore[misc]

    def test_the_view_reads_the_tests_rows_and_the_test_goes_on(self) -> None:
        self._the_view_reads_the_tests_rows(WSGIHandler())

    def test_a_sync_view_under_asgi_reads_the_tests_rows_too(self) -> None:
        """Django's ASGI handler runs a sync view in a thread of its own: it borrows the
        test's connections, in the test's transaction."""
        self._the_view_reads_the_tests_rows(ASGIHandler())

    def _the_view_reads_the_tests_rows(self, handler: WSGIHandler | ASGIHandler) -> None:
        seen: list[int] = []
        before = [Fulfilment.objects.using(alias).count() for alias in self.databases]
        with MockPaymentAPI() as api, api.client() as client, CallbackSender() as sender:

            @verified_callback(client, lookup=ORDERS.get)
            def payment_callback(
                request: HttpRequest, payment: paysdk.VerifiedPayment
            ) -> JsonResponse:
                seen.extend(Fulfilment.objects.using(alias).count() for alias in self.databases)
                return JsonResponse({"status": "ok"})

            serve(path("payments/callback", payment_callback))
            for alias in sorted(self.databases):
                Fulfilment.objects.using(alias).create(
                    reference="made-by-the-test",
                    state="ignored",
                    attempts=0,
                    amount=1,
                    currency="NGN",
                    claimed_at="2026-01-01T00:00:00Z",
                )
            api.add_payment("order-1", amount=5000, currency="NGN")
            answer = sender.send(handler, "/payments/callback", "order-1")
            assert (answer.status_code, answer.json()) == (200, {"status": "ok"})
        made = [count + 1 for count in before]
        assert seen == made
        assert [Fulfilment.objects.using(alias).count() for alias in self.databases] == made

    def test_an_exception_in_the_view_fails_the_test(self) -> None:
        before = Fulfilment.objects.using("postgres").count()
        with MockPaymentAPI() as api, api.client() as client, CallbackSender() as sender:

            @verified_callback(client, lookup=ORDERS.get)
            def payment_callback(
                request: HttpRequest, payment: paysdk.VerifiedPayment
            ) -> JsonResponse:
                raise LookupError("the warehouse has no such shelf")

            serve(path("payments/callback", payment_callback))
            api.add_payment("order-1", amount=5000, currency="NGN")
            with pytest.raises(LookupError, match="no such shelf"):
                sender.send(WSGIHandler(), "/payments/callback", "order-1")
        assert Fulfilment.objects.using("postgres").count() == before  # the connection works

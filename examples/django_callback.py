"""Django in one file: ship an order only once the service confirms its amount and currency.

Install: pip install 'python-paysdk[django]'
Run: PAYSDK_SECRET_KEY=... PAYSDK_BASE_URL=... python examples/django_callback.py
It serves http://127.0.0.1:8001/payments/callback (set PORT for another port).
"""

from __future__ import annotations

import os
import threading

from django.conf import settings
from django.core.management import execute_from_command_line
from django.http import HttpRequest, JsonResponse
from django.urls import path

import paysdk
from paysdk.integrations.django import verified_callback

settings.configure(
    ROOT_URLCONF=__name__, ALLOWED_HOSTS=["127.0.0.1"], SECRET_KEY=os.urandom(32).hex()
)
ORDERS = {  # the merchant's order table: what each reference must pay
    "order-1042": {"amount": 2_500_000, "currency": "NGN"},
    "order-1043": {"amount": 4_999, "currency": "USD"},
    "order-7": {"amount": 500, "currency": "USD"},  # `paysdk pay` records it in the sandbox
}
FULFILLED: list[str] = []
LOCK = threading.Lock()  # the callback may arrive twice, even at once: fulfil once
client = paysdk.Client()  # reads PAYSDK_SECRET_KEY and PAYSDK_BASE_URL


@verified_callback(client, lookup=ORDERS.get)  # unknown, failed or mismatched payments stop
def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> JsonResponse:
    with LOCK:
        if payment.reference not in FULFILLED:
            FULFILLED.append(payment.reference)  # ship the order here
    return JsonResponse({"status": "ok"})


urlpatterns = [path("payments/callback", payment_callback)]
if __name__ == "__main__":
    address = f"127.0.0.1:{os.environ.get('PORT', '8001')}"
    execute_from_command_line(["django_callback", "runserver", address, "--noreload"])

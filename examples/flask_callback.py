"""Flask: ship an order only once the service confirms a payment of its amount and currency.

Run: PAYSDK_SECRET_KEY=... PAYSDK_BASE_URL=... python examples/flask_callback.py
"""

from __future__ import annotations

import os
import threading

from flask import Flask

import paysdk
from paysdk.integrations.flask import verified_callback

ORDERS = {  # the merchant's order table: what each reference must pay
    "order-1042": {"amount": 2_500_000, "currency": "NGN"},
    "order-1043": {"amount": 4_999, "currency": "USD"},
}
FULFILLED: list[str] = []
LOCK = threading.Lock()  # the callback may arrive twice, even at once: fulfil once
client = paysdk.Client()  # reads PAYSDK_SECRET_KEY and PAYSDK_BASE_URL
app = Flask(__name__)


@app.get("/payments/callback")
@verified_callback(client, lookup=ORDERS.get)  # unknown, failed or mismatched payments stop here
def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
    with LOCK:
        if payment.reference not in FULFILLED:
            FULFILLED.append(payment.reference)  # ship the order here
    return {"status": "ok"}


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=int(os.environ.get("PORT", "8000")))

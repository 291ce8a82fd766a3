"""Flask: ship an order once, and only once the service confirms a payment of its amount and
currency; the ledger records each payment as fulfilled only when the view succeeds.

Install: pip install 'python-paysdk[flask]'
Run: PAYSDK_SECRET_KEY=... PAYSDK_BASE_URL=... python examples/flask_callback.py
It serves http://127.0.0.1:8000/payments/callback (set PORT for another port).
"""

from __future__ import annotations

import os

from flask import Flask

import paysdk
from paysdk.integrations.flask import verified_callback

ORDERS = {  # the merchant's order table: what each reference must pay
    "order-1042": {"amount": 2_500_000, "currency": "NGN"},
    "order-1043": {"amount": 4_999, "currency": "USD"},
    "order-7": {"amount": 500, "currency": "USD"},  # `paysdk pay` records it in the sandbox
}
FULFILLED: list[str] = []
OUT_OF_STOCK: set[str] = set()  # orders the warehouse will never ship
WAREHOUSE_OPEN = True  # while it is closed, nothing can ship now (but may later)
client = paysdk.Client()  # reads PAYSDK_SECRET_KEY and PAYSDK_BASE_URL
ledger = paysdk.Ledger(os.environ.get("LEDGER_URL", "sqlite:///fulfilments.db"))
app = Flask(__name__)


@app.get("/payments/callback")
@verified_callback(client, lookup=ORDERS.get, ledger=ledger)  # bad callbacks stop here
def payment_callback(payment: paysdk.VerifiedPayment) -> tuple[dict[str, str], int]:
    # Runs once per payment, however often the callback comes. A 2xx answer is recorded as
    # fulfilled; a 5xx (or an exception) is not, so the service's retry runs it again; a 4xx
    # refuses the payment, and the ledger records why.
    if payment.reference in OUT_OF_STOCK:
        return {"status": "out_of_stock"}, 409
    if not WAREHOUSE_OPEN:
        return {"status": "warehouse_closed"}, 503
    FULFILLED.append(payment.reference)  # ship the order here
    return {"status": "ok"}, 200


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=int(os.environ.get("PORT", "8000")))

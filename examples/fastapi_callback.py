"""FastAPI: ship an order only once the service confirms a payment of its amount and currency.

Install: pip install 'python-paysdk[fastapi]' fastapi uvicorn
Run: PAYSDK_SECRET_KEY=... PAYSDK_BASE_URL=... python examples/fastapi_callback.py
It serves http://127.0.0.1:8002/payments/callback (set PORT for another port). The fastapi
extra installs Starlette, which the helper is built on; FastAPI and uvicorn, the server that
runs it here, are your app's own choice, so they are named on the install line.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator

from fastapi import FastAPI

import paysdk
from paysdk.integrations.fastapi import verified_callback

ORDERS = {  # the merchant's order table: what each reference must pay
    "order-1042": {"amount": 2_500_000, "currency": "NGN"},
    "order-1043": {"amount": 4_999, "currency": "USD"},
    "order-7": {"amount": 500, "currency": "USD"},  # `paysdk pay` records it in the sandbox
}
FULFILLED: list[str] = []
client = paysdk.AsyncClient()  # reads PAYSDK_SECRET_KEY and PAYSDK_BASE_URL


@contextlib.asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    await client.close()  # the app is stopping: close the client's connections


app = FastAPI(lifespan=lifespan)


@app.get("/payments/callback")
@verified_callback(client, lookup=ORDERS.get)  # unknown, failed or mismatched payments stop here
async def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
    if payment.reference not in FULFILLED:  # the callback may arrive twice: fulfil once
        FULFILLED.append(payment.reference)  # ship the order here
    return {"status": "ok"}


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8002")))

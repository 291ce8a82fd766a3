"""FastAPI: ship an order only once the service confirms a payment of its amount and currency.

Run: PAYSDK_SECRET_KEY=... PAYSDK_BASE_URL=... python examples/fastapi_callback.py
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, FastAPI

import paysdk
from paysdk.integrations.fastapi import VerifiedCallback, install

ORDERS = {  # the merchant's order table: what each reference must pay
    "order-1042": {"amount": 2_500_000, "currency": "NGN"},
    "order-1043": {"amount": 4_999, "currency": "USD"},
}
FULFILLED: list[str] = []
client = paysdk.AsyncClient()  # reads PAYSDK_SECRET_KEY and PAYSDK_BASE_URL
verified_callback = VerifiedCallback(client, lookup=ORDERS.get)


@contextlib.asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    await client.close()  # the app is stopping: close the client's connections


app = FastAPI(lifespan=lifespan)
install(app)  # refused callbacks are answered {"status": ...}, as by the other helpers


@app.get("/payments/callback")
async def payment_callback(
    payment: Annotated[paysdk.VerifiedPayment, Depends(verified_callback)],
) -> dict[str, str]:
    if payment.reference not in FULFILLED:  # the callback may arrive twice: fulfil once
        FULFILLED.append(payment.reference)  # ship the order here
    return {"status": "ok"}


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")))

"""paysdk in one screen: verify payments, list them, handle errors, and confirm a callback.

Run it with ``make demo``. It starts a local sandbox of the payment service in this process,
unless PAYSDK_BASE_URL (and PAYSDK_SECRET_KEY) point at a service, which it then uses instead.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import threading
from collections.abc import Iterator

import paysdk
from paysdk.sandbox import (
    COMPLETED_REFERENCE,
    FAILED_REFERENCE,
    UNKNOWN_REFERENCE,
    Sandbox,
    send_callback,
)

# Your shop's orders: what each reference should have paid. A callback is only acted on when
# the service confirms that exact amount and currency.
ORDERS = {
    COMPLETED_REFERENCE: {"amount": 2_500_000, "currency": "NGN"},
    FAILED_REFERENCE: {"amount": 4_999, "currency": "USD"},
}


def main() -> int:
    with contextlib.ExitStack() as stack:
        if os.environ.get("PAYSDK_BASE_URL"):
            client = paysdk.Client()  # PAYSDK_SECRET_KEY and PAYSDK_BASE_URL
        else:
            sandbox = stack.enter_context(Sandbox())
            client = paysdk.Client(secret_key=sandbox.secret_key, base_url=sandbox.base_url)
        stack.enter_context(client)
        print(f"Using the payment service at {client.base_url}\n")

        print("1. Verify a payment by its reference")
        for reference in (COMPLETED_REFERENCE, FAILED_REFERENCE):
            payment = client.verify(reference)
            outcome = "succeeded" if payment.succeeded else "did NOT succeed"
            print(f"   {payment.reference}: {payment.amount} {payment.currency} {outcome}")

        print("\n2. List payments")
        for p in client.list_payments():
            print(f"   {p.reference:<18} {p.status!s:<10} {p.amount:>9} {p.currency}")

        print("\n3. An unknown reference raises PaymentNotFoundError")
        try:
            client.verify(UNKNOWN_REFERENCE)
        except paysdk.PaymentNotFoundError as exc:
            print(f"   {type(exc).__name__}: reference={exc.reference!r}, HTTP {exc.status_code}")

        print("\n4. The service calls your callback URL; your handler verifies the reference")
        callback_url = stack.enter_context(merchant_handler(client))
        for reference in (COMPLETED_REFERENCE, FAILED_REFERENCE):
            result = send_callback(callback_url, reference)  # what the service does
            print(f"   GET {result.url}\n     -> {result.status_code} {result.body}")
    return 0


@contextlib.contextmanager
def merchant_handler(client: paysdk.Client) -> Iterator[str]:
    """A tiny merchant callback endpoint on 127.0.0.1; yields its URL."""

    class CallbackHandler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            # Never trust the callback itself: ask the service, and compare with your order.
            try:
                payment = client.verify_callback(self.path, lookup=ORDERS.get)
            except paysdk.PaySDKError as exc:
                self.answer(400, f"not fulfilled: {type(exc).__name__}")
            else:
                self.answer(200, f"order {payment.reference} paid, shipping it")

        def answer(self, status: int, text: str) -> None:
            body = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep the demo's output to one screen

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), CallbackHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/payment-callback"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


if __name__ == "__main__":
    raise SystemExit(main())

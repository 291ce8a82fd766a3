"""paysdk in one screen: verify payments, list them, handle errors, and act on callbacks safely.

Install: pip install python-paysdk
Run it with ``make demo``. It starts the bundled sandbox (a local stand-in for the payment
service) in this process, unless PAYSDK_BASE_URL (and PAYSDK_SECRET_KEY) point at a service,
which it then uses instead.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import logging
import os
import sys
import threading
from collections.abc import Iterator

import paysdk
from paysdk.integrations.responses import callback_response
from paysdk.sandbox import (
    COMPLETED_REFERENCE,
    FAILED_REFERENCE,
    NON_CARD_REFERENCE,
    UNKNOWN_REFERENCE,
    Sandbox,
    send_callback,
)

CALLBACK_PATH = "/payments/callback"  # the path every example serves its callback on

# Your shop's orders: what each reference must pay, in the unit the service reports amounts in
# (paysdk never converts them). A callback is acted on only when the service confirms that exact
# amount and currency. The sandbox holds 85000 GHS for order-1044: less than this order costs.
ORDERS = {
    COMPLETED_REFERENCE: {"amount": 2_500_000, "currency": "NGN"},
    FAILED_REFERENCE: {"amount": 4_999, "currency": "USD"},
    NON_CARD_REFERENCE: {"amount": 850_000, "currency": "GHS"},
}
CALLBACKS = [  # what arrives at the callback URL, and what it stands for
    (COMPLETED_REFERENCE, "paid in full"),
    (FAILED_REFERENCE, "the payment failed"),
    (NON_CARD_REFERENCE, "paid 85000 GHS for an order of 850000 GHS"),
    (UNKNOWN_REFERENCE, "spoofed: not one of your orders"),
]


def main() -> int:
    # The helpers log each refused callback on "paysdk.callbacks"; this demo prints them itself.
    logging.getLogger("paysdk.callbacks").addHandler(logging.NullHandler())
    logging.getLogger("paysdk.callbacks").propagate = False
    shipped: list[str] = []
    with contextlib.ExitStack() as stack:
        if os.environ.get("PAYSDK_BASE_URL"):
            client = paysdk.Client()  # PAYSDK_SECRET_KEY and PAYSDK_BASE_URL
            print(f"paysdk demo, against the service at {client.base_url}\n")
        else:
            sandbox = stack.enter_context(Sandbox())
            client = paysdk.Client(secret_key=sandbox.secret_key, base_url=sandbox.base_url)
            print(f"paysdk demo, against the bundled sandbox at {sandbox.base_url}")
            print("(a local stand-in for the service: no key, no network, no money moves)\n")
        stack.enter_context(client)

        print("1. Verify a payment by its reference")
        for reference in (COMPLETED_REFERENCE, FAILED_REFERENCE):
            payment = client.verify(reference)
            outcome = "succeeded" if payment.succeeded else "did NOT succeed"
            print(f"   {payment.reference}: {payment.amount} {payment.currency} {outcome}")

        print("\n2. List payments, streamed one at a time (flat memory, however long the list)")
        for p in client.iter_payments():
            print(f"   {p.reference:<18} {p.status!s:<10} {p.amount:>9} {p.currency}")

        print("\n3. An unknown reference raises PaymentNotFoundError")
        try:
            client.verify(UNKNOWN_REFERENCE)
        except paysdk.PaymentNotFoundError as exc:
            print(f"   {type(exc).__name__}: reference={exc.reference!r}, HTTP {exc.status_code}")

        print(
            "\n4. Callbacks are unsigned: the handler asks the service and compares with the order"
        )
        callback_url = stack.enter_context(merchant_handler(client, shipped))
        for reference, story in CALLBACKS:
            result = send_callback(callback_url, reference)  # what the service does
            print(f"   {reference}: {story:<41} -> {result.status_code} {result.body}")
        print(f"   Shipped: {', '.join(shipped) or 'nothing'}")

    print("\nNext: README.md and the docs site (make docs), examples/*_callback.py for a callback")
    print("endpoint in Django, Flask or FastAPI, and `paysdk sandbox` to try the paysdk command.")
    return 0


@contextlib.contextmanager
def merchant_handler(client: paysdk.Client, shipped: list[str]) -> Iterator[str]:
    """A tiny merchant callback endpoint on 127.0.0.1; yields its URL."""

    class CallbackHandler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            # Never trust the callback itself: ask the service, and compare with your order.
            try:
                payment = client.verify_callback(self.path, lookup=ORDERS.get)
            except paysdk.PaySDKError as exc:
                answer = callback_response(exc)  # what the framework helpers answer
                self.answer(answer.status_code, answer.body)
            else:
                if payment.reference not in shipped:  # a callback may come twice: ship once
                    shipped.append(payment.reference)
                self.answer(200, {"status": "ok"})

        def answer(self, status: int, body: dict[str, str]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep the demo's output to one screen

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), CallbackHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{CALLBACK_PATH}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def run() -> int:
    """``main``, a paysdk error said in one line, with what to do when it came from the service
    the environment names rather than the demo's own sandbox."""
    try:
        return main()
    except paysdk.PaySDKError as exc:
        print(f"paysdk demo: {type(exc).__name__}: {exc}", file=sys.stderr)
        if os.environ.get("PAYSDK_BASE_URL"):
            print(
                "paysdk demo: PAYSDK_BASE_URL is set, so the demo runs against that service, "
                "not its own sandbox; to run it against the bundled sandbox: "
                "unset PAYSDK_BASE_URL PAYSDK_SECRET_KEY",
                file=sys.stderr,
            )
        return 1


if __name__ == "__main__":
    raise SystemExit(run())

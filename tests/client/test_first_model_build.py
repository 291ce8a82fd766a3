"""A payment model builds its schema on first use, wherever that is, and keeps nothing of the
frame that used it: before pydantic 2.10 that build stored the frame's locals on the class for
the life of the process. Each case runs in a fresh interpreter, where the models are not built
yet."""

from __future__ import annotations

import subprocess
import sys

VIEW_KEEPS_NOTHING = """
import gc, weakref
import paysdk
from paysdk.testing import payment_record

class Token:
    pass

def view(body):
    order = {"token": Token(), "secret_key": "sk_test_application_owned"}  # the view's own state
    payment = paysdk.VerifiedPayment.model_validate(body)
    payment.model_dump()
    return weakref.ref(order["token"])

token = view(payment_record(reference="order-1").verify_shape())
gc.collect()
assert token() is None, "the view's locals outlived it"
"""

STREAM_KEEPS_NOTHING = """
import gc
import paysdk
from paysdk.sandbox import Sandbox

with Sandbox() as sandbox:
    with paysdk.Client(secret_key=sandbox.secret_key, base_url=sandbox.base_url) as client:
        with client.iter_payments() as payments:
            first = next(iter(payments))
del first, payments
gc.collect()
kept = [o for o in gc.get_objects() if isinstance(o, paysdk.ListedPayment)]
assert not kept, f"{len(kept)} listed payments outlived the iteration"
"""


def run_fresh(script: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr


def test_the_first_use_of_a_payment_in_an_application_function_keeps_none_of_its_locals() -> None:
    """The view's state (a secret key among it) is freed when the view returns."""
    run_fresh(VIEW_KEEPS_NOTHING)


def test_a_list_streamed_first_leaves_no_payment_alive_once_iterated() -> None:
    """The stream parser's batch of payments (customers' names, emails, phones) is freed with
    the iteration, not kept on ``ListedPayment`` until the process ends."""
    run_fresh(STREAM_KEEPS_NOTHING)


def test_a_model_subclassed_in_a_function_is_rebuilt_from_that_functions_names() -> None:
    """Only paysdk's own models leave the caller's frame out: a subclass in application code
    naming a type its function defines later is completed by ``model_rebuild()`` there, as
    pydantic documents."""
    from pydantic import BaseModel

    import paysdk
    from paysdk.testing import payment_record

    class NotedPayment(paysdk.VerifiedPayment):
        note: Note | None = None

    class Note(BaseModel):
        text: str

    NotedPayment.model_rebuild()
    body = payment_record(reference="order-1").verify_shape()
    payment = NotedPayment.model_validate({**body, "note": {"text": "gift wrap"}})
    assert payment.note == Note(text="gift wrap")
    assert payment.reference == "order-1"

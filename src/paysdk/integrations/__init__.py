"""Optional helpers that turn a callback request into a verified, matching payment.

Import the one for your framework: ``paysdk.integrations.django``, ``.flask`` or ``.fastapi``
(Starlette and FastAPI). Each is the same ``verified_callback(client, *, lookup, ledger=None,
on_failed=None)`` decorator, following one fulfilment rule (:mod:`._callback`), and answers a bad
callback with the status from :func:`paysdk.integrations.responses.callback_response`, the one
place that mapping lives.
"""

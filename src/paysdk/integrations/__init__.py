"""Optional helpers that turn a callback request into a verified, matching payment.

Import the one for your framework: ``paysdk.integrations.django``, ``.flask`` or ``.fastapi``
(Starlette and FastAPI). Each answers a bad callback with the status from
[`callback_response`][paysdk.integrations.responses.callback_response], the one place that
mapping lives.
"""

"""``paysdk pay`` and ``paysdk trigger-callback``: a merchant's callback handler, exercised locally.

``pay`` has a running sandbox record a payment and send its callback (``POST /_sandbox/pay``, as
``Sandbox.pay``), so the handler's verify finds the payment. With no base URL (flag or variable)
it pays in the one sandbox running detached, with its key unless ``--secret-key`` is given.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import urllib.parse
from typing import TYPE_CHECKING, Any, cast

from .._core.config import KEY_IN_BASE_URL, blot_key, url_holds_key
from .._core.environment import ENV_BASE_URL, ENV_SECRET_KEY, ENV_TIMEOUT
from .._errors.quoting import bounded_detail, quoted
from .._service.callbacks import callback_timeout, shown_url
from . import _background as background
from ._background import RunningSandbox
from ._command import add_reference
from ._connection import payment_reference, positive_float, utf8_text, whole_amount
from ._escape import hide_key, printable
from ._exits import EXIT_FAILURE, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE
from ._report import print_error

if TYPE_CHECKING:
    from .._transport import Fetched

__all__ = ["add_callback_commands"]

BODY_EXCERPT = 500
"""How many characters of the handler's answer ``pay`` prints."""
MAX_ANSWER = 1 << 20
"""The most of the answer to ``POST /_sandbox/pay`` read (1 MiB): a sandbox's, whose callback
body it quotes is at most 64 KiB (written six times as long at worst, as JSON escapes), is far
shorter; a server that is no sandbox may send gigabytes."""


def add_callback_commands(commands: Any, client: argparse.ArgumentParser) -> None:
    """Register ``pay`` and ``trigger-callback`` on the ``paysdk`` subcommands."""
    pay = commands.add_parser(
        "pay",
        parents=[client],
        help="pay in a running sandbox and send the callback to your handler, in one step",
    )
    add_reference(pay, payment_reference)
    pay.add_argument("--amount", type=whole_amount, required=True, help="an integer, e.g. 2500000")
    pay.add_argument(
        "--currency",
        type=currency_code,
        required=True,
        help="three letters, e.g. NGN (usd is taken as USD)",
    )
    pay.add_argument(
        "--callback",
        required=True,
        metavar="URL",
        help="your callback URL, e.g. http://127.0.0.1:8000/payments/callback",
    )
    pay.add_argument("--fail", action="store_true", help="record a FAILED payment instead")
    pay.add_argument(
        "--replace",
        action="store_true",
        help="replace the sandbox's payment of this reference, if it holds one (else refused)",
    )
    pay.add_argument(
        "--callback-timeout",
        type=positive_float,
        default=10.0,
        help="seconds your handler may take (10; at most 60)",
    )
    pay.set_defaults(command=_pay)

    trigger = commands.add_parser(
        "trigger-callback", help="send the payment callback to your handler, as the service does"
    )
    trigger.add_argument(
        "url", help="your callback URL, e.g. http://127.0.0.1:8000/payments/callback"
    )
    trigger.add_argument("--reference", type=utf8_text, required=True, help="the reference to send")
    trigger.add_argument("--timeout", type=positive_float, default=10.0, help="seconds (10)")
    trigger.set_defaults(command=_trigger_callback)


# --- pay and trigger-callback -----------------------------------------------------------------


def _pay(args: argparse.Namespace) -> int:
    from paysdk.sandbox import FAILED, MAX_CALLBACK_TIMEOUT, callback_url

    from .._client.configure import check_base_url, check_timeout, from_env
    from .._core.config import check_secret_key
    from .._core.steps import Failure
    from .._transport import fetch

    seconds = args.timeout if args.timeout is not None else from_env(ENV_TIMEOUT, float, 30.0)
    check_timeout(seconds)  # as every command that calls the service checks it
    if args.callback_timeout > MAX_CALLBACK_TIMEOUT:
        return print_error(
            f"--callback-timeout must be at most {MAX_CALLBACK_TIMEOUT:g} seconds", EXIT_USAGE
        )
    try:
        callback_url(args.callback, args.reference)  # checked before anything is sent
    except ValueError as exc:
        return print_error(f"--callback: {exc}", EXIT_USAGE)
    query: str = urllib.parse.urlsplit(str(args.callback)).query
    if "reference" in urllib.parse.parse_qs(query, keep_blank_values=True):
        return print_error(
            "--callback: give your callback URL without a reference parameter: the callback "
            "adds ?reference=REF itself, as the service does, so the view would get two",
            EXIT_USAGE,
        )
    given_url = args.base_url if args.base_url is not None else os.environ.get(ENV_BASE_URL)
    given_key = args.secret_key if args.secret_key is not None else os.environ.get(ENV_SECRET_KEY)
    if not given_url:
        found = _the_detached_sandbox()
        if isinstance(found, str):
            return print_error(found, EXIT_USAGE)
        given_url = found.base_url
        # the variable's key belongs with the variable's address; the sandbox knows its own
        given_key = args.secret_key if args.secret_key is not None else found.secret_key
    base_url = check_base_url(given_url, allow_insecure_http=args.allow_insecure_http)
    secret_key = check_secret_key(given_key)
    if url_holds_key(base_url, secret_key):  # every line below names the URL
        return print_error(KEY_IN_BASE_URL, EXIT_USAGE)
    hide_key(secret_key)
    payment = {"reference": args.reference, "amount": args.amount, "currency": args.currency}
    if args.fail:
        payment["status"] = FAILED
    body = {
        "payment": payment,
        "callback": args.callback,
        "timeout": args.callback_timeout,
        "replace": args.replace,
    }
    answer = fetch(
        f"{base_url}/_sandbox/pay",
        method="POST",
        content=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {secret_key}", "Content-Type": "application/json"},
        timeout=seconds + args.callback_timeout,
        max_body=MAX_ANSWER + 1,  # one more: an answer longer than a sandbox's is no sandbox's
    )
    if isinstance(answer, Failure):
        return print_error(
            f"no sandbox answered at {base_url} ({answer.kind}): start one with "
            "`paysdk sandbox --detach`",
            EXIT_UNREACHABLE,
        )
    return _paid(answer, base_url, args, secret_key)


def _the_detached_sandbox() -> RunningSandbox | str:
    """The one sandbox running detached (``paysdk sandbox --detach``), or why there is none."""
    running = background.running_sandboxes()
    if len(running) == 1:
        return running[0]
    if running:
        urls = ", ".join(sandbox.base_url for sandbox in running)
        return f"sandboxes run at {urls}: choose one with --base-url (or ${ENV_BASE_URL})"
    return (
        f"no base URL and no sandbox running in the background ({background.runtime_dir()}): "
        f"start one with `paysdk sandbox --detach`, or pass --base-url or set ${ENV_BASE_URL}"
    )


def _paid(answer: Fetched, base_url: str, args: argparse.Namespace, secret_key: str) -> int:
    """Report what ``POST /_sandbox/pay`` answered, and exit as the callback went; what the
    answer says, ``secret_key`` blotted out (a server that is no sandbox may echo it). An
    answer longer than ``MAX_ANSWER`` was read no further: it is no sandbox's."""
    try:
        whole = len(answer.body) <= MAX_ANSWER
        parsed: object = json.loads(answer.body.decode(answer.encoding)) if whole else None
    except (ValueError, LookupError):  # not JSON, not text in its charset, an unknown charset
        parsed = None
    data = cast("dict[str, Any]", parsed) if isinstance(parsed, dict) else {}
    if answer.status_code == 401:
        return print_error(f"the sandbox at {base_url} refused the secret key", EXIT_USAGE)
    if answer.status_code == 409:
        return print_error(
            f"the sandbox at {base_url} already holds a payment for "
            f"{quoted(args.reference, code=True)}: pass --replace to replace it, or pay another "
            "reference",
            EXIT_USAGE,
        )
    if answer.status_code == 400 and "message" in data:
        return print_error(
            f"the sandbox refused the payment: {_said(data['message'], secret_key)}",
            EXIT_USAGE,
        )
    if answer.status_code >= 500 or answer.status_code == 429:  # its disk, a bug, a proxy's
        said = data.get("message")
        why = (
            _said(said, secret_key)
            if isinstance(said, str)
            else f"it answered {answer.status_code}"
        )
        # the sandbox (its disk, a bug) or a proxy before it failed: try again later, as the
        # other commands exit for a service's 5xx or 429 (exits.exit_code_of)
        return print_error(f"the sandbox at {base_url} failed: {why}", EXIT_UNREACHABLE)
    if answer.status_code != 201 or not isinstance(data.get("callback"), dict):
        return print_error(
            f"{base_url} is not a paysdk sandbox (POST /_sandbox/pay answered "
            f"{answer.status_code}): `paysdk pay` pays in `paysdk sandbox` only",
            EXIT_USAGE,
        )
    status = "FAILED" if args.fail else "COMPLETED"
    paid = f"paid: {args.reference} {args.amount} {args.currency} ({status}) at {base_url}"
    print(printable(paid))
    callback = cast("dict[str, Any]", data["callback"])
    if "error" in callback:
        reference = f"--reference={args.reference}"  # one word: a reference may start with -
        again = shlex.join(["paysdk", "trigger-callback", shown_url(args.callback), reference])
        return print_error(
            f"{_said(callback['error'], secret_key)}; the payment is recorded in the sandbox: "
            f"once your app answers, send its callback again with `{again}`",
            EXIT_UNREACHABLE,
        )
    status_code = callback.get("status_code")
    url = _said(shown_url(str(callback.get("url"))), secret_key)
    said_status = _said(status_code, secret_key)
    print(printable(f"callback: GET {url} -> {said_status}"))
    text = blot_key(str(callback.get("body") or ""), secret_key).strip()
    if text:
        excerpt = text if len(text) <= BODY_EXCERPT else f"{text[:BODY_EXCERPT]}..."
        print(printable(excerpt, keep_newlines=True))
    change = _why_not_taken(status_code, text) if isinstance(status_code, int) else None
    if change is not None:
        return print_error(change, EXIT_FAILURE)
    ok = isinstance(status_code, int) and 200 <= status_code < 300
    return EXIT_OK if ok else EXIT_FAILURE


def _said(value: object, secret_key: str) -> str:
    """What the answer to ``POST /_sandbox/pay`` said, at most ``DETAIL_MAX`` characters of it:
    a server that is no sandbox (the service itself, by a base URL set for it) may say 1 MB, and
    echo ``secret_key``, blotted out before the cut so no piece of it is left."""
    return bounded_detail(blot_key(str(value), secret_key))


REDIRECTED = (
    "your app answered the callback with a redirect, which the sandbox does not follow (nor may "
    "the service): unless your view answered it itself, give the URL the view is routed at (a "
    "Django route ending in '/' redirects the URL without it, by APPEND_SLASH)"
)
"""Why a 3xx fails ``pay`` and ``trigger-callback``, and what to change."""
NOT_GET = (
    "your app refused the callback's method (405): the service calls back with GET, so route "
    "the callback view for GET (in Flask and FastAPI @app.get, not @app.post)"
)
"""Why a 405 fails ``pay`` and ``trigger-callback``: the view is routed for another method."""
HELPER_ERROR = (
    "your app's callback helper answered 500 'error', most often about your app's setup (its "
    "client has no key or base URL, or another service's or sandbox's key; its ledger holds "
    "another key's payments): the helper logged the reason on the paysdk.callbacks logger, in "
    "your app's log"
)
"""Why a helper's own 500 fails ``pay`` and ``trigger-callback``: its body says only 'error'."""
HELPER_RETRY_LATER = (
    "your app's callback helper answered 503 'retry_later': it could not verify the payment now "
    "(the service, or its ledger's database, did not answer): the helper logged why on the "
    "paysdk.callbacks logger, in your app's log; against a sandbox, check that the app was "
    "started with this sandbox's PAYSDK_BASE_URL (one started anew has a port of its own)"
)
"""Why a helper's own 503 fails ``pay`` and ``trigger-callback``: its body says only
'retry_later', which a newcomer reads as the service's fault, where it is often the app's
setting."""


def _why_not_taken(status_code: int, body: str) -> str | None:
    """What to change, where the handler's answer says more than its status: a redirect, a
    method it is not routed for, or a callback helper's 500 about the app's own setup."""
    if 300 <= status_code < 400:
        return REDIRECTED
    if status_code == 405:
        return NOT_GET
    helper = {500: ("error", HELPER_ERROR), 503: ("retry_later", HELPER_RETRY_LATER)}
    if status_code not in helper or len(body) > 64:  # the helper's body is {"status": ...}
        return None
    try:
        said: object = json.loads(body)
    except ValueError:
        return None
    status, why = helper[status_code]
    return why if said == {"status": status} else None


def currency_code(text: str) -> str:
    """An argparse type: a currency code, three ASCII letters, taken in upper case."""
    if not (len(text) == 3 and text.isascii() and text.isalpha()):
        raise argparse.ArgumentTypeError(
            f"expected a currency code of three letters such as NGN or USD, not {text!a}"
        )
    return text.upper()


def _trigger_callback(args: argparse.Namespace) -> int:
    from paysdk.sandbox import CallbackDeliveryError, callback_url, send_callback

    try:
        callback_url(args.url, args.reference)  # the user's URL, checked before anything is sent
    except ValueError as exc:
        return print_error(exc, EXIT_USAGE)
    try:
        callback_timeout(args.timeout)
    except ValueError as exc:
        return print_error(f"--timeout: {exc}", EXIT_USAGE)
    try:
        result = send_callback(args.url, args.reference, timeout=args.timeout)
    except CallbackDeliveryError as exc:
        return print_error(exc, EXIT_UNREACHABLE)
    print(printable(f"GET {shown_url(result.url)} -> {result.status_code}"))
    if result.body:
        print(printable(result.body, keep_newlines=True))
    why = _why_not_taken(result.status_code, result.body)
    if why is not None:
        return print_error(why, EXIT_FAILURE)
    return EXIT_OK if result.ok else EXIT_FAILURE

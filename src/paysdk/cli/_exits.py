"""The ``paysdk`` command's exit codes and what each means: the one list the commands return
from, and their help and docs/cli.md describe; and ``exit_code_of``, the one rule that turns
paysdk's exceptions into them, so a code means the same in every command."""

from __future__ import annotations

from .._errors import (
    APIConnectionError,
    APIError,
    AuthenticationError,
    ConfigurationError,
    InvalidReferenceError,
    NotFoundError,
    PaymentMismatchError,
    PaymentNotFoundError,
    PaymentVerificationError,
    PaySDKError,
    PermissionDeniedError,
)

__all__ = [
    "EXIT_ATTENTION",
    "EXIT_BROKEN_PIPE",
    "EXIT_FAILURE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_OUTPUT",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "MEANINGS",
    "exit_code_of",
    "exit_codes_help",
]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_ATTENTION = 4  # reconcile only
EXIT_INTERNAL = 70  # EX_SOFTWARE (sysexits.h): a bug, in paysdk or in a library it uses
EXIT_OUTPUT = 74  # EX_IOERR (sysexits.h): standard output could not be written
EXIT_INTERRUPTED = 128 + 2  # Ctrl-C, as a shell reports a tool ended by SIGINT
EXIT_BROKEN_PIPE = 128 + 13  # what a shell reports for a tool ended by SIGPIPE

MEANINGS = {
    EXIT_OK: "ok",
    EXIT_FAILURE: (
        "the service answered that the payment is not confirmed (it did not succeed, its "
        "amount or currency differ, or no payment has the reference), your callback handler "
        "answered other than 2xx, the ledger's database failed or the "
        "ledger declined a change (a fulfilled payment is never refused), or sandbox status "
        "found none running"
    ),
    EXIT_USAGE: (
        "usage or configuration error (a bad option, a secret key the service refused with "
        "401 or 403, a base URL answering a 404 that is not the service's own)"
    ),
    EXIT_UNREACHABLE: (
        "no answer could be had now (the service, the sandbox or the callback handler not "
        "reached in time, or the service answered 5xx, 429 or what paysdk cannot read): try "
        "again later"
    ),
    EXIT_ATTENTION: "reconcile found a payment that needs attention (missed, or an alarm)",
    EXIT_INTERNAL: "internal error (a bug in paysdk or a library it uses: please report it)",
    EXIT_OUTPUT: "standard output could not be written (a full disk): the output may be cut short",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    EXIT_BROKEN_PIPE: "standard output was closed early (paysdk list | head)",
}
"""Every exit code the command uses, with its meaning."""


def exit_codes_help() -> str:
    """``Exit codes: 0 ok; 1 ...``: the epilog of ``paysdk --help`` and each command's help."""
    return "Exit codes: " + "; ".join(f"{code} {text}" for code, text in MEANINGS.items()) + "."


def exit_code_of(error: PaySDKError) -> int:
    """The exit code of a command that ``error`` ended: 1 only where the service answered about
    the payment and it is not confirmed, so ``paysdk confirm ... || cancel_order`` never cancels
    a paid order for an outage or a refused key.

    Args:
        error: what a command raised.

    Returns:
        ``EXIT_USAGE`` for a bad input, a refused key (401, 403) or a base URL where nothing
        answers (a 404 not the service's own); ``EXIT_FAILURE`` for the service's documented
        404 (no payment has the reference), a payment that did not succeed or differs from
        what was expected, and a failure of the ledger; ``EXIT_UNREACHABLE`` for no answer
        (no connection, a timeout), any other answer (5xx, 429, list's "Connection Error", a
        body paysdk cannot read) and an answer about another payment than the one asked for.
    """
    if isinstance(error, (ConfigurationError, InvalidReferenceError)):
        return EXIT_USAGE
    if isinstance(error, (AuthenticationError, PermissionDeniedError)):
        return EXIT_USAGE  # the key: another try with it meets the same refusal
    if isinstance(error, PaymentNotFoundError):
        return EXIT_FAILURE  # the service's own answer: no payment has the reference
    if type(error) is NotFoundError:
        return EXIT_USAGE  # no route there: the base URL, not the payment
    if isinstance(error, PaymentMismatchError) and "reference" in error.mismatches:
        return EXIT_UNREACHABLE  # an answer about another payment says nothing of this one
    if isinstance(error, PaymentVerificationError):
        return EXIT_FAILURE
    if isinstance(error, (APIConnectionError, APIError)):
        return EXIT_UNREACHABLE  # no answer, or an answer that is not about the payment
    return EXIT_FAILURE  # the ledger's, or another refusal paysdk reports

"""The ``paysdk`` command's exit codes and what each means: the one list the commands return
from, and their help and docs/cli.md describe."""

from __future__ import annotations

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
        "the service, the ledger or the callback handler reported a failure (pay, "
        "trigger-callback: an answer other than 2xx), the ledger declined a change (a fulfilled "
        "payment is never refused), or sandbox status found none running"
    ),
    EXIT_USAGE: "usage or configuration error",
    EXIT_UNREACHABLE: "the service, the sandbox or the callback handler was not reached in time",
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

"""The ``paysdk`` command line. Errors are one line on stderr, never holding the secret key,
naming the command's flags and variables (not keyword arguments); only a bug shows a traceback."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext

import paysdk
from paysdk._core.environment import ENV_BASE_URL, ENV_SECRET_KEY
from paysdk.cli._command import Command, Parser
from paysdk.cli._connection import connection_options, source_of
from paysdk.cli._escape import hiding_keys
from paysdk.cli._exits import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OUTPUT,
    EXIT_USAGE,
    exit_code_of,
    exit_codes_help,
)
from paysdk.cli._ledger import add_ledger_command
from paysdk.cli._pay import add_callback_commands
from paysdk.cli._payments import add_payment_commands
from paysdk.cli._reconcile import add_reconcile_command
from paysdk.cli._report import (
    PROG,
    OutputError,
    VerboseLog,
    attempts_made,
    broken_pipe,
    diagnostics_at_best,
    escape_unwritable,
    guarded_output,
    in_cli_words,
    open_missing_streams,
    output_failed,
    print_error,
    print_internal_error,
)
from paysdk.cli._sandbox import add_sandbox_commands
from paysdk.cli._sandbox_actions import sandbox_hint

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    open_missing_streams()
    escape_unwritable()
    with diagnostics_at_best():
        return _run(argv)


def _run(argv: Sequence[str] | None) -> int:
    """The command ``argv`` names, run; its exit code."""
    parser = build_parser()
    try:
        with guarded_output():  # argparse ignores an OSError writing --help; not `OutputError`
            try:
                args = parser.parse_args(argv)
            finally:
                sys.stdout.flush()
    except SystemExit as exc:  # --help, --version (0) or a usage error argparse printed (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    except BrokenPipeError:
        return broken_pipe()
    except OutputError as exc:
        return output_failed(exc, EXIT_OUTPUT)
    command: Callable[[argparse.Namespace], int] = args.command
    with hiding_keys():  # the key a command is given, blotted out of all it prints
        return _outcome(command, args)


def _outcome(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run ``command``; its exit code, each failure told on stderr."""
    try:
        with guarded_output(), _verbose_log(args):
            code = command(args)
            sys.stdout.flush()  # a closed pipe or a full disk shows here, not at exit
            return code
    except BrokenPipeError:
        return broken_pipe()
    except OutputError as exc:
        return output_failed(exc, EXIT_OUTPUT)
    except paysdk.PaySDKError as exc:  # the code by the one rule: the same in every command
        return print_error(_error_text(exc, args), exit_code_of(exc))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as exc:  # not paysdk's word on the service or the input: a bug
        return print_internal_error(exc, EXIT_INTERNAL)


def _verbose_log(args: argparse.Namespace) -> AbstractContextManager[object]:
    """``--verbose``'s log of each attempt, for a command that takes it and was given it."""
    return VerboseLog().watching() if getattr(args, "verbose", False) else nullcontext()


def _error_text(exc: paysdk.PaySDKError, args: argparse.Namespace) -> str | paysdk.PaySDKError:
    """The line a paysdk error is told in: in the command's words, with the attempts made
    where the service was called."""
    if isinstance(exc, paysdk.ConfigurationError):
        return _configuration_error(exc, args)
    if isinstance(exc, paysdk.APIConnectionError):
        return f"{exc} {attempts_made(exc)}"
    if isinstance(exc, paysdk.APIError):
        return f"{_api_error(exc, args)} {attempts_made(exc)}"
    return exc


def _configuration_error(exc: paysdk.ConfigurationError, args: argparse.Namespace) -> str:
    """The error in the command's words, naming the flag or variable each value came from; with
    no base URL set, how to use a sandbox running in the background, if one is."""
    if "base_url" not in vars(args):  # not a command with the connection options
        return in_cli_words(str(exc))
    text = in_cli_words(
        str(exc),
        base_url_from=source_of(args, "--base-url", ENV_BASE_URL),
        secret_key_from=source_of(args, "--secret-key", ENV_SECRET_KEY),
    )
    no_base_url = args.base_url is None and not os.environ.get(ENV_BASE_URL)
    hint = sandbox_hint() if no_base_url else None
    return text if hint is None else f"{text}; {hint}"


_WRONG_BASE_URL = "not found; is base_url right?"
"""How a 404 that is not the service's own begins: it names the client's keyword argument."""
_KEY_NOT_ACCEPTED = "the secret key was not accepted; is it the key of the service at base_url?"
"""How a 401 begins: it names the client's keyword arguments."""


def _api_error(exc: paysdk.APIError, args: argparse.Namespace) -> str:
    """The service's error, its hint in the command's words: a 404 that is not the service's
    own asks whether ``--base-url`` (or ``PAYSDK_BASE_URL``, whichever set it) is right, and a
    401 whether the key given is the key of the service named."""
    text = str(exc)
    base_url_from = source_of(args, "--base-url", ENV_BASE_URL)
    if type(exc) is paysdk.NotFoundError and text.startswith(_WRONG_BASE_URL):
        text = f"not found; is {base_url_from} right?{text[len(_WRONG_BASE_URL) :]}"
    elif isinstance(exc, paysdk.AuthenticationError) and text.startswith(_KEY_NOT_ACCEPTED):
        key_from = source_of(args, "--secret-key", ENV_SECRET_KEY)
        text = (
            f"the secret key was not accepted; is {key_from} the key of the service at "
            f"{base_url_from}?{text[len(_KEY_NOT_ACCEPTED) :]}"
        )
    return text


# --- argument parsing -------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``paysdk`` parser, every command and option with its help."""
    parser = Parser(
        prog=PROG,
        description="Verify and list payments, run a local sandbox, pay in it, send callbacks.",
        epilog=exit_codes_help(),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {paysdk.__version__}")
    commands = parser.add_subparsers(
        title="commands",
        required=True,
        metavar="COMMAND",
        parser_class=Command,
        help="run 'paysdk COMMAND --help' for a command's options",
    )

    client = connection_options()

    add_payment_commands(commands, client)
    add_sandbox_commands(commands)
    add_callback_commands(commands, client)
    add_reconcile_command(commands, client)
    add_ledger_command(commands)
    return parser

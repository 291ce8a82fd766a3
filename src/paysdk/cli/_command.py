"""The parser of a ``paysdk`` subcommand, and the output formats several of them offer."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from ._escape import printable
from ._exits import exit_codes_help

__all__ = ["Command", "Parser", "add_formats", "add_reference"]


class Parser(argparse.ArgumentParser):
    """A parser whose usage errors quote arguments ``printable`` (a script may pass on a
    customer's text holding escape sequences: ``paysdk verify "$REF"``), and whose help and
    errors are plain text, as the command's output is (argparse colours them from 3.14 on)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if sys.version_info >= (3, 14):
            kwargs.setdefault("color", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print the usage and ``message``, its control characters shown as escapes; exit 2.

        Args:
            message: argparse's account of what is wrong with the arguments.
        """
        super().error(printable(message))


class Command(Parser):
    """A subcommand's parser: an argument it does not know is its error, shown with its usage
    (argparse leaves it to the top-level parser, whose usage does not help). Its help ends
    with what each exit code means."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("epilog", exit_codes_help())
        super().__init__(*args, **kwargs)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace or argparse.Namespace())
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, []


def add_formats(parser: argparse.ArgumentParser, default: str, **helps: str) -> None:
    """Give ``parser`` one flag per output format (``json="..."`` adds ``--json`` with that
    help), at most one of them given, each setting ``args.format``; else it is ``default``."""
    group = parser.add_mutually_exclusive_group()
    for name, help_ in helps.items():
        group.add_argument(f"--{name}", dest="format", action="store_const", const=name, help=help_)
    parser.set_defaults(format=default)


def add_reference(parser: argparse.ArgumentParser, kind: Callable[[str], object] = str) -> None:
    """Give ``parser`` the payment's ``reference`` positional, checked by ``kind``."""
    parser.add_argument("reference", type=kind, help="the payment's reference, e.g. order-1042")

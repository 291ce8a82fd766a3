"""The parser of a ``paysdk`` subcommand."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

__all__ = ["Command"]


class Command(argparse.ArgumentParser):
    """A subcommand's parser: an argument it does not know is its error, shown with its usage
    (argparse leaves it to the top-level parser, whose usage does not help)."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace or argparse.Namespace())
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, []

"""A sandbox's state file: its payments between runs, in the seed format, read once at the start
and rewritten atomically after each change (a crash or full disk leaves the previous one whole)."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable

from .._service.records import PaymentRecord, SeedError
from .._service.seed import parse_seed

__all__ = ["StateFileError", "load_state", "save_state"]

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


class StateFileError(SeedError):
    """The state file cannot be read or written, or does not hold payment records."""


def load_state(path: str | os.PathLike[str]) -> list[PaymentRecord] | None:
    """The payments saved in ``path``; ``None`` when there is no such file yet.

    Raises:
        StateFileError: the file exists but cannot be read or is not a seed-format array; the
            message names the file and says how to start afresh.
    """
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8") as file:
            text = file.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise StateFileError(f"cannot read the state file {name!r}: {exc}") from None
    try:
        return parse_seed(text, source=f"the state file {name!r}")
    except SeedError as exc:
        raise StateFileError(
            f"{exc} (fix the file, or delete it to start from the seed again)"
        ) from None


def save_state(path: str | os.PathLike[str], payments: Iterable[PaymentRecord]) -> None:
    """Write ``payments`` to ``path`` atomically (a temporary file renamed over it).

    Raises:
        StateFileError: the file or its directory cannot be written.
    """
    name = os.fspath(path)
    text = json.dumps([record.to_json() for record in payments], indent=2, ensure_ascii=False)
    # a lone surrogate (half an emoji; JSON may carry one) has no UTF-8: escaped, it reads the same
    text = _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match[0]):04x}", text)
    directory = os.path.dirname(os.path.abspath(name))
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=".paysdk-state-", dir=directory)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(text + "\n")
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, name)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        raise StateFileError(f"cannot write the state file {name!r}: {exc}") from None

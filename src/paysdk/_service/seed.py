"""The payments a sandbox starts with: the bundled ``seed.json`` (with the well-known references
below, for demos and tests to rely on) or a JSON file of your own."""

from __future__ import annotations

import json
import os
from importlib import resources
from typing import cast

from .._lazy import publish
from .records import PaymentRecord, SeedError

__all__ = [
    "COMPLETED_REFERENCE",
    "FAILED_REFERENCE",
    "NON_CARD_REFERENCE",
    "UNKNOWN_REFERENCE",
    "default_payments",
    "load_seed",
    "parse_seed",
]

COMPLETED_REFERENCE = "order-1042"
"""A successful card payment: 2500000 NGN."""
FAILED_REFERENCE = "order-1043"
"""A failed card payment: 4999 USD."""
NON_CARD_REFERENCE = "order-1044"
"""A successful payment that was not made by card (no ``authorization``): 85000 GHS."""
UNKNOWN_REFERENCE = "order-0000"
"""A reference that no seed payment has: verify answers the documented 404."""


def parse_seed(text: str, *, source: str = "seed") -> list[PaymentRecord]:
    """Payments from the JSON text of a seed: an array of records.

    Args:
        text: the seed's JSON text.
        source: what to call the seed in messages (its file name).

    Returns:
        The seed's payments, in its order.

    Raises:
        SeedError: not JSON, not an array, an invalid record or a repeated reference.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SeedError(f"{source}: not valid JSON: {exc}") from None
    except RecursionError:  # nested deeper than the interpreter's stack allows
        raise SeedError(f"{source}: not valid JSON: nested too deeply to read") from None
    if not isinstance(data, list):
        raise SeedError(f"{source}: expected a JSON array of payment records")
    payments: dict[str, PaymentRecord] = {}
    for index, item in enumerate(cast("list[object]", data)):
        try:
            record = PaymentRecord.from_json(item)
        except SeedError as exc:
            raise SeedError(f"{source}: record {index}: {exc}") from None
        if record.reference in payments:
            raise SeedError(f"{source}: record {index}: duplicate reference {record.reference!r}")
        payments[record.reference] = record
    return list(payments.values())


def load_seed(path: str | os.PathLike[str]) -> list[PaymentRecord]:
    """Payments from a seed file.

    Args:
        path: the seed file: a JSON array of payment records.

    Returns:
        The file's payments, in its order.

    Raises:
        SeedError: the file cannot be read, or its text is not a valid seed.
    """
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise SeedError(f"cannot read seed file {os.fspath(path)!r}: {exc}") from None
    return parse_seed(text, source=os.fspath(path))


def default_payments() -> list[PaymentRecord]:
    """The bundled seed: eight payments, card and not, completed and failed, five currencies."""
    text = resources.files("paysdk._service").joinpath("seed.json").read_text(encoding="utf-8")
    return parse_seed(text, source="bundled seed.json")


publish("paysdk.sandbox", default_payments, load_seed, parse_seed)

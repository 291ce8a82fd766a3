"""What the ledger answers: a reference's row, and what ``fulfil_once`` did."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from .._errors.quoting import quoted
from .._models.timestamps import as_utc
from ._errors import LedgerError
from ._statements import STATES

__all__ = ["FulfilResult", "LedgerRow", "Outcome"]

T = TypeVar("T")


class Outcome(str, enum.Enum):
    """What ``fulfil_once`` did."""

    FULFILLED = "fulfilled"
    """The action ran now, in this call, and its completion is recorded."""
    ALREADY_FULFILLED = "already_fulfilled"
    """An earlier call fulfilled this reference; the action did not run."""
    IN_PROGRESS = "in_progress"
    """Another worker holds a live claim on it; the action did not run. Try again later."""
    UNKNOWN = "unknown"
    """A claim on it outlived its lease unrecorded: whether its action ran is unknown, so it
    is not run again until someone decides (``resolve``)."""

    def __str__(self) -> str:
        return self.value


@dataclasses.dataclass(frozen=True)
class LedgerRow:
    """One reference's row in the ledger."""

    reference: str
    """The payment's reference."""
    state: str
    """``claimed``, ``fulfilled``, ``released`` (an action failed; retryable), ``refused`` (the
    merchant declined it: a mismatch, a failed payment, no such order), ``ignored`` (not the
    merchant's to fulfil), or ``unknown``: a claim whose lease ran out before its completion was
    recorded (by the database's clock), held until someone resolves it."""
    attempts: int
    """How many times an action was started for it."""
    lease_expires_at: dt.datetime | None
    """When the current claim's lease ends (UTC); ``None`` without a claim."""
    amount: int
    """The payment's amount, as verified."""
    currency: str
    """The payment's currency, as verified."""
    fulfilled_at: dt.datetime | None
    """When its fulfilment was recorded (UTC); ``None`` until then."""
    reason: str | None = None
    """Why the payment was refused or ignored, in the words of whoever decided it."""
    account: str = ""
    """The label of the merchant account it was paid to (``Client(account=...)``); ``""`` for
    an unlabelled one. A fulfilment is one account's payment of one reference."""
    _claim_token: str | None = dataclasses.field(default=None, init=False, repr=False)
    """The current claim's token, known only to the worker holding the claim; ``None`` when
    nobody holds one. The ledger's own: ``state`` and ``lease_expires_at`` say who holds what."""

    @classmethod
    def _from_db(cls, row: Sequence[Any]) -> LedgerRow:
        """A row as the database driver returns it: its columns in ``_statements.row``'s order, each
        of its column's type (``checked``)."""
        reference, state, token, attempts, lease, amount, currency, fulfilled, reason, account = (
            checked(row, ROW_COLUMNS)
        )
        lease, fulfilled = _time(reference, lease), _time(reference, fulfilled)
        made = cls(reference, state, attempts, lease, amount, currency, fulfilled, reason, account)
        object.__setattr__(made, "_claim_token", token)  # frozen: set once, as it is made
        return made

    @property
    def fulfilled(self) -> bool:
        """Whether its fulfilment was recorded."""
        return self.state == "fulfilled"


@dataclasses.dataclass(frozen=True)
class FulfilResult(Generic[T]):
    """What ``fulfil_once`` did for one payment, and what the action returned if it ran."""

    outcome: Outcome
    """What happened: fulfilled now, already fulfilled, in progress elsewhere, or unknown."""
    reference: str
    """The payment's reference."""
    value: T | None = None
    """The action's return value, when ``outcome`` is FULFILLED."""
    row: LedgerRow | None = None
    """The ledger's row when the action did not run: who fulfilled it, when, for how much."""

    @property
    def fulfilled_now(self) -> bool:
        """The action ran here, and its completion was recorded."""
        return self.outcome is Outcome.FULFILLED

    @property
    def already_fulfilled(self) -> bool:
        """An earlier delivery fulfilled it; the action did not run."""
        return self.outcome is Outcome.ALREADY_FULFILLED

    @property
    def in_progress(self) -> bool:
        """Another worker holds the claim; the action did not run."""
        return self.outcome is Outcome.IN_PROGRESS

    @property
    def unknown(self) -> bool:
        """A claim whose outcome is unknown waits for a person (``resolve``)."""
        return self.outcome is Outcome.UNKNOWN


_TEXT, _OPTIONAL_TEXT, _INTEGER = (str,), (str, type(None)), (int,)
ROW_COLUMNS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("reference", _TEXT),
    ("state", _TEXT),
    ("claim_token", _OPTIONAL_TEXT),
    ("attempts", _INTEGER),
    ("lease_expires_at", ()),  # a time, read by ``_time``
    ("amount", _INTEGER),
    ("currency", _TEXT),
    ("fulfilled_at", ()),
    ("reason", _OPTIONAL_TEXT),
    ("account", _TEXT),
)
"""``_statements.row``'s columns, each with the types its value may be (``()``: read elsewhere)."""
FOUND_COLUMNS = tuple(ROW_COLUMNS[i] for i in (0, 1, 5, 6, 8))
"""``_statements.found``'s columns, likewise."""
_STATES = frozenset(STATES)


def checked(row: Sequence[Any], columns: Sequence[tuple[str, tuple[type, ...]]]) -> Sequence[Any]:
    """``row`` if each value is of its column's type (``bool`` is no integer) and its state is
    one the ledger writes, else a `LedgerError` naming the row, the column and what it holds.
    SQLite keeps whatever a row was edited into (``'abc'`` or ``1e30`` as an amount, a blob as a
    reference), which would be listed, compared and reported as if the ledger had recorded it, or
    fail deep in a listing."""
    for (column, kinds), value in zip(columns, row, strict=True):
        if (kinds and type(value) not in kinds) or (column == "state" and value not in _STATES):
            _edited(row, column, value)
    return row


def _edited(row: Sequence[Any], column: str, value: object) -> None:
    """Raise the `LedgerError` of a row whose ``column`` holds ``value``, which no ledger wrote."""
    named = f"for {row[0]!r} " if type(row[0]) is str else ""
    raise LedgerError(
        f"the ledger's row {named}holds {_shown(value)} in its {column} column, which the ledger "
        "never writes there; was the row edited by hand?"
    )


def _shown(value: object) -> str:
    """A value as an error names it: its type and its first 64 characters."""
    if value is None:
        return "NULL"
    text = repr(value)
    return f"{type(value).__name__} {text[:64]}{'...' if len(text) > 64 else ''}"


def _time(reference: str, value: object) -> dt.datetime | None:
    """A timestamp as every database returns it (``_schema.Dialect.read_time``): the ledger's ISO
    text in UTC. One edited by hand into no time, or none in UTC's range, is a `LedgerError`
    naming its row, not a ``ValueError`` from deep in a listing."""
    if value is None:
        return None
    try:
        return as_utc(dt.datetime.fromisoformat(str(value).replace("Z", "+00:00")))
    except ValueError:
        raise LedgerError(
            f"the ledger's row for {quoted(reference, code=True)} holds {str(value)[:64]!r} "
            "where a time in UTC "
            "belongs; was the row edited by hand?"
        ) from None

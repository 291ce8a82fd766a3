"""The steps the ledger's plans yield to their driver, and its answers (``Sleep`` is the core's).
Each is a named tuple (one a statement: half a frozen dataclass's cost); a step outside
``LEDGER_STEPS`` or ``RECONCILE_STEPS`` is the plan's bug, a TypeError from ``drive``. Named tuples
with no fields are equal (``Commit() == Act()``): tell steps apart by type, never by ``==``."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias, TypeVar

from .._core.steps import Sleep
from .._models.wire import hidden_key

if TYPE_CHECKING:
    from .._models.listed import ListedPayment
    from .._models.status import PaymentStatus

__all__ = [
    "LEDGER_STEPS",
    "RECONCILE_STEPS",
    "Act",
    "Acted",
    "Begin",
    "Checked",
    "CloseList",
    "Commit",
    "FindOrder",
    "Found",
    "Fulfil",
    "FulfilledPage",
    "LedgerPlan",
    "LedgerStep",
    "Listed",
    "LookUp",
    "NextBatch",
    "Query",
    "ReconcileStep",
    "Rows",
    "Sleep",
    "Verify",
]

T = TypeVar("T")


# A ledger plan's steps, and their answers.


class Begin(NamedTuple):
    """Start a transaction: a write one (SQLite: ``BEGIN IMMEDIATE``, the write lock), or with
    ``write=False`` a read, waiting for no writer (SQLite: ``BEGIN``); answered with ``None``."""

    write: bool = True


class Query(NamedTuple):
    """Run one statement (``?`` placeholders) in the open transaction; answered with ``Rows``."""

    sql: str
    params: Sequence[object] = ()


class Commit(NamedTuple):
    """Commit the open transaction and give its connection back; answered with ``None``."""


class Act(NamedTuple):
    """Run the merchant's action, no transaction open; answered with ``Acted``."""


class Rows(NamedTuple):
    """What a ``Query`` found: its rows (if any) and how many it changed or returned, as the
    database counts them."""

    rows: list[tuple[Any, ...]]
    rowcount: int


class Acted(NamedTuple):
    """What an ``Act`` came to: what the action returned, or the exception it raised (an
    answer, not thrown in: the plan releases the claim before raising it)."""

    value: object = None
    error: BaseException | None = None


LEDGER_STEPS = (Begin, Query, Commit, Act, Sleep)
"""Every step a ledger plan may yield (``Sleep``: wait, no transaction open, before retrying a
write), as ``_async/run.py`` carries them out; its ``drive`` refuses any other."""


# The reconciliation plan's steps.


class NextBatch(NamedTuple):
    """Read up to ``size`` more listed payments (opening the list first); answered with a list
    of ``Listed``, empty at its end."""

    size: int


class Listed(NamedTuple):
    """What reconcile compares of a listed payment: a batch keeps these, not the models, whose
    objects the garbage collector would walk while the batch lives."""

    reference: str
    amount: int
    currency: str
    status: PaymentStatus | str
    succeeded: bool
    hides: str | None = None
    """The secret key the list's body held (``hidden_key``; ``None``: none), for a discrepancy's
    ``repr`` to blot out as the payment's does."""

    @classmethod
    def of(cls, payment: ListedPayment) -> Listed:
        """The fields reconcile reads of a listed payment, ``succeeded`` as the model decides it."""
        private = payment.__pydantic_private__  # ``None`` but for a few: ``hidden_key`` then
        hides = hidden_key(payment) if private else None
        listed = (payment.reference, payment.amount, payment.currency, payment.status)
        return cls(*listed, payment.succeeded, hides)


class CloseList(NamedTuple):
    """Close the list's stream: nothing more is read from it; answered with ``None``."""


class LookUp(NamedTuple):
    """The ledger's rows for these references, in one query; answered with a mapping of
    reference to ``Found`` (those that have one)."""

    references: Sequence[str]


class Found(NamedTuple):
    """What reconcile compares of a ledger row, read as a plain tuple: a ``LedgerRow`` would
    parse two timestamps and build a dataclass per row."""

    reference: str
    state: str
    """As ``LedgerRow.state`` reads it: ``unknown`` for a claim whose lease ran out."""
    amount: int
    currency: str
    reason: str | None


class Checked(NamedTuple):
    """Tell ``progress`` how many listed payments were checked so far; answered with ``None``."""

    listed: int


class FindOrder(NamedTuple):
    """Ask the merchant's ``lookup`` for this reference's order; answered with what it returned
    (``None``: no such order); what it raised is thrown in."""

    reference: str


class Fulfil(NamedTuple):
    """Verify a missed payment against its order, fulfil it once; answered with ``FulfilResult``."""

    reference: str


class FulfilledPage(NamedTuple):
    """The next page of fulfilled rows' references after ``after``; answered with a list of them
    (references alone: the pass reads every fulfilled row)."""

    after: str
    limit: int


class Verify(NamedTuple):
    """Verify one payment by reference; answered with the ``VerifiedPayment``."""

    reference: str


RECONCILE_STEPS = (NextBatch, CloseList, LookUp, Checked, FindOrder, Fulfil, FulfilledPage, Verify)
"""Every step the reconciliation plan may yield, as ``_async/reconcile.py`` carries them out."""

LedgerStep: TypeAlias = "Begin | Query | Commit | Act | Sleep"
LedgerPlan: TypeAlias = Generator[LedgerStep, Any, T]
ReconcileStep: TypeAlias = (
    "NextBatch | CloseList | LookUp | Checked | FindOrder | Fulfil | FulfilledPage | Verify"
)

"""What reconcile reports: exact counts, and the payments that need attention (up to a limit);
``plan`` fills it."""

from __future__ import annotations

import dataclasses
import enum

from ..._models.blotting import blot_repr

__all__ = [
    "ALARMS",
    "MAX_DISCREPANCIES",
    "Discrepancy",
    "Kind",
    "ReconcileReport",
    "hidden_in",
    "hiding",
]


class Kind(str, enum.Enum):
    """What is wrong with one payment."""

    MISSED = "missed"
    """Completed at the service, never fulfilled: a callback that never came (or failed)."""
    NOT_COMPLETED = "not_completed"
    """Fulfilled, but the service lists it with another status: an alarm."""
    NOT_LISTED = "not_listed"
    """Fulfilled, but the service does not list it at all: an alarm."""
    MISMATCH = "mismatch"
    """Fulfilled, but for another amount or currency than the service now lists."""
    UNKNOWN = "unknown"
    """Claimed, and the claim's lease ran out before its completion was recorded: whether the
    action ran is unknown, so nothing runs it again. A person checks, then ``resolve`` says."""
    REFUSED = "refused"
    """Completed, and the merchant declined it (``Ledger.refuse``: a mismatch, no such order):
    shown with its reason, not an alarm."""
    IGNORED = "ignored"
    """Completed, and recorded as not the merchant's to fulfil (``Ledger.ignore``): shown with
    its reason, not an alarm."""
    FOREIGN = "not_ours"
    """Completed, no ledger row, and ``lookup`` finds no order for it: not the merchant's
    payment (another shop on the same account, a test). Shown, not an alarm, not missed."""

    def __str__(self) -> str:
        return self.value


ALARMS = frozenset({Kind.NOT_COMPLETED, Kind.NOT_LISTED, Kind.MISMATCH, Kind.UNKNOWN})
"""The kinds that need attention whatever happens; ``MISSED`` does unless fulfilled by the run."""


@dataclasses.dataclass(frozen=True)
class Discrepancy:
    """One payment that needs attention, with both sides' view of it."""

    kind: Kind
    """What is wrong."""
    reference: str
    """The payment's reference."""
    status: str | None = None
    """The service's listed status; ``None`` when it does not list the payment."""
    amount: int | None = None
    """The service's amount; ``None`` when it does not list the payment."""
    currency: str | None = None
    """The service's currency; ``None`` when it does not list the payment."""
    fulfilled_amount: int | None = None
    """The amount the ledger recorded; ``None`` when it has no row."""
    fulfilled_currency: str | None = None
    """The currency the ledger recorded; ``None`` when it has no row."""
    fulfilment: str | None = None
    """For a missed payment given to ``fulfil``: ``fulfilled``, ``already_fulfilled``,
    ``in_progress``, or why not (``refused: PaymentMismatchError: ...``, ``error: ...``)."""
    reason: str | None = None
    """Why: a refused or ignored payment's reason as its ledger row has it; for a missed
    payment whose order ``lookup`` found, how the order differs (or that ``lookup`` failed)."""

    @property
    def resolved(self) -> bool:
        """A missed payment that reconcile has now fulfilled (or found fulfilled meanwhile)."""
        return self.fulfilment in ("fulfilled", "already_fulfilled")

    def as_dict(self) -> dict[str, object]:
        """Its fields as plain values, for JSON."""
        return {**dataclasses.asdict(self), "kind": str(self.kind)}

    def __repr__(self) -> str:
        """The dataclass's repr, the secret key blotted out where its payment's body held it (a
        server or proxy echoing it), as the payment's ``repr`` does; the fields keep it."""
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self))
        return blot_repr(f"{type(self).__qualname__}({shown})", self.__dict__.get(_HIDES))

    def __getstate__(self) -> dict[str, object]:
        """Its fields, but with the key its ``repr`` blots out blotted out of them too, and not
        kept: a pickled report (a task's result store, a cache) never holds the key."""
        state = dict(self.__dict__)
        key = state.pop(_HIDES, None)
        if not isinstance(key, str) or not key:
            return state
        return {
            name: value.replace(key, "<secret key>")
            if isinstance(value, str) and key in value  # a Kind without it stays a Kind
            else value
            for name, value in state.items()
        }


_HIDES = "_hides"
"""The attribute of a ``Discrepancy`` holding the key its ``repr`` blots out (``hiding``): no
field, so equality, ``as_dict`` and the constructor never see it."""


def hiding(discrepancy: Discrepancy, key: str | None) -> Discrepancy:
    """``discrepancy``, its ``repr`` blotting out ``key``: the secret key its payment's body held
    (``hidden_key``; ``None``: none, and ``discrepancy`` is left as it is)."""
    if key:
        object.__setattr__(discrepancy, _HIDES, key)
    return discrepancy


def hidden_in(discrepancy: Discrepancy) -> str | None:
    """The key ``discrepancy``'s ``repr`` blots out (``hiding``), for a copy to keep."""
    key: str | None = discrepancy.__dict__.get(_HIDES)
    return key


MAX_DISCREPANCIES = 10_000
"""How many discrepancies a report keeps by default; the counts stay exact beyond it."""


def _no_counts() -> dict[str, int]:
    return {str(kind): 0 for kind in Kind}


@dataclasses.dataclass
class ReconcileReport:
    """What reconcile found: exact counts, and the payments that need attention, up to a limit
    (``max_discrepancies``) so a report's memory stays bounded; ``truncated`` if it was cut."""

    listed: int = 0
    """Payments the service listed."""
    completed: int = 0
    """Of those, completed ones."""
    fulfilled_ok: int = 0
    """Completed, fulfilled, same amount and currency: all is well."""
    discrepancies: list[Discrepancy] = dataclasses.field(default_factory=list[Discrepancy])
    """The first ``max_discrepancies`` found."""
    counts: dict[str, int] = dataclasses.field(default_factory=_no_counts)
    """Discrepancies by kind, every one counted, kept in ``discrepancies`` or not."""
    truncated: bool = False
    """More were found than ``discrepancies`` keeps (see ``counts``)."""
    unresolved_missed: int = 0
    """Missed payments this run did not fulfil (or find fulfilled), kept or not."""
    account: str = ""
    """The merchant account reconciled (its client's ``account=``); ``""``: the unlabelled one.
    Only that account's rows of the ledger were compared with its list."""

    def of_kind(self, kind: Kind) -> list[Discrepancy]:
        """The kept discrepancies of one kind.

        Args:
            kind: the kind wanted.

        Returns:
            Those of ``kind``, in the order found.
        """
        return [d for d in self.discrepancies if d.kind is kind]

    @property
    def needs_attention(self) -> bool:
        """Any alarm, or any missed payment not fulfilled by this run."""
        return sum(self.counts[str(kind)] for kind in ALARMS) > 0 or self.unresolved_missed > 0

    def _add(self, discrepancy: Discrepancy, limit: int) -> int | None:
        """Count ``discrepancy``; keep it if fewer than ``limit`` are kept, and return its index
        in ``discrepancies`` (``None``: only counted)."""
        self.counts[str(discrepancy.kind)] += 1
        if discrepancy.kind is Kind.MISSED and not discrepancy.resolved:
            self.unresolved_missed += 1
        if len(self.discrepancies) >= limit:
            self.truncated = True
            return None
        self.discrepancies.append(discrepancy)
        return len(self.discrepancies) - 1

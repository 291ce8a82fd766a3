"""A sandbox's payments: the store its endpoints read, the payments it started with (for
``Sandbox.reset()``), and its state file (``_state``), saved after every change."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable
from typing import Any

from .._service.records import PaymentRecord, SeedError, records_of
from .._service.seed import default_payments
from .._service.store import PaymentStore
from ._state import load_state, save_state

__all__ = ["SandboxPayments"]


class SandboxPayments:
    """A sandbox's payments, thread-safe, saved to ``state_file`` (if any) after each change;
    from that file when it exists, else ``payments`` (``None``: ``default_payments``).

    Raises:
        StateFileError: the state file exists but cannot be read or parsed.
    """

    def __init__(self, payments: Iterable[PaymentRecord] | None, state_file: str | None) -> None:
        self.state_file = state_file
        self.store = PaymentStore()
        """What it holds now: what the endpoints read."""
        self._save_lock = threading.Lock()
        initial = None if state_file is None else load_state(state_file)
        if initial is None:
            initial = default_payments() if payments is None else records_of(payments)
        self._initial = initial
        self.store.reset(initial)

    def add(self, payment: PaymentRecord | str, /, **fields: Any) -> PaymentRecord:
        """Add (or replace) ``payment``, a record or a new one's reference, with ``fields`` set.

        Raises:
            SeedError: a field of the wrong type or out of range.
            StateFileError: the state file cannot be written.
        """
        if isinstance(payment, str):
            record = PaymentRecord(reference=payment, **fields)
        elif not isinstance(payment, PaymentRecord):
            kind = type(payment).__name__
            raise SeedError(f"add_payment takes a PaymentRecord or a reference, not {kind}")
        else:
            record = dataclasses.replace(payment, **fields) if fields else payment
        self.store.put(record)
        self._save()
        return record

    def remove(self, reference: str) -> None:
        """Remove the payment for ``reference``, if there is one."""
        self.store.remove(reference)
        self._save()

    def get(self, reference: str) -> PaymentRecord | None:
        return self.store.get(reference)

    def newest_first(self) -> list[PaymentRecord]:
        """Every payment, newest first (the order ``GET /payments`` uses)."""
        return self.store.newest_first()

    def reset(self) -> None:
        """Hold the payments it started with again."""
        self.store.reset(self._initial)
        self._save()

    def _save(self) -> None:
        """Write the payments to the state file, if there is one (one writer at a time, each
        writing what the store holds then, so the last write holds every change)."""
        if self.state_file is None:
            return
        with self._save_lock:
            save_state(self.state_file, self.store.newest_first())

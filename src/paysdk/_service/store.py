"""The payments a stand-in of the service holds: one store behind the sandbox and the fake. Handler
threads read it while a test changes it, so each operation locks, and it hands out copies."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterable
from typing import Generic, Protocol, TypeVar

from typing_extensions import Self

from .api import Reply, answer_api
from .faults import Fault
from .records import PaymentRecord, check_json_metadata

__all__ = ["PaymentStore", "StandIn"]


class PaymentStore:
    """Payments by reference, thread-safe; a reference holds one payment, the last one put."""

    def __init__(self, records: Iterable[PaymentRecord] = ()) -> None:
        self._lock = threading.Lock()
        self._payments: dict[str, PaymentRecord] = {}
        self.reset(records)

    def put(self, record: PaymentRecord) -> PaymentRecord:
        """Add ``record``, replacing the payment with its reference if there is one; a
        ``SeedError`` for metadata that is not JSON, which no answer could carry."""
        check_json_metadata(record)
        with self._lock:
            self._payments[record.reference] = record
        return record

    def remove(self, reference: str) -> None:
        """Remove the payment for ``reference``; one that is not there is already removed."""
        with self._lock:
            self._payments.pop(reference, None)

    def get(self, reference: str) -> PaymentRecord | None:
        with self._lock:
            return self._payments.get(reference)

    def newest_first(self) -> list[PaymentRecord]:
        """Every payment, in the order the list endpoint uses: the newest first, by the time in
        UTC (Python orders two times of one zone by their clocks, which a daylight-saving
        change turns back)."""
        with self._lock:
            records = list(self._payments.values())
        utc = dt.timezone.utc
        return sorted(records, key=lambda record: record.created_at.astimezone(utc), reverse=True)

    def reset(self, records: Iterable[PaymentRecord] = ()) -> None:
        """Hold exactly ``records`` (none by default), the last of a reference winning."""
        replacement = {record.reference: record for record in records}
        with self._lock:
            self._payments = replacement

    def __len__(self) -> int:
        with self._lock:
            return len(self._payments)


class Holding(Protocol):
    """What a stand-in keeps its payments in: a ``PaymentStore``, or the sandbox's own."""

    def remove(self, reference: str) -> None: ...
    def get(self, reference: str) -> PaymentRecord | None: ...
    def newest_first(self) -> list[PaymentRecord]: ...


H = TypeVar("H", bound=Holding)


class StandIn(Generic[H]):
    """What the sandbox and the testing kit's fake share: ``with`` starts and stops it, reading
    and removing payments, and answering an API request."""

    secret_key: str
    _payments: H

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def remove_payment(self, reference: str) -> None:
        """Remove the payment for ``reference``; one that is not there is already removed.

        Args:
            reference: the payment's reference.
        """
        self._payments.remove(reference)

    def get_payment(self, reference: str) -> PaymentRecord | None:
        """The payment's record; ``None`` if none is held for it.

        Args:
            reference: the payment's reference.

        Returns:
            The payment's record; ``None`` if none is held for it.
        """
        return self._payments.get(reference)

    @property
    def payments(self) -> list[PaymentRecord]:
        """Every payment, newest first (the order the list endpoint, ``GET /payments``, uses)."""
        return self._payments.newest_first()

    def _answer_api(
        self, method: str, path: str, authorization: str | None, fault: Fault | None
    ) -> Reply:
        """The answer to an API request (a raw path, no query): the service's, or the one
        ``fault`` gives instead if it gives one."""
        if fault is not None and fault.status is not None:
            return Reply(fault.status, fault.body.encode(), fault.headers)
        return answer_api(
            method,
            path,
            authorization,
            secret_key=self.secret_key,
            find=self.get_payment,
            listing=lambda: self.payments,
        )

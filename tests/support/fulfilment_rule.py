"""The fulfilment rule each framework helper follows with a ledger, as cases for their tests.

A view's answer decides what the ledger records: 2xx and 3xx fulfil the payment, 4xx refuses
it (with the status and a body excerpt), 5xx leaves it unfulfilled for the service's retry.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import paysdk
from paysdk.ledger import DEFAULT_TABLE, LedgerRow
from paysdk.testing import verified_payment
from tests.support.merchant import SHOP_ORDERS, Order, Shop

REFERENCE = "order-1042"
"""The sandbox's completed payment that matches the shop's order."""


@dataclasses.dataclass(frozen=True)
class ViewAnswer:
    """What a callback view answers on its first delivery, and what the ledger then holds."""

    id: str
    status_code: int
    body: dict[str, str]
    state: str
    """The ledger row's state after that delivery."""

    @property
    def fulfils(self) -> bool:
        return self.state == "fulfilled"

    @property
    def content(self) -> bytes:
        return json.dumps(self.body).encode()


VIEW_ANSWERS = [
    ViewAnswer("ok", 200, {"status": "ok"}, "fulfilled"),
    ViewAnswer("accepted", 202, {"status": "queued"}, "fulfilled"),
    ViewAnswer("redirect", 303, {"status": "see the receipt"}, "fulfilled"),
    ViewAnswer("refused", 409, {"status": "out of stock"}, "refused"),
    ViewAnswer("server-error", 500, {"status": "warehouse down"}, "released"),
    ViewAnswer("unavailable", 503, {"status": "warehouse down"}, "released"),
]
"""Each kind of answer a view gives; ``ids=`` with :func:`answer_ids`."""


def answer_ids() -> list[str]:
    return [answer.id for answer in VIEW_ANSWERS]


class Views:
    """What a test's view answers: the next queued answer, else 200 ``ok``; and how often it ran."""

    def __init__(self, *answers: ViewAnswer | Exception) -> None:
        self.queue: list[ViewAnswer | Exception] = list(answers)
        self.runs = 0

    def next(self) -> ViewAnswer:
        """The answer to give now; raises a queued exception instead."""
        self.runs += 1
        answer = self.queue.pop(0) if self.queue else VIEW_ANSWERS[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


def assert_recorded(
    answer: ViewAnswer,
    first: tuple[int, bytes],
    retry: tuple[int, bytes],
    row: LedgerRow | None,
    views: Views,
) -> None:
    """The first delivery sent the view's own answer, the ledger recorded it by the rule, and the
    service's retry ran the view again unless the payment was fulfilled."""
    assert first[0] == answer.status_code
    assert json.loads(first[1]) == answer.body
    if answer.fulfils:
        assert (retry[0], json.loads(retry[1])) == (200, {"status": "already_fulfilled"})
        assert views.runs == 1
    else:
        assert (retry[0], json.loads(retry[1])) == (200, {"status": "ok"})
        assert views.runs == 2
    assert row is not None
    assert row.state == "fulfilled"  # at the end: fulfilled by the first or by the retry


def assert_state_after_first(answer: ViewAnswer, row: LedgerRow | None) -> None:
    """The ledger row after the first delivery: fulfilled, refused with why, or released."""
    assert row is not None
    assert row.state == answer.state
    if answer.state == "refused":
        assert row.reason is not None
        assert str(answer.status_code) in row.reason
        assert answer.body["status"] in row.reason
    else:
        assert row.reason is None


Deliver = Callable[[], tuple[int, bytes]]
"""Sends the service's callback for REFERENCE to the app: its status and body."""
RowNow = Callable[[], LedgerRow | None]
"""Reads REFERENCE's ledger row."""


def check_the_rule(answer: ViewAnswer, views: Views, deliver: Deliver, row: RowNow) -> None:
    """Deliver twice: the view answers ``answer``, then 200 ``ok`` if the retry runs it."""
    first = deliver()
    assert_state_after_first(answer, row())
    retry = deliver()
    assert_recorded(answer, first, retry, row(), views)


def raised_by_views() -> list[Exception]:
    """What a view raises on a first delivery: its own error, and a paysdk error of a call the
    view makes itself (a linked payment that failed), which is the view's as much as any."""
    linked = verified_payment(reference="order-deposit", success=False)
    return [
        RuntimeError("the warehouse API is down"),
        paysdk.PaymentFailedError("payment 'order-deposit' did not succeed", payment=linked),
    ]


RAISED_IDS = ["own-error", "paysdk-error"]
"""``ids=`` for :func:`raised_by_views`."""


def check_a_raising_view_is_released(
    views: Views, deliver: Deliver, row: RowNow, ledger_file: Path
) -> None:
    """The view raises on the first delivery: the framework's 500, the claim released, nothing
    else recorded (a paysdk error the view raised says nothing of this callback's payment), and
    the retry runs the view again and fulfils the payment."""
    first = deliver()
    released = row()
    retry = deliver()
    fulfilled = row()
    assert first[0] == 500
    assert released is not None and released.state == "released"
    assert (retry[0], json.loads(retry[1])) == (200, {"status": "ok"})
    assert fulfilled is not None and fulfilled.state == "fulfilled"
    assert views.runs == 2
    assert [reference for reference, _, _ in ledger_rows(ledger_file)] == [REFERENCE]


class ShopOfLinkedOrders(Shop):
    """A shop whose lookup confirms a linked deposit itself on its first call, and the service
    says that one failed: the lookup's own paysdk error, which says nothing of the callback's
    payment; from the second call on it finds the order."""

    def __init__(self) -> None:
        super().__init__(*SHOP_ORDERS)
        self.lookups = 0

    def lookup(self, reference: str) -> Order | None:
        self.lookups += 1
        if self.lookups == 1:
            raise raised_by_views()[1]
        return super().lookup(reference)


def check_a_raising_lookup_is_no_verdict(
    shop: ShopOfLinkedOrders, deliver: Deliver, ledger_file: Path
) -> None:
    """The lookup raises a paysdk error of its own on the first delivery: the framework's 500,
    nothing recorded (no refusal of the linked payment), and the retry fulfils the payment."""
    first = deliver()
    retry = deliver()
    assert first[0] == 500
    assert (retry[0], json.loads(retry[1])) == (200, {"status": "ok"})
    assert [row[:2] for row in ledger_rows(ledger_file)] == [(REFERENCE, "fulfilled")]
    assert (shop.lookups, shop.failed) == (2, [])


def ledger_rows(path: Path) -> list[tuple[str, str, str | None]]:
    """Every row of the SQLite ledger file at ``path``: (reference, state, reason)."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        query = f"SELECT reference, state, reason FROM {DEFAULT_TABLE} ORDER BY reference"  # noqa: S608 - a constant
        return [
            (str(r), str(s), None if why is None else str(why)) for r, s, why in db.execute(query)
        ]

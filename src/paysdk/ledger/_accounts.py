"""Whose rows are whose, I/O-free: a key's payments held under one account's label alone, and a
label matched to the letter (each refused otherwise with ConfigurationError), the label meant by one
typed in another case, and a rotated key retired. Each is a plan of steps (``_steps``) for its one
driver (``_async/run.py``); its SQL: ``_statements``."""

from __future__ import annotations

from .._errors import ConfigurationError
from .._errors.quoting import quoted
from .._models.verified import VerifiedPayment
from . import _statements
from ._reads import read
from ._schema import Dialect
from ._steps import Begin, Commit, LedgerPlan, Query, Rows

_LABEL_EACH = (
    "If the key is this account's new one (a rotated key, or a paysdk sandbox started anew, "
    "which has a key of its own), retire the old one: ledger.retire_key(), or `paysdk ledger "
    "retire-key`. If it is another account's, give each account's client a label "
    "(paysdk.Client(account='lagos-1'), or with_options(secret_key=..., account=...))"
)

_SPLIT_BY_PAYMENT = (
    "{reference} was verified with another account's key than the payments this ledger holds "
    "without an account, and neither client names its account: their references could "
    "collide. {label_each}; nothing was run",
    "{reference} was verified with a key whose payments this ledger holds under {held}, and "
    "its client names {named}: under two labels each of the key's payments would be fulfilled "
    "twice. Label every client of one key alike (Client(account=...)), to the letter; nothing "
    "was run",
)
_SPLIT_BY_RECONCILE = (
    "this client's key is not the one the payments this ledger holds without an account were "
    "verified with, and the client names no account: reconcile would read another account's "
    "payments as its own. {label_each}; nothing was listed",
    "this client's key verified payments this ledger holds under {held}, and the client names "
    "{named}: reconcile would find none of them, report each as missed, and with fulfil= "
    "fulfil it again. Reconcile with the client labelled as the callback view's is "
    "(Client(account=...); paysdk reconcile --account), the same label to the letter; nothing "
    "was listed",
)
"""``_refuse_split``'s ``str.format`` templates for ``check_key`` and ``check_reconciled_key``."""


def check_key(
    dialect: Dialect, table: str, payment: VerifiedPayment | None, *, recorded: bool = False
) -> LedgerPlan[None]:
    """After a write, refuse (ConfigurationError; rolled back) a payment whose key's rows would be
    split between accounts (``_refuse_split``). A key's first row under its account (``recorded``)
    reads ``key_rows`` again under ``Dialect.key_lock``: a PostgreSQL transaction sees only
    committed rows besides its own (a later row's conflicts see it)."""
    if payment is None or not payment.verified_by:
        return  # only a payment whose key is known is checked
    account, key = payment.account, payment.verified_by
    read = Query(_statements.key_rows(table), (account, key, payment.reference, key, key))
    found: Rows = yield read
    if recorded and dialect.key_lock is not None and found.rows[0][0] is None:
        yield Query(dialect.key_lock)
        found = yield read  # read again once every earlier first row is committed
    _refuse_split(found, account, key, _SPLIT_BY_PAYMENT, payment.reference)


def check_reconciled_key(table: str, account: str, issuer: str) -> LedgerPlan[None]:
    """Refuse (ConfigurationError) to reconcile a client whose rows would not be its own, as
    ``check_key`` refuses a payment: reconcile would report the key's fulfilled payments as
    missed, and with ``fulfil`` fulfil them again. A client with no key passes."""
    if not issuer:
        return
    found = yield from read(_statements.key_rows(table), (account, issuer, "", issuer, issuer))
    _refuse_split(found, account, issuer, _SPLIT_BY_RECONCILE)


def _refuse_split(
    found: Rows, account: str, key: str, refusals: tuple[str, str], reference: str = ""
) -> None:
    """ConfigurationError (``refusals``' first or second) if ``key_rows``' answer shows an
    unlabelled client's key is not the unlabelled rows' (references of two accounts could collide),
    or another label than ``account`` holds the key's rows (each fulfilled once under each)."""
    shown = quoted(reference, code=True)
    _, least, greatest, *ends = found.rows[0]
    if not account and any(end not in (None, key) for end in ends):
        raise ConfigurationError(refusals[0].format(reference=shown, label_each=_LABEL_EACH))
    for label in (least, greatest):
        if label is not None and str(label) != account:
            held, named = (
                f"account {name!r}" if name else "no account" for name in (str(label), account)
            )
            raise ConfigurationError(refusals[1].format(reference=shown, held=held, named=named))


def check_label_case(
    dialect: Dialect, table: str, account: str, reference: str
) -> LedgerPlan[None]:
    """After setting a bare reference aside, refuse (ConfigurationError; rolled back) a label of no
    other row while rows are held under it in another case: typed by hand (``paysdk ledger refuse
    --account Lagos-1``), it would record the refusal where no client looks, the payment still
    reported missed. Likewise no label where the unlabelled account holds no other row and labels
    hold rows (a platform's, whose every client is labelled)."""
    if not account:
        unlabelled: Rows = yield Query(_statements.unlabelled_rows(table), (reference,))
        own, held = unlabelled.rows[0]
        if own is None and held is not None:
            raise ConfigurationError(
                "this ledger holds no payment without an account, and holds payments under "
                f"account {held!r} (and maybe others): a payment set aside without an account "
                "would be recorded where no client looks, so name its account as its client "
                "does (account=, paysdk ledger --account); nothing was recorded"
            )
        return
    label = Query(_statements.label_rows(dialect, table), (account, reference, account, account))
    found: Rows = yield label
    own, held = found.rows[0]
    if own is None and held is not None:  # an account of its own is kept, however like another
        raise ConfigurationError(
            f"this ledger holds no payment under account {account!r}, and holds payments under "
            f"account {held!r}, its label in another case: a label is matched to the letter, so "
            f"name the account as its client does ({held!r}); nothing was recorded"
        )


def label_meant(dialect: Dialect, table: str, account: str) -> LedgerPlan[str | None]:
    """The label that holds rows where ``account`` holds none (else ``None``): what ``paysdk
    ledger list`` names on finding nothing. For a label, the one equal to it but for case
    (``--account Lagos-1``); for no label, the least label, where only labels hold rows (a
    platform's ledger). ``check_label_case``'s statements, which walk the labels only then."""
    if not account:
        found = yield from read(_statements.unlabelled_rows(table), ("",))
    else:
        found = yield from read(
            _statements.label_rows(dialect, table), (account, "", account, account)
        )
    own, held = found.rows[0]
    return str(held) if own is None and held is not None else None


def retire_key(table: str) -> LedgerPlan[int]:
    """Clear the unlabelled rows' key fingerprints, so that a rotated key's payments are fulfilled
    and its old rows still answer a replayed callback; how many rows it cleared."""
    yield Begin()
    cleared: Rows = yield Query(_statements.retire_keys(table))
    yield Commit()
    return cleared.rowcount

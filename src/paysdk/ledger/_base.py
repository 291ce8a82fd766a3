"""What ``Ledger`` and ``AsyncLedger`` share: the URL, the table, the lease, and the plans
(``_fulfilment``, ``_reads``) each of their methods runs, built and checked before any I/O."""

from __future__ import annotations

import datetime as dt
import os
import re
import urllib.parse
from typing import Any

from .._core.config import check_account
from .._core.expected import check_lookup
from .._errors import ConfigurationError, PaySDKError
from .._errors.quoting import quoted
from .._models.verified import VerifiedPayment
from . import _checks, _fulfilment, _reads, _schema
from ._errors import frameless
from ._rows import FulfilResult, LedgerRow
from ._steps import LedgerPlan

__all__ = ["DEFAULT_LEASE", "sqlite_file"]

DEFAULT_LEASE = dt.timedelta(minutes=5)
MAX_TIMEOUT = 32767.0
"""The longest ``timeout``, in seconds: Linux's longest TCP keepalive idle time, which a
PostgreSQL ledger's connections take from it; beyond it (or infinite) every call would fail."""
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.IGNORECASE | re.ASCII)


def _target(url: str | os.PathLike[str]) -> tuple[str, str]:
    """``("sqlite", path)`` or ``("postgresql", url)`` for what a merchant may give."""
    if not isinstance(url, str):
        if isinstance(url, os.PathLike):
            return "sqlite", os.fspath(url)
        raise ConfigurationError(f"a ledger needs a URL or a path, not {type(url).__name__}")
    scheme = _SCHEME.match(url)
    if scheme is None and "://" in url:  # a look-alike letter: "\uff50ostgresql://" is no path
        raise ConfigurationError(
            f"unsupported ledger URL scheme {url.partition('://')[0]!a}: a scheme is ASCII letters "
            "(sqlite:///path.db or postgresql://user@host/db)"
        )
    if scheme is None:
        return "sqlite", url
    name = scheme.group(1).lower()
    if name == "sqlite":  # SQLAlchemy's form: sqlite:///relative.db, sqlite:////absolute.db
        if url.lower().startswith("sqlite:///"):
            return "sqlite", _sqlite_url_path(url[len("sqlite:///") :])
        if url[scheme.end() :]:  # sqlite://shop.db: the file's name is where a host goes
            raise ConfigurationError(
                f"the SQLite ledger URL {url[:60]!r} names a host, not a file: a relative path "
                "takes three slashes (sqlite:///shop.db), an absolute one four "
                "(sqlite:////var/lib/shop.db)"
            )
        return "sqlite", ""
    if name in ("postgresql", "postgres"):
        return "postgresql", url
    raise ConfigurationError(
        f"unsupported ledger URL scheme {name!a}: use sqlite:///path.db, a path, "
        "or postgresql://user@host/db"
    )


def _sqlite_url_path(path: str) -> str:
    """A ``sqlite:///`` URL's path, if SQLAlchemy opens the same file given the same URL (an app's
    engine, which ``paysdk ledger`` and ``paysdk reconcile`` are given the plain URL of): it ends
    the path at a ``?`` (its driver's options) and, from 2.1 on, decodes ``%`` escapes, where the
    ledger reads the path as it is. Where they may differ it is refused: the two would keep two
    ledgers, each fulfilling the same payment once. A ``file:`` URI is left to ``sqlite_path``,
    which refuses it."""
    if path.startswith("file:") or ("?" not in path and urllib.parse.unquote(path) == path):
        return path
    raise ConfigurationError(
        "the SQLite ledger URL's path holds a '?' or a '%' escape, which SQLAlchemy reads as the "
        "start of its driver's options or (from 2.1 on) as the character it encodes, and the "
        "ledger as they "
        "are: the same URL would open two files, each a ledger of its own; give the ledger the "
        "database file's path itself (without sqlite:///), which it reads as it is"
    )


def sqlite_file(url: str | os.PathLike[str]) -> str | None:
    """The file a SQLite ledger's URL or path names; ``None`` for a server or an in-memory one.

    Args:
        url: what ``Ledger`` takes: ``sqlite:///path.db``, a path, or ``postgresql://...``.

    Returns:
        The database file's path; ``None`` for a server or an in-memory database.

    Raises:
        ConfigurationError: the URL names a database the ledger does not support.
    """
    kind, target = _target(url)
    return target if kind == "sqlite" and target not in ("", ":memory:") else None


class _Unshown:
    """A ledger's URL as its constructor holds it: a password in it is not in a frame's locals."""

    __slots__ = ("value",)

    def __init__(self, value: str | os.PathLike[str]) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<the ledger's URL, not shown: it may hold a password>"


class BaseLedger:
    """What both ledgers share: the URL, the table, the lease, and their presentation."""

    _backend: str
    """``"sqlite"`` or ``"postgresql"``: the database the URL names."""
    _shown: str
    """The database as a repr shows it: a SQLite file, or a server with no user or password."""

    def __init__(
        self,
        url: str | os.PathLike[str],
        *,
        lease: float | dt.timedelta = DEFAULT_LEASE,
        table: str = _schema.DEFAULT_TABLE,
        create_table: bool = True,
        timeout: float = 30.0,
    ) -> None:
        """Open a ledger on SQLite or PostgreSQL; the table is created on first use.

        Args:
            url: ``sqlite:///path``, a file path, or ``postgresql://user@host/db``.
            lease: how long a claim holds before another worker may take it over (seconds or a
                ``timedelta``; 5 minutes by default), by the database's clock.
            table: the table's name (``schema.name`` allowed).
            create_table: ``False`` when your migrations own the table (see
                [Fulfilment](fulfilment.md)).
            timeout: the longest one database wait may take, in seconds: a lock (both), or on
                PostgreSQL connecting, a dead peer, a statement (twice it): beyond it,
                LedgerError, so a stuck worker or database fails a call instead of hanging it.
                At most 32767 (about 9 hours).

        Raises:
            ConfigurationError: a URL of no supported database or a malformed one (the
                message says which part, never the password), a bad lease, table name or
                timeout, or PostgreSQL without the ``postgres`` extra.
        """
        # A debug page lists each frame's locals: this frame holds the URL only under a repr
        # that shows none of it, and a refusal is raised without the frames below that read it
        # (the URL, libpq's parts of it). Any other exception is a bug, which keeps its frames.
        given = _Unshown(url)
        del url
        refused: BaseException | None = None
        try:
            self._backend, self._where = _target(given.value)
            if self._backend == "sqlite":
                from ._databases.sqlite import sqlite_path

                self._where = sqlite_path(self._where)
            self._settle(lease=lease, table=table, create_table=create_table, timeout=timeout)
            self._shown = self._where if self._backend == "sqlite" else self._driver.target.shown
        except PaySDKError as exc:
            refused = frameless(exc)
        if refused is not None:  # raised here, where no exception is being handled: no context
            raise refused

    def _settle(
        self, *, lease: float | dt.timedelta, table: str, create_table: bool, timeout: float
    ) -> None:
        """Check and keep what every ledger takes, then open its driver (``_open_driver``): shared
        with the ledgers on another's connections (Django's, SQLAlchemy's)."""
        self.lease: dt.timedelta = _checks.check_lease(lease)
        self.table: str = _checks.check_table(table, self._backend)
        if not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_TIMEOUT:
            raise ConfigurationError(
                f"timeout must be a positive number of seconds, at most {MAX_TIMEOUT:g} (the "
                f"longest TCP keepalive a PostgreSQL connection takes), not {quoted(timeout)}"
            )
        self.timeout: float = float(timeout)
        self._create_table = create_table
        self._ready = not create_table
        self._driver = self._open_driver()

    def _open_driver(self) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return (
            f"<paysdk.{type(self).__name__} {self._backend} {self._shown!r} table={self.table!r}>"
        )

    def _fulfil_plan(self, payment: object) -> LedgerPlan[FulfilResult[Any]]:
        checked = _checks.check_payable(payment)
        # recording what an action did is tried for twice the timeout (60 s by default), so a
        # database restart or failover of a few seconds never leaves an action that ran unrecorded
        return _fulfilment.fulfil_once(
            self._driver.dialect, self.table, checked, self.lease, record_for=2 * self.timeout
        )

    def _resolve_plan(self, reference: str, ran: object, account: object) -> LedgerPlan[LedgerRow]:
        if not isinstance(ran, bool):
            raise ConfigurationError(f"resolve needs ran=True or ran=False, not {quoted(ran)}")
        (checked,) = _checks.check_references([reference])
        return _fulfilment.resolve(
            self._driver.dialect, self.table, checked, ran=ran, account=check_account(account)
        )

    def _rows_plan(
        self, after: object, limit: object, state: object, account: object
    ) -> LedgerPlan[list[LedgerRow]]:
        checked, label = _checks.check_state(state), check_account(account)
        if not isinstance(after, str):  # None would compare with NULL: no rows, silently
            raise ConfigurationError(
                f'after must be a reference (a str, "" for the first page), not '
                f"{type(after).__name__}"
            )
        if not _checks.stored_as_is(after):  # PostgreSQL refuses a NUL; no UTF-8 has a surrogate
            raise ConfigurationError(
                f"after must be a reference (the last of the previous page), and no reference "
                f"holds a NUL or a lone surrogate, as {after[:40]!r} does"
            )
        # a LIMIT is a signed 64-bit integer, as amounts are
        most = min(check_limit(limit, "limit"), _checks.AMOUNTS.stop - 1)
        return _reads.rows_after(self._driver.dialect, self.table, after, most, checked, label)

    def _set_aside_plan(
        self,
        payment: VerifiedPayment | str,
        state: _fulfilment.SetAside,
        reason: object,
        account: object = "",
    ) -> LedgerPlan[LedgerRow]:
        target = _checks.set_aside_target(
            payment, _checks.check_reason(reason), check_account(account)
        )
        verified = payment if isinstance(payment, VerifiedPayment) else None
        return _fulfilment.set_aside(self._driver.dialect, self.table, target, state, verified)


def needs_lookup(fulfil: object, lookup: object) -> None:
    check_lookup(lookup)
    if fulfil is not None and lookup is None:
        raise ConfigurationError(
            "reconcile(fulfil=...) needs lookup= to find each order, so a missed payment is "
            "fulfilled only if it matches its order's amount and currency"
        )


def check_limit(limit: object, name: str = "max_discrepancies") -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ConfigurationError(f"{name} must be a positive int, not {quoted(limit)}")
    return limit

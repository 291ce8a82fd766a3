"""The SQLite backend: one file, many threads and processes on one machine. WAL lets readers run
beside the one writer; ``BEGIN IMMEDIATE`` takes the write lock before the claim is read, so two
claims never interleave; ``busy_timeout`` makes a writer wait its turn instead of failing."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from ..._errors import ConfigurationError
from .._errors import LedgerError
from .._schema import SQLITE, before_accounts
from .._steps import Rows
from .driver import AsyncConnection, Connection, Idle

if TYPE_CHECKING:
    import anyio

__all__ = ["AsyncSQLiteDriver", "SQLiteDriver"]

T = TypeVar("T")


class _SQLiteConnection:
    def __init__(
        self, raw: sqlite3.Connection, path: str, busy_timeout: float, opened: str
    ) -> None:
        self.raw = raw
        self.path = path
        self.busy_timeout = busy_timeout
        self.opened = opened

    def execute(self, sql: str, params: Sequence[object]) -> Rows:
        try:
            cursor = self.raw.execute(sql, params)
            return Rows(cursor.fetchall(), cursor.rowcount)
        except sqlite3.Error as exc:
            raise sqlite_error(exc, self.path, self.busy_timeout, self.opened) from exc

    def commit(self) -> None:
        try:
            self.raw.execute("COMMIT")
        except sqlite3.Error as exc:
            raise sqlite_error(exc, self.path, self.busy_timeout, self.opened) from exc

    def rollback(self) -> None:
        """Best effort: a connection that cannot roll back is closed by ``done``, not reused."""
        with contextlib.suppress(sqlite3.Error):
            if self.raw.in_transaction:
                self.raw.execute("ROLLBACK")


class SQLiteDriver:
    """Short write transactions on pooled connections to one SQLite file."""

    dialect = SQLITE

    def __init__(self, path: str, *, busy_timeout: float, create: bool = True) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self.create = create
        self._idle: Idle[_SQLiteConnection] = Idle()
        self._wal = False
        self._wal_lock = threading.Lock()
        self._wal_pid = os.getpid()
        self._file: tuple[int, int] | None = None
        """The file the path named when the first connection opened it (device, inode)."""
        self._opened = path
        """The path as the first connection opened it, made absolute before it connects: a
        relative path read after the process changed directory would name another file."""

    def begin(self, write: bool = True) -> Connection:
        self._check_same_file()
        connection = self._idle.take() or self._connect()
        try:
            connection.raw.execute("BEGIN IMMEDIATE" if write else "BEGIN")  # reads: no lock wait
        except sqlite3.Error as exc:
            connection.raw.close()
            raise sqlite_error(exc, self.path, self.busy_timeout, self._opened) from exc
        return connection

    def done(self, connection: Connection) -> None:
        assert isinstance(connection, _SQLiteConnection)
        if connection.raw.in_transaction or not self._idle.give(connection):
            connection.raw.close()  # a failed COMMIT or ROLLBACK (never reused), or enough idle

    def close(self) -> None:
        for connection in self._idle.drain():
            connection.raw.close()

    def _connect(self) -> _SQLiteConnection:
        if self._file is None:
            self._opened = os.path.abspath(self.path)
        if not self.create and not os.path.exists(self._opened):
            raise LedgerError(f"there is no SQLite ledger at {self.path!r}")
        try:
            raw = sqlite3.connect(
                self._opened,
                timeout=self.busy_timeout,  # sets SQLite's busy_timeout
                isolation_level=None,  # transactions are explicit: BEGIN IMMEDIATE ... COMMIT
                check_same_thread=False,  # the async twin uses it from worker threads
            )
        except sqlite3.Error as exc:
            raise sqlite_error(exc, self.path, self.busy_timeout, self._opened) from exc
        if self._file is None:
            self._file = _identity(self._opened)
        if not self._wal:
            if self._wal_pid != os.getpid():  # forked while a thread of the parent held it
                self._wal_lock, self._wal_pid = threading.Lock(), os.getpid()
            with self._wal_lock:
                try:
                    _switch_to_wal(raw, self.busy_timeout)
                except sqlite3.Error as exc:
                    raw.close()
                    raise sqlite_error(exc, self.path, self.busy_timeout, self._opened) from exc
                self._wal = True
        return _SQLiteConnection(raw, self.path, self.busy_timeout, self._opened)

    def _check_same_file(self) -> None:
        """LedgerError if the path names another file than the one opened, or none: replaced (a
        backup restored by ``mv``) or deleted, the opened file holds rows no process opening the
        path sees, so fulfilling from either could run a payment twice."""
        if self._file is None:
            return
        now = _identity(self._opened)
        if now == self._file:
            return
        how = "deleted" if now is None else "replaced by another file"
        raise LedgerError(
            f"the SQLite ledger {self.path!r} was {how} after this ledger opened it: the file it "
            "opened holds rows that no process opening the path sees, so it fulfils nothing "
            "from it; make a new ledger (or restart the process) to use the file at the path"
        )


def _identity(path: str) -> tuple[int, int] | None:
    """The file ``path`` names, as (device, inode); ``None`` if none (nor a directory on its way);
    LedgerError if it cannot be looked up (a symbolic link loop)."""
    try:
        status = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise LedgerError(
            f"the SQLite ledger {path!r} cannot be looked up: {exc.strerror}"
        ) from exc
    return status.st_dev, status.st_ino


WAL_RETRY_PAUSE = 0.02
"""Seconds between two tries of the switch to WAL while another connection writes."""


def _switch_to_wal(raw: sqlite3.Connection, timeout: float) -> None:
    """Put the file in WAL mode (persistent: once a file), trying again until ``timeout`` while it
    is locked: in a new file's rollback mode, the switch fails at once while another process writes
    (several workers opening a new ledger), without SQLite's busy wait (which could deadlock)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            raw.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _is_locked(exc) or time.monotonic() + WAL_RETRY_PAUSE > deadline:
                raise
        time.sleep(WAL_RETRY_PAUSE)


def _is_locked(exc: sqlite3.Error) -> bool:
    name = getattr(exc, "sqlite_errorname", "")  # Python 3.11+; the message says it too
    return name.startswith("SQLITE_BUSY") or "database is locked" in str(exc)


class AsyncSQLiteDriver:
    """``SQLiteDriver`` from async code, each call in an anyio worker thread; one write transaction
    a ledger at a time: writers waiting in ``BEGIN IMMEDIATE`` would each hold one of anyio's 40
    threads, till the lock's holder found none to commit in: all timed out. Here they hold none."""

    dialect = SQLITE

    def __init__(self, path: str, *, busy_timeout: float, create: bool = True) -> None:
        self.sync = SQLiteDriver(path, busy_timeout=busy_timeout, create=create)
        self._writer: tuple[anyio.Semaphore, int] | None = None
        """The write turn, and the process it was made in: a forked child makes its own."""

    async def begin(self, write: bool = True) -> AsyncConnection:
        if not write:  # a read takes no lock (WAL), so never waits holding a thread
            return _InThread(await self._begun(write))
        import anyio

        if self._writer is None or self._writer[1] != os.getpid():
            self._writer = anyio.Semaphore(1), os.getpid()
        writer, acquired = self._writer[0], False
        with anyio.move_on_after(self.sync.busy_timeout):
            await writer.acquire()
            acquired = True
        if not acquired:  # another task of this process held it as long as SQLite would wait
            sync, locked = self.sync, sqlite3.OperationalError("database is locked")
            raise sqlite_error(locked, sync.path, sync.busy_timeout, sync._opened)
        try:
            return _InThread(await self._begun(write), writer)
        except BaseException:
            writer.release()
            raise

    async def _begun(self, write: bool) -> Connection:
        """A connection whose transaction a worker thread began; if cancelled meanwhile, rolled
        back and given back, since no caller holds it."""
        begun: list[Connection] = []

        def begin() -> Connection:
            begun.append(self.sync.begin(write))
            return begun[0]

        try:
            return await _in_thread(begin)
        except BaseException:
            if begun:
                await _in_thread(lambda: self._abandon(begun[0]))
            raise

    def _abandon(self, connection: Connection) -> None:
        connection.rollback()
        self.sync.done(connection)

    async def done(self, connection: AsyncConnection) -> None:
        assert isinstance(connection, _InThread)
        try:
            await _in_thread(lambda: self.sync.done(connection.connection))
        finally:
            connection.release()

    async def close(self) -> None:
        await _in_thread(self.sync.close)


class _InThread:
    def __init__(self, connection: Connection, writer: anyio.Semaphore | None = None) -> None:
        self.connection = connection
        self.writer = writer
        """The ledger's one write transaction, held until ``release``; ``None`` for a read."""

    async def execute(self, sql: str, params: Sequence[object]) -> Rows:
        return await _in_thread(lambda: self.connection.execute(sql, params))

    async def commit(self) -> None:
        await _in_thread(self.connection.commit)

    async def rollback(self) -> None:
        await _in_thread(self.connection.rollback)

    def release(self) -> None:
        """Let the next write transaction begin (once, however often called)."""
        writer, self.writer = self.writer, None
        if writer is not None:
            writer.release()


async def _in_thread(function: Callable[[], T]) -> T:
    """``function()`` in a worker thread, never abandoned: cancelled, this waits for the thread to
    end, so no statement runs after its caller rolled back, nor begins a transaction nobody ends.
    anyio's cancel scopes wait for the thread; asyncio's cancellation (``asyncio.timeout``,
    ``Task.cancel``) does not, so under asyncio the work runs in a task of its own, shielded."""
    import asyncio

    import anyio.to_thread  # httpx depends on anyio; loaded only by async users

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # trio: only cancel scopes, which wait for the thread
        return await anyio.to_thread.run_sync(function)
    work = loop.create_task(anyio.to_thread.run_sync(function))
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        with anyio.CancelScope(shield=True):  # a cancelled scope cancels no wait in here
            while not work.done():  # cancelled again by asyncio: raised once it has ended
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(work)
        raise


def sqlite_error(
    exc: sqlite3.Error, path: str, timeout: float, opened: str | None = None
) -> LedgerError:
    """The ledger's error for sqlite3's ``exc``, saying what is wrong and naming the file as the
    caller gave it (``path``); ``timeout``: the ledger's busy timeout, in seconds; ``opened``: the
    absolute path the file was opened at, whose directory the message names (``path`` made
    absolute after the process changed directory would name another)."""
    name = getattr(exc, "sqlite_errorname", "")  # Python 3.11+; the message says it too
    text = str(exc)
    directory = os.path.dirname(opened or os.path.abspath(path))
    if name.startswith("SQLITE_READONLY") or "readonly database" in text:
        problem = (
            "is read-only for this process: it cannot write the file, or create its journal "
            f"({os.path.basename(path)}-wal, -shm) in {directory!r}; check the permissions "
            "(and immutable attribute, or read-only mount) of the file and its directory"
        )
    elif _is_locked(exc):
        problem = (
            f"stayed locked by another connection for more than {timeout:g}s (the ledger's "
            "timeout): a long transaction elsewhere holds its write lock"
        )
    elif name.startswith("SQLITE_NOTADB") or "file is not a database" in text:
        problem = (
            "is not a SQLite database: the path names another kind of file (or an encrypted "
            "database); check that it is the ledger's"
        )
    elif name.startswith("SQLITE_FULL") or "database or disk is full" in text:
        problem = (
            "cannot grow: the filesystem that holds it (and its -wal journal) is full; free "
            "space there"
        )
    elif not os.path.isdir(directory):
        problem = f"cannot be opened: its directory {directory!r} does not exist"
    elif os.path.isdir(opened or path):
        problem = "cannot be opened: it is a directory; give the path of the database file in it"
    elif name.startswith("SQLITE_CANTOPEN") or "unable to open" in text:
        problem = "cannot be opened: check that the path is a file this process may open"
    else:
        return LedgerError(f"the SQLite ledger {path!r} failed: {text}{before_accounts(text)}")
    return LedgerError(f"the SQLite ledger {path!r} {problem} ({text})")


def sqlite_path(path: str | os.PathLike[str]) -> str:
    """``path``, if it names a file: never an in-memory database, nor a ``file:`` URI, which a
    SQLite built to read URIs (many are) opens as one (``file::memory:`` too), another as a file."""
    text = os.fspath(path)
    if not text or text == ":memory:":
        raise ConfigurationError(
            "an in-memory SQLite ledger forgets everything and is not shared: give a file path"
        )
    if text.startswith("file:"):  # SQLite reads a URI by this exact, case-sensitive prefix
        raise ConfigurationError(
            f"a SQLite URI is not a ledger's path ({text[:40]!r}): some SQLite builds open "
            "it as a URI (file::memory: is then an unshared in-memory database), others as a "
            "file of that name; give the database file's path"
        )
    return text

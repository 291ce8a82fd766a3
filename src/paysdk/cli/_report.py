"""How the ``paysdk`` command reports: one-line errors in its own words, attempts, closed pipes,
a bug as a bug, and tables, JSON and CSV whose strings cannot drive a terminal or a spreadsheet.
``--verbose`` shows the records the ``paysdk`` logger already writes (a request sent at DEBUG, a
retry at INFO): the core need not know a command line exists.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import errno
import functools
import io
import logging
import os
import re
import sys
import traceback
import unicodedata
from collections.abc import Generator, Iterable, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO, cast

from .._errors import PaySDKError
from ._escape import json_text, printable, spreadsheet_cell, table_cell
from ._exits import EXIT_BROKEN_PIPE

if TYPE_CHECKING:
    from .._models.wire import WireModel

PROG = "paysdk"

_CLI_WORDS = [  # the library's keyword arguments, as the command spells them
    (re.compile(r"\ballow_insecure_http=True\b"), "--allow-insecure-http"),
    (re.compile(r"\bfulfil=(?=\s)"), "--fulfil"),  # "with fulfil= fulfil it again"
    (re.compile(r"\b(secret_key|base_url|max_retries|timeout)(=\.\.\.)?(?=\W|$)"), None),
    (re.compile(r"; use None for no limit"), ""),
]


def print_error(exc: BaseException | str, code: int) -> int:
    """Print ``paysdk: error: ...`` as one line on stderr and return ``code``."""
    message = " ".join(str(exc).split())  # one line, whatever the exception's text holds
    print(f"{PROG}: error: {printable(message)}", file=sys.stderr)
    return code


def print_internal_error(exc: BaseException, code: int) -> int:
    """Print ``exc``'s traceback (no local variables: what a bug report needs), then one line
    calling it a bug, on stderr; return ``code``."""
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    sys.stderr.write(printable(trace, keep_newlines=True))
    said = " ".join(str(exc).split())
    what = f"{type(exc).__name__}: {said}" if said else type(exc).__name__
    print(
        f"{PROG}: internal error (a bug in paysdk or a library it uses, not the service): "
        f"{printable(what)}; please report it",
        file=sys.stderr,
    )
    return code


_BASE_URL_VALUE = re.compile(r"\bbase_url\b(?!=)")  # the value given, not "pass base_url=..."
_SECRET_KEY_VALUE = re.compile(r"^the secret key\b")  # "the secret key has ...", "... is empty"


def in_cli_words(
    message: str, *, base_url_from: str = "--base-url", secret_key_from: str | None = None
) -> str:
    """A configuration error in flags, not keyword arguments; ``base_url_from`` and
    ``secret_key_from`` name where a value came from (its flag, else its variable)."""
    message = _BASE_URL_VALUE.sub(base_url_from, message)
    if secret_key_from is not None:
        message = _SECRET_KEY_VALUE.sub(f"the secret key from {secret_key_from}", message)
    for pattern, replacement in _CLI_WORDS:
        message = pattern.sub(
            replacement if replacement is not None else lambda m: "--" + m[1].replace("_", "-"),
            message,
        )
    return message


def broken_pipe() -> int:
    """Whoever read our output stopped (``| head``): exit quietly, as Unix tools do."""
    _to_devnull(sys.stdout)  # Python flushes stdout again at exit: so that stays quiet
    return EXIT_BROKEN_PIPE


def _to_devnull(stream: TextIO) -> None:
    """Point ``stream``'s descriptor at ``/dev/null``; a stream that is not a real file
    (captured in tests) has nothing to silence."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


def attempts_made(error: PaySDKError) -> str:
    """``(3 attempts)``: for the end of an error from the service, from the error itself."""
    return f"({error.attempts} attempt{'' if error.attempts == 1 else 's'})"


class VerboseLog(logging.Handler):
    """``--verbose``: shows each request a command sends and each retry, on stderr."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.sent = 0

    @contextmanager
    def watching(self) -> Generator[None, None, None]:
        """Listen to the ``paysdk`` logger (at DEBUG) for the duration of a command."""
        logger = logging.getLogger("paysdk")
        level = logger.level
        logger.addHandler(self)
        logger.setLevel(logging.DEBUG)
        try:
            yield
        finally:
            logger.removeHandler(self)
            logger.setLevel(level)

    def emit(self, record: logging.LogRecord) -> None:
        if record.name != "paysdk":
            return
        if record.levelno == logging.DEBUG:  # one per request sent: "GET url -> 200"
            self.sent += 1
            print(f"{PROG}: attempt {self.sent}: {printable(record.getMessage())}", file=sys.stderr)
        else:  # "GET url failed (ServerError); retry 1 of 2 in 0.52s"
            print(f"{PROG}: {printable(record.getMessage())}", file=sys.stderr)


class _ClosedOutput(io.TextIOBase):
    """The standard output of a process started without one (``paysdk list >&-``): every write
    is a closed pipe's, so the command ends as when its reader has gone."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(errno.EPIPE, "standard output is closed")


def open_missing_streams() -> None:
    """Stand in for a standard stream the process was started without, which Python leaves
    ``None``: stdout as a closed pipe (exit 141, like ``| head``), stderr as a sink (an error
    must not go to stdout, where ``print(file=None)`` would write it). Each of descriptors 0 to
    2 left closed is held on ``/dev/null``, so that no pipe or file the command opens takes its
    number: a child given it as its own stdin or stdout would lose it (a detached sandbox's
    pipe to tell it started, which its starter would wait on forever)."""
    for descriptor, flags in enumerate((os.O_RDONLY, os.O_WRONLY, os.O_WRONLY)):
        try:
            os.fstat(descriptor)
        except OSError:  # closed
            devnull = os.open(os.devnull, flags)
            if devnull != descriptor:
                os.dup2(devnull, descriptor)
                os.close(devnull)
    if sys.stdout is None:
        sys.stdout = _ClosedOutput()
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - the process's


class OutputError(Exception):
    """Standard output could not be written (a full disk, an I/O error): the place the output
    was sent failed, which is neither the service's failure nor a bug."""


class _Wrapped:
    """A standard stream in a wrapper of its own writes, its encoding, descriptor and terminal
    those of ``stream``."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None)  # what `print_json` reads

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()


class _Output(_Wrapped):
    """Standard output, a failure to write it raised as `OutputError` (a closed pipe stays a
    ``BrokenPipeError``: the reader has gone, as with ``| head``). A closed pipe is raised
    again at each flush: argparse ignores an ``OSError`` writing ``--help``."""

    reader_gone = False

    def write(self, text: str) -> int:
        try:
            with _written_or_output_error():
                return self.stream.write(text)
        except BrokenPipeError:
            self.reader_gone = True
            raise

    def flush(self) -> None:
        if self.reader_gone:
            raise BrokenPipeError(errno.EPIPE, "the output's reader has gone")
        with _written_or_output_error():
            self.stream.flush()


@contextmanager
def _written_or_output_error() -> Generator[None, None, None]:
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(exc.strerror or str(exc)) from exc


def guarded_output() -> contextlib.redirect_stdout[TextIO]:
    """Have a failure to write standard output raise `OutputError` while the command runs."""
    return contextlib.redirect_stdout(cast("TextIO", _Output(sys.stdout)))


class _Diagnostics(_Wrapped):
    """Standard error, where a line that cannot be written (a full disk, a closed pipe) is lost
    rather than failing the command: the exit code still says what happened. After the first
    failure its descriptor is pointed at ``/dev/null``, so the flush at exit fails no more."""

    failed = False

    def write(self, text: str) -> int:
        if not self.failed:
            try:
                self.stream.write(text)
            except OSError:
                self._give_up()
        return len(text)

    def flush(self) -> None:
        if not self.failed:
            try:
                self.stream.flush()
            except OSError:
                self._give_up()

    def _give_up(self) -> None:
        self.failed = True
        _to_devnull(self.stream)


def diagnostics_at_best() -> contextlib.redirect_stderr[TextIO]:
    """Have what the command writes to stderr (errors, ``--verbose``, progress) lost, not
    raised, when stderr cannot be written, while the command runs."""
    return contextlib.redirect_stderr(cast("TextIO", _Diagnostics(sys.stderr)))


def output_failed(exc: OutputError, code: int) -> int:
    """Say on stderr that the output could not be written, and return ``code``. Standard output
    is pointed at ``/dev/null`` (as after a closed pipe), so the flush at exit fails no more."""
    broken_pipe()
    return print_error(f"cannot write the output: {exc}", code)


def escape_unwritable() -> None:
    """Have stdout show a character its encoding cannot write (an ASCII or Latin-1 terminal, a
    Windows code page) as an escape, as stderr does, rather than fail on a customer's name."""
    stdout = sys.stdout
    if isinstance(stdout, io.TextIOWrapper):
        stdout.reconfigure(errors="backslashreplace")


def _writes_unicode(stream: object) -> bool:
    """Whether ``stream``'s encoding writes every character: a UTF codec."""
    try:
        return codecs.lookup(getattr(stream, "encoding", None) or "utf-8").name.startswith("utf")
    except LookupError:
        return False


def print_json(data: object, indent: int | None = 2) -> None:
    """``data`` as JSON on stdout: indented, or on one line (``indent=None``); exact, with the
    characters a terminal acts on escaped (``json_text``), and every one beyond ASCII if
    stdout's encoding cannot write them all."""
    ascii_only = not _writes_unicode(sys.stdout)
    sys.stdout.write(json_text(data, indent, ascii_only=ascii_only) + "\n")


def as_received(model: WireModel) -> dict[str, Any]:
    """``model``'s fields as the service sent them (``exclude_unset``), each optional field it
    could not read put back at any depth (``unparsed``), so ``--json`` loses nothing."""
    from .._models.wire import WireModel  # only --json reads it

    dumped = model.model_dump(mode="json", exclude_unset=True)
    for name, value in model:
        if name not in dumped:
            continue
        if isinstance(value, WireModel):
            dumped[name] = as_received(value)
        elif isinstance(value, list):
            items = cast("list[object]", value)
            if any(isinstance(item, WireModel) for item in items):
                dumped[name] = [as_received(i) if isinstance(i, WireModel) else i for i in items]
    return {**dumped, **model.unparsed}


def print_csv(header: Sequence[str], rows: Iterable[Iterable[object]]) -> None:
    """CSV on stdout: ``header``, then ``rows`` of integers (written as numbers), booleans, text
    and ``None``, each made safe for a spreadsheet (``spreadsheet_cell``)."""
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([spreadsheet_cell(value) for value in row] for row in rows)


WIDEST_PADDED = 80
"""The widest cell (in columns) a table pads the others of its column to: a service's 1 MB
address would otherwise make every row of its list 1 MB long."""


def print_table(
    rows: Sequence[Sequence[str]],
    *,
    header: Sequence[str] | None,
    right: Sequence[bool] = (),
) -> None:
    """Rows as aligned columns two spaces apart, under ``header``'s column names in capitals
    (``_`` a space); ``right`` marks right-aligned columns. Each cell is shown as ``table_cell``
    shows it: a control character or a look-alike space is an escape, never a line, a command
    or a blank that passes for another. Cells are padded to the columns a terminal gives them
    (``display_width``: a CJK or fullwidth character two, a combining mark none), and one
    wider than ``WIDEST_PADDED`` overflows its own row rather than pad every other row to it."""
    heads = [] if header is None else [[name.replace("_", " ").upper() for name in header]]
    table = [*heads, *rows]
    lines = [[table_cell(cell) for cell in line] for line in table]
    shown = [[display_width(cell) for cell in line] for line in lines]
    widths = [
        max((line[i] for line in shown if line[i] <= WIDEST_PADDED), default=0)
        for i in range(len(lines[0]))
    ]
    for line, line_widths in zip(lines, shown, strict=True):
        cells = [
            _padded(cell, width - own, right=i < len(right) and right[i])
            for i, (cell, own, width) in enumerate(zip(line, line_widths, widths, strict=True))
        ]
        print("  ".join(cells).rstrip())


def _padded(cell: str, spaces: int, *, right: bool) -> str:
    """``cell`` with ``spaces`` blanks before it (``right``) or after it (none if negative)."""
    padding = " " * max(spaces, 0)
    return padding + cell if right else cell + padding


def display_width(text: str) -> int:
    """How many columns a terminal gives ``text`` (shown ``printable``, so no control or format
    character is left): a combining mark none, as it sits on the letter before it; a wide or
    fullwidth character (CJK, ``\uff21``) two; any other one. A table padded by ``len`` would
    shift the rest of a row holding them.

    Args:
        text: a cell as a table shows it.

    Returns:
        Its width in columns.
    """
    if text.isascii():
        return len(text)
    return sum(_char_width(char) for char in text)


@functools.lru_cache(maxsize=4096)
def _char_width(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me"):
        return 0
    if "\u1160" <= char <= "\u11ff" or "\ud7b0" <= char <= "\ud7ff":  # a Hangul vowel or
        return 0  # final letter: joined to the leading letter before it, in its two columns
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1

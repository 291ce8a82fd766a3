"""The service's timestamps: UTC, and the one way paysdk writes them. Apart from the models, so
that what only writes a timestamp (the sandbox, the SQLite ledger, the command line) does not
import pydantic."""

from __future__ import annotations

import datetime as dt
import re

__all__ = ["as_utc", "read_timestamp", "wire_timestamp"]

_ISO_8601 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[T ]([0-9]{2})(?::([0-9]{2})(?::([0-9]{2})(?:[.,]([0-9]+))?)?)?"
    r"([Zz]|[+-][0-9]{2}(?::?[0-5][0-9])?)?)?"
)


def as_utc(value: dt.datetime) -> dt.datetime:
    if value.tzinfo is None:  # the service documents UTC; a missing offset still means UTC
        return value.replace(tzinfo=dt.timezone.utc)
    try:
        return value.astimezone(dt.timezone.utc)
    except OverflowError:  # e.g. 0001-01-01T00:00+01:00: pydantic reports ValueErrors only
        raise ValueError("the timestamp is outside the range of dates") from None


def wire_timestamp(value: dt.datetime) -> str:
    """The service's timestamp text: UTC, microseconds, trailing ``Z``. The one place it is made.

    Args:
        value: a timezone-aware datetime (a naive one is taken as UTC).

    Returns:
        The timestamp as the service writes it (``2024-05-01T12:00:00.000000Z``).
    """
    # isoformat, not strftime: ``%Y`` writes year 5 as "5" on glibc, which no parser reads back
    return as_utc(value).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def read_timestamp(text: str) -> dt.datetime:
    """ISO 8601 text in its extended form, read alike on every Python (``fromisoformat`` reads
    week dates, basic forms and bare digits on 3.11 and later, and on 3.10 refuses a fraction
    of other than 3 or 6 digits): a date, then optionally a time, its fraction cut to
    microseconds, and an offset.

    Args:
        text: the timestamp, such as ``2026-11-05``, ``2026-11-05T10:00:00.1Z`` or
            ``2026-11-05 10:00+01:00``.

    Returns:
        The datetime: naive when the text gives no offset.

    Raises:
        ValueError: the text is of another form, or names a time that does not exist.
    """
    match = _ISO_8601.fullmatch(text)
    if match is None:
        raise ValueError(f"{text[:40]!r} is not an ISO 8601 date or datetime")
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    tzinfo = None
    if zone in ("Z", "z"):
        tzinfo = dt.timezone.utc
    elif zone is not None:
        digits = zone[1:].replace(":", "")
        offset = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))
        tzinfo = dt.timezone(-offset if zone[0] == "-" else offset)
    micro = int((fraction or "")[:6].ljust(6, "0"))
    date = dt.date(int(year), int(month), int(day))
    clock = dt.time(int(hour or 0), int(minute or 0), int(second or 0), micro, tzinfo)
    return dt.datetime.combine(date, clock)

"""A PostgreSQL ledger's URL as libpq reads it: what a repr may show (``shown``), and the
``secrets`` no message may hold (``scrub`` hides them). libpq's parse errors quote the URL, and
``urllib.parse`` splits some otherwise (an unencoded ``?`` in a password): a URL libpq cannot
parse, or parses as no merchant meant (a password read into the host or database), is refused
with a ConfigurationError naming the wrong part, never quoting it."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from ..._errors import ConfigurationError

__all__ = ["PostgresURL", "parse_url", "scrub"]

_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})|%00")
_PORTS = re.compile(r"[0-9]*(,[0-9]*)*")
_QUOTED = re.compile(r'"[^"]*"')
_HOST = re.compile(r"[A-Za-z0-9._~-]+|[0-9A-Fa-f:.]+(%[A-Za-z0-9._-]+)?|/[A-Za-z0-9._~/:-]*")
"""A host libpq may be given: a name or IPv4 address, an IPv6 one (with its zone), or the
directory of a Unix socket (Cloud SQL's is ``/cloudsql/project:region:instance``); nothing a
password could have been read into."""
_DATABASE = re.compile(r"[A-Za-z0-9._$ -]*")
"""A database name a repr shows; another (a password libpq read into it?) is not shown."""
HIDDEN = "***"
_UNENCODABLE = re.compile("[\ud800-\udfff]")
"""A lone surrogate: how Python reads a byte that is not UTF-8 (in an argument, a variable)."""


@dataclasses.dataclass(frozen=True)
class PostgresURL:
    """What may be shown of a ledger's URL, and what must never be."""

    shown: str
    """``scheme://host:port/database``, as libpq reads them: no user, password or options."""
    secrets: tuple[str, ...]
    """The URL itself, its password as written and as libpq decodes it: longest first."""

    def __repr__(self) -> str:
        return f"PostgresURL({self.shown!r})"


def parse_url(url: str, conninfo_to_dict: Any, refusal: type[Exception]) -> PostgresURL:
    """``url`` as libpq parses it with psycopg's ``conninfo_to_dict`` (no I/O), or a
    ConfigurationError naming the wrong part, never quoting it: libpq cannot parse it (``refusal``,
    ``psycopg.Error``), or would read a password into its host, port or database."""
    if _UNENCODABLE.search(url) is not None:  # libpq takes UTF-8: psycopg would raise bare
        raise ConfigurationError(
            "the PostgreSQL ledger URL is malformed: it holds bytes that are not UTF-8 (typed on "
            "a terminal of another encoding?); percent-encode them"
        )
    refused: str | None = None
    parts: dict[str, Any] = {}
    try:
        parts = conninfo_to_dict(url)
    except refusal as exc:  # psycopg's ProgrammingError, which quotes the URL
        refused = _malformed(url, str(exc))
    if refused is not None:  # raised here, so that psycopg's is not even its __context__
        raise ConfigurationError(refused)
    hosts, ports = str(parts.get("host") or ""), str(parts.get("port") or "")
    database = str(parts.get("dbname") or "")
    if "@" in hosts or "@" in database:
        raise ConfigurationError(
            "the PostgreSQL ledger URL is malformed: its user name or password holds an "
            "unencoded '@' or '/', so libpq would read part of it as the host or the database; "
            "percent-encode them ('@' as %40, '/' as %2F)"
        )
    if any(_HOST.fullmatch(host) is None for host in hosts.split(",") if host):
        raise ConfigurationError(
            "the PostgreSQL ledger URL is malformed: libpq would read a host that is no host "
            "name, IP address or socket directory (a '[' not closed where it should be, or an "
            "unencoded '/', '?' or '@' in the user name or password, would do that)"
        )
    if _PORTS.fullmatch(ports) is None:
        raise ConfigurationError(
            "the PostgreSQL ledger URL is malformed: its port is not a number (an unencoded "
            "'/' or ':' in a password would do that: percent-encode it, '/' as %2F)"
        )
    scheme = url.partition("://")[0].lower()
    named = database if _DATABASE.fullmatch(database) else "(database)"
    shown = f"{scheme}://{_servers(hosts, ports)}/{named}"
    return PostgresURL(shown, _secrets(url, str(parts.get("password") or "")))


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with each of ``secrets`` (longest first) hidden."""
    for secret in secrets:
        text = text.replace(secret, HIDDEN)
    return text


def _servers(hosts: str, ports: str) -> str:
    """libpq's comma-separated hosts and ports as ``host:port,host:port`` (IPv6 in brackets; a
    socket directory, which may hold a ``:`` too, as it is)."""
    names, numbers = hosts.split(","), ports.split(",")
    if len(numbers) == 1:
        numbers = numbers * len(names)
    shown: list[str] = []
    for index, name in enumerate(names):
        host = f"[{name}]" if ":" in name and not name.startswith("/") else name
        port = numbers[index] if index < len(numbers) else ""
        shown.append(f"{host}:{port}" if port else host)
    return ",".join(shown)


def _secrets(url: str, password: str) -> tuple[str, ...]:
    """The URL, its password as libpq decoded it, and as the URL wrote it (userinfo or query)."""
    found = {url, password}
    head = url.partition("://")[2].split("/", 1)[0]
    if "@" in head:  # libpq looks for credentials before the first '/'
        found.add(head.rpartition("@")[0].partition(":")[2])
    query = url.partition("?")[2]
    for name, _, value in (pair.partition("=") for pair in query.split("&")):
        if name == "password":
            found.add(value)
    return tuple(sorted((secret for secret in found if secret), key=len, reverse=True))


def _malformed(url: str, libpq: str) -> str:
    """Why libpq refused ``url``, in words that quote none of it."""
    start = "the PostgreSQL ledger URL is malformed: "
    bad = _BAD_ESCAPE.search(url)
    if "percent-encoded" in libpq and bad is not None:
        return (
            f"{start}its {_part_at(url, bad.start())} holds a '%' that is not followed by two "
            "hex digits, or %00; write a '%' itself as %25"
        )
    said = _QUOTED.sub('"..."', libpq.strip().splitlines()[0] if libpq.strip() else "")
    if "IPv6" in said or ("[" in url and "unexpected character" in said):
        return (
            f"{start}its [host] is not closed by ']', or is followed by something other than "
            "':port' or '/'"
        )
    return f"{start}libpq cannot parse it ({said})"


def _part_at(url: str, index: int) -> str:
    """Which part of ``url`` the character at ``index`` is in, as libpq splits a URL."""
    start = url.find("://") + 3
    head = url[start:].split("/", 1)[0]
    head_end = start + len(head)
    if "@" in head:
        userinfo_end = start + head.rindex("@")
        if index < userinfo_end:
            user_end = url.find(":", start, userinfo_end)
            return "user name" if user_end == -1 or index < user_end else "password"
    query = url.find("?", start)
    if index < head_end and (query == -1 or index < query):
        return "host"
    if query != -1 and index > query:
        return "query"
    return "database name"

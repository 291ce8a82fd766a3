"""What a call is made with: the client's settings as one immutable value, and paysdk's own
timeout. The core only reads them: ``paysdk._client.configure`` makes and checks a ``Config``
(from arguments, the environment, per-call options); each transport turns ``Timeout`` into its
library's."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import hmac
import ipaddress
import re
from collections.abc import Mapping
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

from .._errors import ConfigurationError
from .environment import ENV_SECRET_KEY

__all__ = [
    "ITEM_MAX_BYTES",
    "KEY_IN_BASE_URL",
    "LIST_MAX_BYTES",
    "MIN_KEY_IN_URL",
    "NO_SECRET_KEY",
    "VERIFY_MAX_BYTES",
    "Config",
    "SealedHeaders",
    "SecretHeaders",
    "Timeout",
    "blot_key",
    "check_account",
    "check_secret_key",
    "is_loopback",
    "secret_key_in",
    "url_holds_key",
]

VERIFY_MAX_BYTES = 1024 * 1024
"""A verify answer is a few kilobytes; a megabyte is room enough and costs nothing."""
LIST_MAX_BYTES = 64 * 1024 * 1024
"""``list_payments`` holds the whole list at once: past this, ``iter_payments`` streams it."""
ITEM_MAX_BYTES = 1024 * 1024
"""``iter_payments`` holds one payment at a time: none may be larger than this."""


class Timeout(NamedTuple):
    """Seconds each phase of an attempt may take; ``None``: no limit. httpx's four phases."""

    connect: float | None
    read: float | None
    write: float | None
    pool: float | None


_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization"})
"""The headers a repr hides: the secret key, and a proxy's credentials where they go with the
request itself (a forwarded ``http://`` request)."""


def masked(name: str, value: str) -> str:
    """A header's value as a repr or a log may show it: ``[secure]`` for one that carries a
    secret (the key, a proxy's credentials)."""
    return "[secure]" if name.lower() in _SECRET_HEADERS else value


class SecretHeaders(dict[str, str]):
    """Request headers, one entry a name: names are lower-cased and the values of a name given
    twice (``User-Agent`` and ``user-agent``) joined with ``", "``, as HTTP folds them and
    httpx does. Looked up without regard to case. The repr hides the secret key, should a log
    or a traceback that prints local variables show them."""

    __slots__ = ()

    def __init__(self, headers: Mapping[str, str]) -> None:
        super().__init__()
        for name, value in headers.items():
            key = name.lower()
            seen = super().get(key)
            super().__setitem__(key, value if seen is None else f"{seen}, {value}")

    def __getitem__(self, name: str) -> str:
        return super().__getitem__(name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and super().__contains__(name.lower())

    def get(self, name: str, default: str | None = None) -> str | None:  # type: ignore[override]
        return super().get(name.lower(), default)

    def __repr__(self) -> str:
        return repr({k: masked(k, v) for k, v in self.items()})


class SealedHeaders:
    """A request's headers, the key's among them, sealed: not a mapping, so what shows a frame's
    local variables (Sentry's frame variables, Django's debug page) shows its repr, the key
    masked. Error trackers serialize a mapping, and a tuple such as ``Send``, item by item,
    past any repr; a transport opens the headers only where it hands them to its library."""

    __slots__ = ("_headers",)

    def __init__(self, headers: Mapping[str, str]) -> None:
        self._headers = SecretHeaders(headers)

    def open(self) -> SecretHeaders:
        """The headers to send: hand them on, never keep them in a local a failure may show."""
        return self._headers

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SealedHeaders) and other._headers == self._headers

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return repr(self._headers)


def secret_key_in(headers: Mapping[str, str]) -> str:
    """The key an ``Authorization: Bearer`` header carries, whatever the name's case; ``""``
    if there is none."""
    auth = headers.get("authorization") or headers.get("Authorization") or ""
    return auth.removeprefix("Bearer ")


@dataclasses.dataclass(frozen=True)
class Config:
    """Everything a call needs to build its requests. Immutable; variants are made with
    ``dataclasses.replace``."""

    secret_key: str = dataclasses.field(repr=False)
    base_url: str
    timeout: Timeout
    max_retries: int
    headers: Mapping[str, str] = dataclasses.field(repr=False)
    """Headers sent with every request, not counting Authorization."""
    max_response_bytes: int | None = None
    """A cap on every answer's decoded body; ``None``: each endpoint's own default."""
    deadline: float | None = None
    """Seconds a whole call may take, retries and waits included; ``None``: attempts bound it."""
    allow_insecure_http: bool = False
    """Whether an ``http://`` base URL may name a host other than loopback."""
    verifies_tls: bool = True
    """Whether the service's certificate is checked; if not, only a loopback base URL will do."""
    account: str = ""
    """The merchant account's label (``Client(account=...)``): the payments it verifies carry it,
    and a ledger keys them by it. ``""``: unlabelled, the one account of most merchants."""
    pauses_gc: bool = True
    """Whether a list body past 1 MiB is parsed with the cyclic garbage collector paused
    (``Client(pause_gc=False)`` keeps it running: the pause is process-wide)."""
    unset: Mapping[str, str] = dataclasses.field(default_factory=dict[str, str])
    """What the client was made without, neither given nor in the environment (``secret_key``,
    ``base_url``), each with what to do: its calls are refused, saying so, before any request.
    A client made at import time (a module of a Django or Flask app) thus lets commands that
    never call the service (``manage.py migrate``, a Docker build) run without the key."""

    def __post_init__(self) -> None:
        """Refuse a base URL holding the key: every request line would carry it, and the repr
        would show it. The message quotes neither."""
        if url_holds_key(self.base_url, self.secret_key):
            raise ConfigurationError(KEY_IN_BASE_URL)

    def check_set(self) -> None:
        """Refuse a call of a client made without a setting it needs: a ``ConfigurationError``
        saying how to set it."""
        if self.unset:
            raise ConfigurationError("; ".join(self.unset.values()))

    @functools.cached_property
    def issuer(self) -> str:
        """A fingerprint of the account the key and base URL reach (a keyed hash: not the key,
        nor a way back to it), so a ledger can tell two unlabelled accounts' payments apart."""
        material = f"{_as_the_service_sees_it(self.base_url)}\0{self.secret_key}".encode()
        return hmac.new(b"paysdk account fingerprint", material, hashlib.sha256).hexdigest()[:16]

    @functools.cached_property
    def request_headers(self) -> SealedHeaders:
        """The headers of every request, built once per config; sealed (``SealedHeaders``)."""
        return SealedHeaders({**self.headers, "Authorization": f"Bearer {self.secret_key}"})

    @functools.cached_property
    def attempt_budget(self) -> float | None:
        """One attempt's whole-time bound: the longest of the timeout's phases, or ``None`` if
        any phase has no limit."""
        phases = tuple(self.timeout)
        return None if None in phases else max(phase for phase in phases if phase is not None)

    def scrub(self, text: str) -> str:
        """``text`` with the secret key blotted out, for a message that quotes the service."""
        return blot_key(text, self.secret_key)

    @functools.cached_property
    def key_echo(self) -> _KeyEcho | None:
        """How a body may hold the secret key: as sent, or with the characters JSON encoders
        escape written escaped (``\\"`` and ``\\\\`` as JSON requires; PHP's ``\\/``; Go's,
        PHP's and .NET's ``\\u003c`` for ``<`` and the like); ``None`` for a key too short to
        look for (as ``scrub``)."""
        if len(self.secret_key) < 4:
            return None
        raw = self.secret_key.encode()
        pattern = _escaped_key(raw)
        if pattern is None:
            return _KeyEcho(raw, None, len(raw))
        runs = re.split(b"[%s]" % re.escape(_JSON_ESCAPED), raw)
        reach = sum(len(_U_ESCAPE) if char in _JSON_ESCAPED else 1 for char in raw)
        return _KeyEcho(max(runs, key=len), re.compile(pattern), reach)

    def echoes_key(self, content: bytes) -> bool:
        """Whether ``content``, a body from the service, holds the secret key (a server or
        proxy echoing the ``Authorization`` header): one scan of it for the longest run of the
        key no encoder escapes, then, where that is found, a search for the key itself."""
        echo = self.key_echo
        if echo is None or echo.run not in content:
            return False
        return echo.pattern is None or echo.pattern.search(content) is not None

    def max_bytes(self, default: int) -> int:
        """The body cap of an endpoint whose own is ``default``."""
        return default if self.max_response_bytes is None else self.max_response_bytes


_JSON_ESCAPED = b"\"\\/<>&'+`"
"""The key's characters a JSON encoder may write escaped: ``"`` and ``\\`` always, ``/`` (PHP),
``<``, ``>``, ``&`` (Go, Ruby), ``'`` (PHP's ``JSON_HEX_APOS``), ``+`` and the backtick (.NET)."""
_U_ESCAPE = b"\\u0000"
"""The longest way an encoder writes one of the key's characters."""


class _KeyEcho(NamedTuple):
    """What ``Config.echoes_key`` looks for: the longest run of the key no encoder escapes, the
    key in all its escaped spellings (``None``: the key has nothing to escape, the run is the
    key), and how many bytes the longest spelling takes (a stream's seam keeps that many)."""

    run: bytes
    pattern: re.Pattern[bytes] | None
    reach: int


def blot_key(text: str, key: str) -> str:
    """``text`` (quoting what the service sent) with each spelling of ``key`` in it, as sent and
    as a JSON body or a repr writes it (``Config.key_echo``'s escapes, a repr's ``\\'``), made
    ``<secret key>``. A key under four characters is left (it would blot words)."""
    if len(key) < 4:
        return text
    pattern = _escaped_text(key)  # the key as sent among its spellings, each escape tried first
    if pattern is None:
        return text.replace(key, "<secret key>")
    return pattern.sub("<secret key>", text)


@functools.lru_cache(maxsize=16)
def _escaped_text(key: str) -> re.Pattern[str] | None:
    """``_escaped_key`` for text, compiled once a key."""
    pattern = _escaped_key(key.encode())
    return None if pattern is None else re.compile(pattern.decode("ascii"))


def _escaped_key(raw: bytes) -> bytes | None:
    """A pattern of ``raw`` (a key: printable ASCII) in all its escaped spellings; ``None`` if
    no character of it is ever escaped."""
    if not any(char in _JSON_ESCAPED for char in raw):
        return None
    return b"".join(
        _escaped_forms(char) if char in _JSON_ESCAPED else re.escape(bytes([char])) for char in raw
    )


def _escaped_forms(char: int) -> bytes:
    """A pattern matching ``char`` as sent, ``\\u00XX`` in either case and, for the three JSON
    writes with a backslash and the ``'`` a repr may, ``\\"``, ``\\\\``, ``\\/`` or ``\\'``."""
    hex_digits = b"".join(
        b"[%b%b]" % (digit, digit.upper()) if digit.isalpha() else digit
        for digit in re.findall(b".", b"%04x" % char)
    )
    forms = [re.escape(bytes([char])), re.escape(b"\\u") + hex_digits]
    if char in b"\"\\/'":  # tried first, so a key's ``\\`` as JSON or a repr writes it is
        forms.insert(0, re.escape(b"\\" + bytes([char])))  # blotted whole, no ``\`` left after
    return b"(?:" + b"|".join(forms) + b")"


_ACCOUNT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


def check_account(account: object) -> str:
    """A merchant account's label: a short ASCII name the merchant chooses (never the key)."""
    if account is None or account == "":
        return ""
    if not isinstance(account, str) or _ACCOUNT.fullmatch(account) is None:
        raise ConfigurationError(  # the value is not quoted: a key passed by mistake stays out
            "account must be a short name of ASCII letters, digits, '.', '_' and '-' (at most "
            "63, such as 'lagos-1'): it labels the account in the ledger; never pass a key"
        )
    return account


def url_holds_key(url: object, key: object) -> bool:
    """Whether ``url`` holds ``key`` (of ``MIN_KEY_IN_URL`` characters or more) where a pasted
    key lands: its path, query, fragment or user info, in any case, as given or percent-encoded.
    Not its scheme, host or port, which a key may match by chance (``localhost:8000``)."""
    if not (isinstance(url, str) and isinstance(key, str) and len(key) >= MIN_KEY_IN_URL):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:  # an unchecked URL (a refused option, blotted): all of it
        held = url
    else:
        held = f"{parts.netloc.rpartition('@')[0]}{parts.path}?{parts.query}#{parts.fragment}"
    folded = key.lower()
    return folded in held.lower() or folded in unquote(held).lower()


MIN_KEY_IN_URL = 8
"""The shortest key looked for in a base URL: a service's keys are longer, and a shorter one
(``test``, ``demo``) would be found by chance in URLs that do not hold it."""

KEY_IN_BASE_URL = (
    "base_url contains the secret key: every request would carry it in its URL, which servers, "
    "proxies and logs record; pass the key as secret_key alone"
)
"""Why a base URL holding the key is refused, quoting neither."""

NO_SECRET_KEY = f"no secret key: pass secret_key=... or set {ENV_SECRET_KEY}"
"""Why a call cannot be made without a key."""

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _as_the_service_sees_it(base_url: str) -> str:
    """``base_url`` however it is spelled: scheme and host in lower case, without the scheme's
    own port or a trailing dot, so one account has one fingerprint in every deployment."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").rstrip(".")
    netloc = f"[{host}]" if ":" in host else host
    if parts.port not in (None, _DEFAULT_PORTS.get(parts.scheme)):
        netloc += f":{parts.port}"
    return f"{parts.scheme}://{netloc}{parts.path.rstrip('/')}"


def check_secret_key(key: object) -> str:
    """``key`` (``None``: none given) unchanged, if a client can send it as ``Authorization:
    Bearer <key>``; else a ``ConfigurationError`` saying why, never quoting it. One rule for the
    client's key and a sandbox's, so a sandbox never asks for a key no client accepts."""
    if key is None:
        raise ConfigurationError(NO_SECRET_KEY)
    if not isinstance(key, str):
        raise ConfigurationError(f"the secret key must be a str, not {type(key).__name__}")
    if not key.strip():
        raise ConfigurationError(
            f"the secret key is empty: pass secret_key=... or set {ENV_SECRET_KEY}"
        )
    if key != key.strip():
        raise ConfigurationError(
            "the secret key has leading or trailing whitespace; check how it is loaded"
        )
    if key[:7].lower() == "bearer ":  # ASCII: lower() leaves other letters unmatched
        raise ConfigurationError(
            "the secret key starts with 'Bearer ': pass the key alone, as the service issued it "
            "(paysdk sends it as 'Authorization: Bearer <key>')"
        )
    if len(key) > 1 and key[0] == key[-1] and key[0] in "\"'":
        raise ConfigurationError(
            "the secret key is wrapped in quotes; check how it is loaded (docker's --env-file "
            'and systemd\'s EnvironmentFile keep the quotes of KEY="..."): pass the key alone'
        )
    if not all("\x21" <= ch <= "\x7e" for ch in key):
        raise ConfigurationError(
            "the secret key contains characters that cannot be sent in a header "
            "(spaces, control or non-ASCII characters)"
        )
    return key


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine's: ``localhost`` or a loopback IP. Not a name under
    ``.localhost``: browsers keep those on the machine, but Python's resolver looks them up as
    any other name, and a DNS server may answer with any address."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

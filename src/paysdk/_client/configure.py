"""A client's configuration from arguments or the environment, checked before any request: each
refusal is a ``ConfigurationError`` saying what to change, never holding the secret key."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import string
import sys
from collections.abc import Callable, Generator, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from .._core.config import (
    KEY_IN_BASE_URL,
    NO_SECRET_KEY,
    Config,
    Timeout,
    check_account,
    check_secret_key,
    is_loopback,
)
from .._core.config import url_holds_key as url_holds_key  # base.py blots such a URL
from .._core.environment import ENV_BASE_URL, ENV_MAX_RETRIES, ENV_SECRET_KEY, ENV_TIMEOUT
from .._core.numbers import SECONDS_RULE, TOO_SMALL, read_seconds, read_whole_number, underflows
from .._errors import ConfigurationError
from .._errors.quoting import quoted
from .._parsing.decoding import ACCEPT_ENCODING, READABLE_CODINGS
from .._transport.httpx_common import BACKEND, check_host
from .._version import __version__
from .network import check_tls_verified
from .options import CallOptions, NotGiven, TimeoutTypes

DEFAULT_TIMEOUT = Timeout(connect=5.0, read=30.0, write=30.0, pool=30.0)
DEFAULT_MAX_RETRIES = 2
MAX_RETRIES_LIMIT = 10
MAX_TIMEOUT = 86400.0
"""A day: longer is a mistake (and sockets cannot take infinite or huge values)."""

MAX_BYTES_LIMIT = 2**40
"""A TiB: the largest cap on a body, far past any answer a process could hold."""
MISSING = {
    "secret_key": NO_SECRET_KEY,
    "base_url": f"no base URL: pass base_url=... or set {ENV_BASE_URL}",
}
"""Why a call cannot be made without each setting."""


_PYTHON = ".".join(str(part) for part in sys.version_info[:3])


def user_agent(backend: str, app_info: str | None = None) -> str:
    """``paysdk/<version> Python/<version> <backend>/<version>``, then the application's own
    name and version if it gave them (``app_info="myshop/1.4"``)."""
    agent = f"paysdk/{__version__} Python/{_PYTHON} {backend}"
    return agent if app_info is None else f"{agent} {app_info}"


def check_app_info(app_info: object) -> str | None:
    """``app_info`` as it will end the User-Agent: visible ASCII and inner spaces only."""
    if app_info is None:
        return None
    if not isinstance(app_info, str):
        raise ConfigurationError(f"app_info must be a str, not {type(app_info).__name__}")
    text = app_info.strip()
    if not text or not all("\x20" <= ch <= "\x7e" for ch in text):
        raise ConfigurationError(
            f"app_info {app_info!r} must be visible ASCII, such as 'myshop/1.4': it is sent "
            "in the User-Agent header, which cannot carry control or non-ASCII characters"
        )
    return text


T = TypeVar("T")

_RESERVED_HEADERS = frozenset({"authorization", "host", "content-length"})


def create_config(
    *,
    secret_key: str | None,
    base_url: str | None,
    timeout: TimeoutTypes | NotGiven,
    max_retries: int | NotGiven,
    default_headers: Mapping[str, str] | None,
    allow_insecure_http: bool,
    max_response_bytes: int | None = None,
    deadline: float | None = None,
    agent: str | None = None,
    verifies_tls: bool = True,
    account: str | None = None,
    pause_gc: bool = True,
) -> Config:
    """A client's configuration from its arguments, the environment where one is left out, and
    the defaults; every value checked before any request. ``agent``: the User-Agent
    (``user_agent``); ``verifies_tls``: whether ``verify=`` checks certificates."""
    try:
        key = secret_key if secret_key is not None else os.environ.get(ENV_SECRET_KEY)
        url = base_url if base_url is not None else os.environ.get(ENV_BASE_URL)
        headers = {
            "Accept": "application/json",
            "Accept-Encoding": ACCEPT_ENCODING,  # what paysdk inflates in bounded steps
            "User-Agent": agent or user_agent(BACKEND),
        }
        headers.update(check_headers(default_headers or {}, what="default_headers"))
        given: object = timeout
        if isinstance(given, NotGiven):
            given = from_env(ENV_TIMEOUT, float, DEFAULT_TIMEOUT)
        retries: object = max_retries
        if isinstance(retries, NotGiven):
            retries = from_env(ENV_MAX_RETRIES, int, DEFAULT_MAX_RETRIES)
        unset = {
            name: MISSING[name]
            for name, value in (("secret_key", key), ("base_url", url))
            if value is None
        }
        insecure = allow_insecure_http
        with key_kept_out(key):
            return Config(
                secret_key="" if key is None else check_secret_key(key),
                base_url="" if url is None else check_base_url(url, allow_insecure_http=insecure),
                timeout=check_timeout(given),
                max_retries=check_max_retries(retries),
                headers=headers,
                max_response_bytes=check_max_bytes(max_response_bytes),
                deadline=check_deadline(deadline),
                allow_insecure_http=allow_insecure_http,
                verifies_tls=verifies_tls,
                account=check_account(account),
                pauses_gc=check_pause_gc(pause_gc),
                unset=unset,
            )
    finally:  # the key in no local of this frame, which a debug page shows (key_kept_out),
        # nor the URL, which holds it when refused for that (PAYSDK_BASE_URL pasted with it)
        secret_key = key = base_url = url = None


@contextlib.contextmanager
def key_kept_out(*keys: object) -> Generator[None, None, None]:
    """A ``ConfigurationError`` raised inside, with each of ``keys`` blotted out of its message:
    a check quotes what it refuses, and a key pasted into ``base_url`` would be quoted too."""
    try:
        yield
    except ConfigurationError as exc:
        message = _blotted(exc.message, keys)
    else:
        return
    # raised afresh, outside the except, no key left in this frame: a debug page shows the
    # locals of each frame in the traceback, and the check's own held the key it refused
    keys = ()
    raise ConfigurationError(message) from None


def _blotted(message: str, keys: tuple[object, ...]) -> str:
    """``message`` with each of ``keys`` of four characters or more as ``<secret key>``."""
    for key in keys:
        if isinstance(key, str) and len(key) >= 4:
            for quoted in (key, repr(key)[1:-1]):  # as given, and as a repr quotes it
                # in any case: a host name is quoted lower-cased
                message = re.sub(re.escape(quoted), "<secret key>", message, flags=re.I)
    return message


def apply_options(config: Config, options: CallOptions) -> Config:
    """``config`` with per-call options applied; the input is checked like the original."""
    if not options:
        return config
    with key_kept_out(config.secret_key, options.get("secret_key")):
        return _applied(config, options)


def _applied(config: Config, options: CallOptions) -> Config:
    unknown = set(options) - set(CallOptions.__annotations__)
    if unknown:
        raise ConfigurationError(f"unknown option(s): {', '.join(sorted(unknown))}")
    checks: dict[str, Callable[[Any], Any]] = {  # each option's check, in the order they run
        "secret_key": check_secret_key,
        "base_url": lambda url: _checked_base_url(url, config),
        "timeout": check_timeout,
        "max_retries": check_max_retries,
        "extra_headers": lambda extra: check_headers(extra, what="extra_headers"),
        "max_response_bytes": check_max_bytes,
        "deadline": check_deadline,
        "account": check_account,
    }
    given: Mapping[str, object] = options
    changes = {name: check(given[name]) for name, check in checks.items() if name in given}
    if "extra_headers" in changes:
        changes["headers"] = {**config.headers, **changes.pop("extra_headers")}
    unset = {name: why for name, why in config.unset.items() if name not in changes}
    applied = dataclasses.replace(config, unset=unset, **changes)
    if url_holds_key(applied.base_url, config.secret_key):  # the original's key, in a copy's URL
        raise ConfigurationError(KEY_IN_BASE_URL)
    return applied


def _checked_base_url(url: object, config: Config) -> str:
    checked = check_base_url(url, allow_insecure_http=config.allow_insecure_http)
    check_tls_verified(checked, verifies=config.verifies_tls)
    return checked


def from_env(name: str, kind: type[float] | type[int], default: T) -> float | int | T:
    """The number variable ``name`` holds (``PAYSDK_TIMEOUT``, seconds; ``PAYSDK_MAX_RETRIES``,
    a count), or ``default`` where it is unset or blank. It is spelt as the flag is (ASCII
    digits, ``_core/numbers.py``: ``int`` and ``float`` also read other scripts' and fullwidth
    ones, ``1_0`` and ``+5``, which no variable means) and its range is the keyword argument's,
    the error naming the variable, which the caller never passed."""
    value = os.environ.get(name)
    text = None if value is None else value.strip(string.whitespace)  # ASCII blanks, not U+00A0
    if not text:
        return default
    what = "number of seconds" if kind is float else "count"
    shown = quoted(value, code=True)  # "\uff13", a fullwidth 3, never reads as "3"
    # float() also reads 1e3, nan and inf, which --timeout does not: one rule for both
    number = read_whole_number(text) if kind is int else read_seconds(text)
    if number is None:
        rule = "ASCII digits only" if kind is int else SECONDS_RULE
        raise ConfigurationError(f"{name}={shown} is not a valid {what} ({rule})")
    if kind is float and underflows(text, number):  # 0.000...01: positive, and 0 once read
        raise ConfigurationError(f"{name}={shown} is {TOO_SMALL}")
    if kind is float and not 0 < number <= MAX_TIMEOUT:  # also thousands of digits (infinity)
        raise ConfigurationError(
            f"{name}={shown} is out of range: seconds more than 0 and at most {MAX_TIMEOUT:.0f}"
        )
    if kind is int and not 0 <= number <= MAX_RETRIES_LIMIT:
        raise ConfigurationError(
            f"{name}={shown} is out of range: a count from 0 to {MAX_RETRIES_LIMIT}"
        )
    return number


def check_base_url(url: object, *, allow_insecure_http: bool) -> str:
    if url is None:
        raise ConfigurationError(MISSING["base_url"])
    if not isinstance(url, str):
        raise ConfigurationError(f"base_url must be a str, not {type(url).__name__}")
    text = url.strip()
    try:
        parts = urlsplit(text)
        host = parts.hostname
        port = parts.port  # raises ValueError for a port that is not a number
    except ValueError as exc:
        raise ConfigurationError(f"base_url {text!r} is not a valid URL: {exc}") from None
    if port == 0:  # no server listens there: every call would fail to connect, and be retried
        raise ConfigurationError(f"base_url {text!r} names port 0, which nothing can listen on")
    if parts.scheme not in ("http", "https") or not host:
        shown = f" {text!r}" if "://" in text else ""  # no URL at all: perhaps the key, misplaced
        raise ConfigurationError(
            f"base_url{shown} must be an absolute http:// or https:// URL with a host"
        )
    if parts.username is not None or parts.password is not None:
        raise ConfigurationError("base_url must not contain credentials; use secret_key")
    if "?" in text or "#" in text:  # even an empty one: the path would go after it
        raise ConfigurationError(f"base_url {text!r} must not have a query or fragment")
    if parts.scheme == "http" and not allow_insecure_http and not is_loopback(host):
        looked_up = (  # browsers keep these on the machine; Python's resolver may ask DNS
            " (a name under .localhost is looked up as any other)"
            if host.lower().rstrip(".").endswith(".localhost")
            else ""
        )
        raise ConfigurationError(
            f"refusing to send the secret key over plain http:// to {host!r}{looked_up}; use "
            "https:// or pass allow_insecure_http=True if this network is trusted"
        )
    try:  # what httpx and the resolver will make of it: IDNA hosts, stray characters
        check_host(text)
    except (httpx.InvalidURL, ValueError) as exc:  # UnicodeError and IDNAError are ValueErrors
        raise ConfigurationError(f"base_url {text!r} is not a valid URL: {exc}") from None
    return text.rstrip("/")


def check_timeout(timeout: object) -> Timeout:
    """Seconds, an ``httpx.Timeout`` or ``None``, as paysdk's own ``Timeout``."""
    if isinstance(timeout, Timeout):
        phases = timeout._asdict()
    elif isinstance(timeout, httpx.Timeout):
        phases = timeout.as_dict()
    elif timeout is None:
        return Timeout(None, None, None, None)
    else:
        seconds = _check_seconds(timeout, "timeout")
        return Timeout(seconds, seconds, seconds, seconds)
    for phase, seconds in phases.items():
        if seconds is not None:
            _check_seconds(seconds, f"the {phase} timeout")
    return Timeout(**phases)  # a copy: what was checked cannot change after


def _check_seconds(seconds: object, what: str) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise ConfigurationError(
            f"{what} must be seconds, an httpx.Timeout or None, not {type(seconds).__name__}"
        )
    if not 0 < seconds <= MAX_TIMEOUT:  # also rejects NaN and infinity
        raise ConfigurationError(
            f"{what} must be more than 0 and at most {MAX_TIMEOUT:.0f} seconds, "
            f"got {quoted(seconds)}; use None for no limit"
        )
    return float(seconds)


def check_max_retries(max_retries: object) -> int:
    if isinstance(max_retries, bool) or not isinstance(max_retries, int):
        raise ConfigurationError(f"max_retries must be an int, not {type(max_retries).__name__}")
    if not 0 <= max_retries <= MAX_RETRIES_LIMIT:
        raise ConfigurationError(
            f"max_retries must be between 0 and {MAX_RETRIES_LIMIT}, got {quoted(max_retries)}"
        )
    return max_retries


def check_max_bytes(limit: object) -> int | None:
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 < limit <= MAX_BYTES_LIMIT:
        raise ConfigurationError(
            "max_response_bytes must be a whole number of bytes from 1 to 1 TiB (2**40), or None, "
            f"got {quoted(limit)}"
        )
    return limit


def check_pause_gc(pause_gc: object) -> bool:
    """``pause_gc`` as given: ``True`` or ``False`` only, since ``0``, ``"false"`` or ``None``
    would say something other than what the reader of the call sees."""
    if not isinstance(pause_gc, bool):
        raise ConfigurationError(f"pause_gc must be True or False, not {quoted(pause_gc)}")
    return pause_gc


def check_deadline(deadline: object) -> float | None:
    return None if deadline is None else _check_seconds(deadline, "deadline")


def check_headers(headers: Mapping[str, str], *, what: str) -> dict[str, str]:
    if not isinstance(headers, Mapping):
        raise ConfigurationError(f"{what} must be a mapping of str to str")
    checked: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise ConfigurationError(f"{what} must map str to str")
        if name.lower() in _RESERVED_HEADERS:
            hint = " (the key goes in secret_key)" if name.lower() == "authorization" else ""
            raise ConfigurationError(f"{what} must not set {name!r}; paysdk sets it{hint}")
        if not name or not all("\x21" <= ch <= "\x7e" and ch != ":" for ch in name):
            raise ConfigurationError(f"{what} has an invalid header name {name!r}")
        if value != value.strip(" \t") or not all(
            ch == "\t" or "\x20" <= ch <= "\x7e" for ch in value
        ):
            raise ConfigurationError(
                f"{what}[{name!r}] has characters that cannot be sent in a header "
                "(control or non-ASCII characters, or spaces at either end)"
            )
        unreadable = _unreadable_codings(value) if name.lower() == "accept-encoding" else []
        if unreadable:
            raise ConfigurationError(
                f"{what}[{name!r}] offers {', '.join(unreadable)}, which paysdk cannot read: "
                "it inflates gzip and deflate, and an answer in another coding would fail"
            )
        checked[name] = value
    return checked


def _unreadable_codings(accept_encoding: str) -> list[str]:
    """The codings an ``Accept-Encoding`` value offers (``q=0`` refuses one) that paysdk's
    decoder cannot read."""
    offered: list[str] = []
    for part in accept_encoding.split(","):
        coding, _, weight = part.partition(";")
        coding = coding.strip().lower()
        refused = re.fullmatch(r"\s*q\s*=\s*0(\.0{0,3})?\s*", weight) is not None
        if coding and not refused and coding not in READABLE_CODINGS:
            offered.append(coding)
    return offered

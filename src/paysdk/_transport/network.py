"""How a client reaches the service: the TLS context and the proxy, for every backend alike. A
``proxy=`` carries every request; else the environment's ``HTTPS_PROXY``, ``HTTP_PROXY``,
``ALL_PROXY`` and ``NO_PROXY`` are read as httpx reads them (``urllib.request``). To an
``https://`` service a proxy only carries a tunnel: it never sees the secret key or the payment."""

from __future__ import annotations

import base64
import errno
import os
import socket
import ssl
import urllib.request
from collections.abc import Callable, Iterator
from typing import NamedTuple, TypeVar, cast
from urllib.parse import unquote, urlsplit

from .._core.config import is_loopback
from .._core.steps import Answer, Failure, Send, proxy_authentication_required
from .._errors import ConfigurationError
from .tls import chain, ssl_context, unloadable

__all__ = [
    "Network",
    "Proxy",
    "one_error",
    "parse_proxy",
    "proxy_refused",
    "through_proxy",
    "timeout_failure",
]

PROXY_SCHEMES = ("http", "https")
MAX_ROUTES = 256
"""Routes remembered per client: hosts come from ``base_url`` (per call, too), so a platform
calling many hosts cannot grow the cache without end; past this it starts again."""


class Proxy(NamedTuple):
    """A proxy's address and its credentials, kept apart so the address can be shown."""

    url: str
    """``scheme://host:port``, without credentials."""
    auth: tuple[str, str] | None = None
    source: str = "proxy="
    """Where it was configured: ``proxy=``, or the environment variable that named it."""

    def __repr__(self) -> str:
        return f"Proxy({self.url!r}{', auth=<hidden>' if self.auth else ''})"

    @property
    def named(self) -> str:
        """The proxy as a message names it: its address and where it was configured, so the
        merchant looks in the right place; never its credentials."""
        where = self.source if self.source == "proxy=" else f"the environment's {self.source}"
        return f"{self.url} (from {where})"

    @property
    def credentials(self) -> tuple[bytes, bytes] | None:
        """The user and password in UTF-8, as ``authorization`` sends them (RFC 7617): httpcore
        takes them as bytes, and refuses a ``str`` that is not ASCII."""
        if self.auth is None:
            return None
        user, password = self.auth
        return user.encode(), password.encode()

    @property
    def authorization(self) -> str | None:
        """The ``Proxy-Authorization`` header's value, if the proxy takes credentials."""
        if self.auth is None:
            return None
        token = base64.b64encode(":".join(self.auth).encode()).decode("ascii")
        return f"Basic {token}"


def parse_proxy(url: str, source: str = "proxy=") -> Proxy:
    """A proxy URL (``http://user:password@proxy:3128``) as a ``Proxy``; ``source``: where it
    was configured (``proxy=``, or an environment variable's name).

    Raises:
        ValueError: the URL is not an http:// or https:// URL with a host.
    """
    parts = urlsplit(url.strip() if "://" in url else f"http://{url.strip()}")
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"the proxy URL's port is not a number: {exc}") from None
    if parts.scheme not in PROXY_SCHEMES:
        raise ValueError(
            f"a proxy URL must be http:// or https://, not {parts.scheme}://: paysdk (as httpx "
            "without its socks extra) speaks to HTTP proxies only"
        )
    if not parts.hostname:
        raise ValueError("a proxy URL must be http:// or https:// with a host")
    if port == 0:  # read as "no port", it would become the scheme's default: another proxy
        raise ValueError("the proxy URL names port 0, which no proxy can listen on")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    address = f"{parts.scheme}://{host}:{port or (443 if parts.scheme == 'https' else 80)}"
    auth = None
    if parts.username is not None:
        auth = (unquote(parts.username), unquote(parts.password or ""))
    return Proxy(address, auth, source)


class Network:
    """The TLS context and the proxy a client's requests go through; shared by ``with_options``
    copies, whatever their ``base_url``. The environment is read once, when the client is made,
    as httpx reads it. The TLS context is made when a connection first needs it: a client of an
    ``http://`` sandbox loads no CA bundle."""

    __slots__ = (
        "_environment",
        "_no_proxy",
        "_routes",
        "_ssl_context",
        "_verify",
        "proxy",
        "verifies",
    )

    def __init__(
        self, verify: ssl.SSLContext | str | bool, proxy: Proxy | None, *, trust_env: bool = True
    ) -> None:
        """
        Args:
            verify: what the service's certificate is verified with (``tls.ssl_context``'s
                argument): a context, the path of a CA bundle, the default trust (``True``) or
                none (``False``).
            proxy: the proxy for every request; ``None`` to follow the environment.
            trust_env: whether the environment's proxies are followed (without ``proxy``).
        """
        self._verify = verify
        self._ssl_context = verify if isinstance(verify, ssl.SSLContext) else None
        self.proxy = proxy
        if isinstance(verify, ssl.SSLContext):
            self.verifies = verify.verify_mode != ssl.CERT_NONE
        else:
            self.verifies = verify is not False
        self._environment = environment_proxies() if proxy is None and trust_env else {}
        named = urllib.request.getproxies_environment() if trust_env else {}
        self._no_proxy = named.get("no", "") if named else None  # None: the system's proxies
        self._routes: dict[tuple[str, str, int], Proxy | None] = {}

    @property
    def ssl_context(self) -> ssl.SSLContext:
        """The context, made on first use.

        Raises:
            ConfigurationError: the CA bundle the environment names cannot be loaded.
        """
        if self._ssl_context is None:
            try:
                self._ssl_context = ssl_context(self._verify)
            except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
                raise ConfigurationError(unloadable(self._verify, exc)) from None
        return self._ssl_context

    def __repr__(self) -> str:
        return f"Network(proxy={self.proxy!r}, verifies={self.verifies})"

    def proxy_for(self, scheme: str, host: str, port: int | None = None) -> Proxy | None:
        """The proxy a request to ``scheme://host:port`` goes through, or ``None`` to go direct;
        ``port`` left out is the scheme's default. The environment's proxy never carries a
        request to this machine (as Go's clients do): through it, ``127.0.0.1`` would be the
        proxy's own, and a key allowed over plain HTTP to loopback alone would cross the network."""
        if self.proxy is not None:
            return self.proxy
        port = port or (443 if scheme == "https" else 80)
        try:
            return self._routes[scheme, host, port]
        except KeyError:
            if len(self._routes) >= MAX_ROUTES:
                self._routes.clear()
            proxy = self._environment.get(scheme) or self._environment.get("all")
            if proxy is not None and (is_loopback(host) or self._bypassed(host, port)):
                proxy = None
            self._routes[scheme, host, port] = proxy
            return proxy

    def _bypassed(self, host: str, port: int) -> bool:
        """Whether ``NO_PROXY``, as it was when the client was made, names ``host``, or
        ``host:port`` (``api.internal:8443``) as httpx reads an entry with a port. Without it,
        for proxies from the system's settings (macOS's, Windows'), their own exceptions."""
        with_port = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if self._no_proxy is None:
            bypass = urllib.request.proxy_bypass
            return bool(bypass(host) or bypass(with_port))
        exceptions = {"no": self._no_proxy}
        return bool(_bypass_env(host, exceptions) or _bypass_env(with_port, exceptions))


_bypass_env = cast(
    "Callable[[str, dict[str, str]], object]", vars(urllib.request)["proxy_bypass_environment"]
)
"""urllib's reading of ``NO_PROXY`` (``proxy_bypass`` on Linux), given the value to read: in
every Python paysdk supports, but not in typeshed."""


def environment_proxies() -> dict[str, Proxy]:
    """The proxies the environment names, by the scheme they carry (``all`` for any).

    Raises:
        ValueError: one names a proxy paysdk cannot use (``socks5://``, say); httpx refuses it too.
    """
    proxies: dict[str, Proxy] = {}
    for scheme, url in urllib.request.getproxies().items():
        if scheme in ("http", "https", "all") and url:
            try:
                proxies[scheme] = parse_proxy(url, _variable(scheme))
            except ValueError as exc:
                raise ValueError(f"the environment's {_variable(scheme)}: {exc}") from None
    return proxies


def _variable(scheme: str) -> str:
    """The variable the environment's proxy for ``scheme`` came from: the lower-case one where
    it is set, as urllib reads it first, else the upper-case one."""
    lower = f"{scheme}_proxy"
    return lower if os.environ.get(lower) else lower.upper()


T = TypeVar("T")

PROXY_SUSPECTS = frozenset(
    {"proxy", "connect", "malformed", "tls_protocol", "timeout", "certificate"}
)
"""The failures a proxy on the way may have caused, which ``through_proxy`` looks at."""
UNREACHABLE = frozenset({errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH})
"""The errors of a TCP connection that was never made: through a proxy, the connection is to
the proxy (the proxy connects to the service), so these are the proxy's."""


def through_proxy(outcome: T, request: Send, network: Network | None) -> T | Failure:
    """``outcome``, naming the proxy ``request`` went through where it may be to blame: not
    connected to (``proxy_connect``, retried: it may be restarting), a refused tunnel, a 407 to a
    forwarded request, a connection broken on the way; through an ``https://`` proxy, also no
    TLS, no answer in time (most proxies speak plain HTTP and wait silently for the rest of a
    request) or a certificate that does not verify (checked with the service's trust). As it is
    without a ``network`` (a merchant's own httpx client)."""
    if network is None:
        return outcome
    if isinstance(outcome, Answer):
        if outcome.status_code != 407 or (proxy := _proxy_of(request, network)) is None:
            return outcome  # a 407 from a proxy of its own, unknown to the network: the core's
        return proxy_authentication_required(proxy.named)
    if not isinstance(outcome, Failure) or outcome.kind not in PROXY_SUSPECTS:
        return outcome
    if (proxy := _proxy_of(request, network)) is None:
        return outcome
    if outcome.kind in ("tls_protocol", "timeout", "certificate"):  # the https:// proxy's?
        return outcome._replace(proxy=proxy.named) if proxy.url.startswith("https:") else outcome
    if outcome.kind != "connect":
        return outcome._replace(proxy=proxy.named)
    for exc in _every_cause(outcome.cause):
        if _unreachable(exc):
            return outcome._replace(kind="proxy_connect", detail=_said(exc), proxy=proxy.named)
    return outcome._replace(proxy=proxy.named)  # the service, or the proxy: said to be on the way


def timeout_failure(exc: BaseException) -> Failure:
    """The ``Failure`` a library's timeout (``exc``) stands for, worded alike on every backend."""
    return Failure("timeout", f"no answer within the timeout ({type(exc).__name__})", cause=exc)


def proxy_refused(status: int, said: str, exc: BaseException) -> Failure:
    """A proxy's error answer (``said``: its ``status`` and reason) to a tunnel's ``CONNECT``;
    the core decides which answers a retry may change."""
    return Failure("proxy", said, status_code=status, cause=exc)


def one_error(errors: list[OSError]) -> OSError:
    """The one error that stands for each of a name's addresses failing: the error itself if
    there was one; else one saying each, with their ``errno`` where they share it (as
    aiohappyeyeballs raises it), so ``localhost`` refused at ``::1`` and ``127.0.0.1`` alike
    reads as refused."""
    if len(errors) == 1:
        return errors[0]
    said = f"Multiple exceptions: {', '.join(map(str, errors))}"
    numbers = {exc.errno for exc in errors}
    if len(numbers) == 1 and (number := numbers.pop()) is not None:
        return OSError(number, said)
    return OSError(said)


def _proxy_of(request: Send, network: Network) -> Proxy | None:
    """The proxy ``request`` went through: looked up by its host's IDNA name, as every
    backend routed it (``NO_PROXY`` names ``xn--bcher-kva.example``, not ``bücher.example``)."""
    parts = urlsplit(request.url)
    host = parts.hostname or ""
    if not host.isascii():
        import httpx  # only for a host beyond ASCII, which check_host let through as httpx does

        host = httpx.URL(request.url).raw_host.decode("ascii")
    return network.proxy_for(parts.scheme, host, parts.port)


def _unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says no TCP connection was made: refused, no route, or a name that does
    not resolve (through a proxy, the proxy's: the service's is resolved by the proxy)."""
    if isinstance(exc, socket.gaierror):
        return True
    return isinstance(exc, OSError) and exc.errno in UNREACHABLE


def _said(exc: BaseException) -> str:
    """What ``exc`` says in the operating system's words, the same on every backend (asyncio
    words a refusal "Connect call failed (address)")."""
    if isinstance(exc, OSError) and not isinstance(exc, socket.gaierror) and exc.errno:
        return os.strerror(exc.errno)
    return getattr(exc, "strerror", None) or str(exc)


def _every_cause(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc``, what it was raised from, and each exception of a group among them (anyio
    raises "All connection attempts failed" from the group of each address's failure)."""
    for current in chain(exc):
        yield current
        for inner in getattr(current, "exceptions", ()):
            if isinstance(inner, BaseException):
                yield from _every_cause(inner)

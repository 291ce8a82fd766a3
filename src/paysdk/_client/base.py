"""What ``Client`` and ``AsyncClient`` share: their configuration, checked when they are made,
per-call options, and how they present themselves. The calls themselves are in ``_async/client.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Generic, Literal, TypeVar

import httpx
from typing_extensions import Self, Unpack

from .options import NOT_GIVEN, CallOptions, NotGiven, TimeoutTypes, VerifyTypes
from .unpicklable import Unpicklable

if TYPE_CHECKING:  # loaded with the first client made (see load_engine)
    from .. import _errors
    from .._core.config import Config
    from .._errors.connection import closed_error
    from .._transport import httpx_common as _httpx
    from .._transport.async_streams import AsyncSender
    from .._transport.httpx_common import HttpxDefaults
    from .._transport.httpx_sync import SyncHttpxSender
    from .._transport.network import Network
    from . import configure as _configure
    from . import logs as _logs
    from . import network as _network

__all__ = ["BaseClient", "HttpBackend", "Lookup", "load_engine"]

HttpClientT = TypeVar("HttpClientT", httpx.Client, httpx.AsyncClient)
SenderT = TypeVar("SenderT", "SyncHttpxSender", "AsyncSender")
HttpBackend = Literal["httpx", "aiohttp"]
"""What ``AsyncClient(http_backend=)`` sends with: ``"httpx"``, or ``"aiohttp"`` (the ``aiohttp``
extra), several times httpx's throughput under concurrency."""

Lookup = Callable[[str], object]
"""Finds what the merchant expects for a reference: an ``Expected``, any object, mapping or row
(``sqlite3.Row``) with ``amount`` and ``currency`` (such as the merchant's order), or ``None``
for an unknown order."""


def load_engine() -> None:
    """Import what making a client needs, once, with the first client made: ``import paysdk``
    stays cheap for a program that only imports it."""
    global _errors, _httpx, _configure, _logs, _network, closed_error
    from .. import _errors
    from .._errors.connection import closed_error
    from .._transport import httpx_common as _httpx
    from . import configure as _configure
    from . import logs as _logs
    from . import network as _network


class BaseClient(Unpicklable, Generic[HttpClientT, SenderT]):
    """What both clients share: configuration, options and their presentation."""

    _config: Config
    _sender: SenderT
    _owns_http: bool
    _http_client_type: type[HttpClientT]
    _backends: tuple[str, ...] = ("httpx",)
    _load: Callable[[], None] = staticmethod(load_engine)
    """Imports what the client runs on (its subclass's calls need more than this module)."""
    _backend_name: Callable[[HttpBackend], str]
    """The name and version of what ``http_backend`` sends with, for the User-Agent."""

    def __init__(
        self,
        *,
        secret_key: str | None = None,
        base_url: str | None = None,
        timeout: TimeoutTypes | NotGiven = NOT_GIVEN,
        max_retries: int | NotGiven = NOT_GIVEN,
        default_headers: Mapping[str, str] | None = None,
        http_client: HttpClientT | None = None,
        allow_insecure_http: bool = False,
        max_response_bytes: int | None = None,
        deadline: float | None = None,
        http_backend: HttpBackend = "httpx",
        verify: VerifyTypes = True,
        proxy: str | None = None,
        app_info: str | None = None,
        account: str | None = None,
        pause_gc: bool = True,
    ) -> None:
        """Settings left out are read from the environment (``PAYSDK_*``), else defaulted.

        A client made where neither the arguments nor the environment give a secret key or a
        base URL (at import time, in ``manage.py migrate`` or a Docker build) is made, and each
        of its calls raises ``ConfigurationError`` saying what is missing, before any request.

        Args:
            secret_key: the merchant's secret key, sent as ``Authorization: Bearer ...``
                (default: ``$PAYSDK_SECRET_KEY``). It never appears in a repr, log or error.
            base_url: the service's URL, a path prefix included (default:
                ``$PAYSDK_BASE_URL``).
            timeout: seconds for each request as a whole, an ``httpx.Timeout``, or ``None`` for
                no limit ([`TimeoutTypes`][paysdk.TimeoutTypes]). Default:
                ``$PAYSDK_TIMEOUT``, else 30 s (5 s to connect).
            max_retries: how many times a retryable failure is tried again (0 to 10). Default:
                ``$PAYSDK_MAX_RETRIES``, else 2.
            default_headers: headers sent with every request.
            http_client: your own ``httpx.Client`` (``httpx.AsyncClient`` for ``AsyncClient``):
                paysdk sends through it and does not close it.
            allow_insecure_http: allow a plain ``http://`` ``base_url`` that is not loopback.
            max_response_bytes: the largest successful body read, decoded (default: 1 MiB for
                verify, 64 MiB for a list); ``None`` for those defaults.
            deadline: seconds a whole call may take, retries and waits included; ``None``: no
                limit beyond the attempts'.
            http_backend: ``"httpx"``, or ``"aiohttp"`` for ``AsyncClient`` only
                ([`HttpBackend`][paysdk.HttpBackend]).
            verify: an ``ssl.SSLContext`` or a CA bundle's path to check the service's
                certificate with (default: httpx's trust, or ``SSL_CERT_FILE``); ``False`` only
                for a loopback ``base_url`` ([`VerifyTypes`][paysdk.VerifyTypes]).
            proxy: a proxy URL for every request (default: the environment's
                ``HTTPS_PROXY``/``NO_PROXY``...).
            app_info: your application's name and version (``"myshop/1.4"``), added to the
                User-Agent.
            account: a label you choose for the merchant account this key reaches (ASCII,
                such as ``"lagos-1"``; never the key), for a platform with many: the payments
                this client verifies carry it, and a ledger fulfils each account's apart.
                ``""`` is the same as none: no label.
            pause_gc: whether ``list_payments`` pauses Python's cyclic garbage collector while
                it parses a list body past 1 MiB (faster; ``gc.disable()`` is process-wide, so
                other threads see it paused meanwhile). ``False`` leaves the collector alone.

        Raises:
            ConfigurationError: a setting that cannot work (an empty secret key, a malformed
                ``base_url``, a negative timeout, ``http_client`` with ``verify``...), before any
                request; the message says what to change.
        """
        try:
            self._load()
            if http_backend not in self._backends:
                from .._errors.quoting import quoted

                raise _errors.ConfigurationError(
                    f"{type(self).__name__} takes http_backend "
                    + " or ".join(repr(name) for name in self._backends)
                    + f", not {quoted(http_backend)}"
                )
            self._config = _configure.create_config(
                secret_key=secret_key,
                base_url=base_url,
                timeout=timeout,
                max_retries=max_retries,
                default_headers=default_headers,
                allow_insecure_http=allow_insecure_http,
                max_response_bytes=max_response_bytes,
                deadline=deadline,
                agent=_configure.user_agent(
                    self._backend_name(http_backend), _configure.check_app_info(app_info)
                ),
                verifies_tls=verify is not False,
                account=account,
                pause_gc=pause_gc,
            )
        finally:  # the key in no local of this frame: a debug page shows them (key_kept_out);
            secret_key = base_url = None  # nor the URL, refused when it holds the key
        if http_client is not None and not isinstance(http_client, self._http_client_type):
            raise _errors.ConfigurationError(self._not_an_http_client(http_client))
        if http_client is not None and http_backend != "httpx":
            raise _errors.ConfigurationError(
                "http_client is an httpx client: it needs http_backend='httpx'"
            )
        if http_client is not None and (verify is not True or proxy is not None):
            raise _errors.ConfigurationError(
                "verify= and proxy= configure the connections paysdk makes; a given "
                "http_client keeps its own: set them on it instead"
            )
        with _configure.key_kept_out(self._config.secret_key):
            network = _network.create_network(
                verify=verify, proxy=proxy, base_url=self._config.base_url
            )
        self._owns_http = http_client is None
        self._connect(http_client, http_backend, network)
        _logs.configure_logging()

    def _not_an_http_client(self, given: object) -> str:
        """Why ``given`` cannot be ``http_client``; for an httpx2 client, how to make it one."""
        wanted = self._http_client_type
        kind = type(given)
        message = (
            f"{type(self).__name__} needs http_client to be an {wanted.__module__}."
            f"{wanted.__qualname__}, not {kind.__module__}.{kind.__qualname__}"
        )
        if kind.__module__.partition(".")[0] == "httpx2" != wanted.__module__.partition(".")[0]:
            # paysdk maps httpx's exceptions: an httpx2 client would raise httpx2's, which
            # paysdk would not know for a network failure
            message += (
                ": paysdk runs on the httpx installed beside httpx2; for paysdk to run on "
                "httpx2, call httpx2.alias_httpx() before anything imports httpx (paysdk "
                "included), and an httpx client is then an httpx2 client"
            )
        return message

    def _connect(
        self, http_client: HttpClientT | None, backend: HttpBackend, network: Network
    ) -> None:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        """The service's URL that requests go to, as checked when the client was made; ``""``
        if it was made without one."""
        return self._config.base_url

    @property
    def timeout(self) -> httpx.Timeout:
        """The timeout of each request, as an ``httpx.Timeout``."""
        return _httpx.httpx_timeout(self._config.timeout)

    @property
    def account(self) -> str:
        """The merchant account's label (``account=``); ``""`` when it has none."""
        return self._config.account

    @property
    def max_retries(self) -> int:
        """How many times a retryable failure is tried again."""
        return self._config.max_retries

    def with_options(self, **options: Unpack[CallOptions]) -> Self:
        """A client sharing this one's connections, with other defaults (timeout, retries...).

        ``secret_key`` and ``base_url`` give a client for another merchant account: many
        accounts, one connection pool. The copy lives as long as this client: closing this one
        closes the copy's connections.

        Args:
            **options: the defaults to change ([`CallOptions`][paysdk.CallOptions]).

        Returns:
            A client of the same class, with those defaults.

        Raises:
            ConfigurationError: an option that cannot work, as the constructor would say.
        """
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._config = _applied(self._config, options)
        clone._owns_http = False
        return clone

    def _refusal(self) -> str:
        # a streaming pickler had written the secret key before reaching a lock it cannot pickle
        return (
            f"a paysdk.{type(self).__name__} cannot be pickled or deep-copied: it holds the "
            "secret key and open connections. Hand the other process the reference, and make "
            "a client there"
        )

    def __repr__(self) -> str:
        config = getattr(self, "_config", None)  # None if the constructor refused its arguments
        if config is None:
            return f"<paysdk.{type(self).__name__} (not configured)>"
        base_url = "<unset>" if "base_url" in config.unset else repr(config.base_url)
        return (
            f"<paysdk.{type(self).__name__} base_url={base_url} "
            f"max_retries={config.max_retries} secret_key=<hidden>>"
        )

    def _httpx_defaults(self) -> HttpxDefaults:
        return _httpx.HttpxDefaults(self._config.headers, self._config.timeout)

    def _options(self, options: CallOptions) -> Config:
        """The config of one call with ``options``, a ``secret_key`` among them then blotted out
        of ``options`` (``_applied``)."""
        if self._sender.is_closed:
            _blot_key(options, self._config.secret_key)
            raise closed_error(type(self).__name__)
        return self._usable(self._with_options(options))

    def _with_options(self, options: CallOptions) -> Config:
        """The config of one call with ``options``, not yet checked usable (``_usable``); a
        ``secret_key`` among them is then blotted out of ``options`` (``_applied``)."""
        return _applied(self._config, options)

    def _usable(self, config: Config) -> Config:
        """``config``, if a call can be made with it: the closed-client error, or a
        ConfigurationError naming a missing key or base URL, if not."""
        if self._sender.is_closed:
            raise closed_error(type(self).__name__)
        config.check_set()
        return config


def _applied(config: Config, options: CallOptions) -> Config:
    """``config`` with ``options`` applied. A ``secret_key`` among them is then blotted out of
    ``options`` itself, applied or refused, and so is a ``base_url`` holding a key (refused):
    the calling method's frame holds that dict while the call runs, and a debug page (Django's,
    under ``DEBUG = True``) shows every frame's locals."""
    try:
        return _configure.apply_options(config, options)
    finally:
        _blot_key(options, config.secret_key)


def _blot_key(options: CallOptions, key: str) -> None:
    """``options``' ``secret_key``, if any, as ``<secret key>``; its ``base_url``, if it holds
    that key or ``key`` (the client's), as ``<base_url holding the secret key>``."""
    url = options.get("base_url")
    if any(_configure.url_holds_key(url, held) for held in (key, options.get("secret_key"))):
        options["base_url"] = "<base_url holding the secret key>"
    if "secret_key" in options:
        options["secret_key"] = "<secret key>"  # noqa: S105 - the blot, not a key

"""A PostgreSQL ledger's URL, however malformed, never puts its password into an error, a repr
or the ``paysdk`` command's stderr: a URL libpq cannot parse (or would read a password into the
host or database of) is a ConfigurationError naming the part that is wrong; one it can parse
shows only its servers and database, and its connection errors hide the password."""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.parse

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import paysdk
from paysdk.ledger import AsyncLedger, Ledger, LedgerError
from tests.support.terminal import run_in_terminal

SECRET = "Pw7zQk"
"""In every password below: it must never be shown."""


def chain(error: BaseException) -> str:
    """The text of ``error`` and of every exception it holds as cause or context, with reprs."""
    texts: list[str] = []
    seen: BaseException | None = error
    while seen is not None and len(texts) < 20:
        texts += [str(seen), repr(seen)]
        seen = seen.__cause__ or seen.__context__
    return "\n".join(texts)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("postgresql://shop:s3cr%ZZet-Pw7zQk@127.0.0.1/shop", "password holds a '%'"),
        ("postgresql://shop:Pw7zQk%@127.0.0.1/shop", "password holds a '%'"),
        ("postgresql://shop:Pw7zQk%00@127.0.0.1/shop", "password holds a '%'"),
        ("postgresql://sh%op:Pw7zQk@127.0.0.1/shop", "user name holds a '%'"),
        ("postgresql://shop@127.0.0.1/shop?password=Pw7zQk%G0", "query holds a '%'"),
        ("postgresql://shop:Pw7zQk@[::1/shop", r"\[host\] is not closed"),
        ("postgresql://shop:Pw7zQk@[::1]x/shop", r"\[host\] is not closed"),
        ("postgresql://shop:Pw%7zQk@[::1/shop", "password holds a '%'"),
        ("postgresql://shop:Pw7/zQk@127.0.0.1/shop", "unencoded '@' or '/'"),
        ("postgresql://shop:Pw7@zQk@127.0.0.1/shop", "unencoded '@' or '/'"),
        ("postgresql://shop:Pw7zQk@127.0.0.1:port/shop", "port is not a number"),
        ("postgresql://shop@[::1/shop?password=Pw7zQk]", "no host name, IP address"),
        ("postgresql://shop:Pw7zQk\udce9@127.0.0.1/shop", "bytes that are not UTF-8"),
        ("postgresql://shop:Pw7zQk@127.0.0.1/caf\udce9", "bytes that are not UTF-8"),
    ],
)
def test_a_malformed_url_is_a_configuration_error_that_says_what_is_wrong(
    url: str, says: str
) -> None:
    for kind in (Ledger, AsyncLedger):
        with pytest.raises(paysdk.ConfigurationError, match=says) as refused:
            kind(url)
        assert "Pw7" not in chain(refused.value)
        assert "malformed" in str(refused.value)


def test_a_password_urllib_would_split_at_is_never_shown() -> None:
    """libpq reads ``?`` and ``#`` in a password as the password's; ``urllib`` would not."""
    for url in (
        "postgresql://shop:Pw7zQk?x@127.0.0.1:1/shop",
        "postgresql://shop:Pw7zQk#x@127.0.0.1:1/shop",
        "postgresql://shop:Pw7:zQk@127.0.0.1:1/shop",
    ):
        ledger = Ledger(url, timeout=1)
        assert repr(ledger) == (
            "<paysdk.Ledger postgresql 'postgresql://127.0.0.1:1/shop' table='paysdk_fulfilments'>"
        )
        with pytest.raises(LedgerError, match="Connection refused") as failed:
            ledger.row("order-1")
        assert "Pw7" not in chain(failed.value)


def test_a_unix_socket_directory_with_colons_as_cloud_sqls_is_connected_to(
    postgres_url: str,
) -> None:
    """Cloud SQL's socket directory is ``/cloudsql/project:region:instance``: no password, but a
    directory, which the ledger connects through as libpq does."""
    import psycopg

    from tests.support.postgres import fresh_database

    database = urllib.parse.urlsplit(fresh_database(postgres_url)).path.lstrip("/")
    with psycopg.connect(postgres_url) as admin:
        found = admin.execute("SHOW unix_socket_directories").fetchone()
    assert found is not None
    sockets = str(found[0]).split(",")[0].strip()
    port = urllib.parse.urlsplit(postgres_url).port
    root = tempfile.mkdtemp(prefix="pg-")  # short: a socket's path is at most 107 bytes
    try:
        os.mkdir(os.path.join(root, "cloudsql"))
        directory = os.path.join(root, "cloudsql", "shop-1:europe-west1:ledger")
        os.symlink(sockets, directory)
        url = f"postgresql://postgres:{SECRET}@/{database}?host={directory}&port={port}"
        with Ledger(url, timeout=5) as ledger:
            assert repr(ledger) == (
                f"<paysdk.Ledger postgresql 'postgresql://{directory}:{port}/{database}' "
                "table='paysdk_fulfilments'>"
            )
            assert ledger.row("order-1") is None  # connected through the socket
    finally:
        shutil.rmtree(root)


PIECES = ["%", "%Z", "%zz", "%0", "%00", "%41", "/", "@", "?", "#", ":", "[", "]", "x", "é", " "]
HOSTS = ["127.0.0.1:1", "[::1]:1", "[::1", "[::1]x", "[127.0.0.1]:1", "[", "]", "127.0.0.1:x"]


@settings(max_examples=300, deadline=None)
@given(
    before=st.lists(st.sampled_from(PIECES), max_size=3),
    after=st.lists(st.sampled_from(PIECES), max_size=3),
    user=st.sampled_from(["shop", "sh%op", "", "sh:op", "sh@op"]),
    host=st.sampled_from(HOSTS),
    in_query=st.booleans(),
)
def test_no_url_puts_its_password_into_an_error_or_a_repr(
    before: list[str], after: list[str], user: str, host: str, in_query: bool
) -> None:
    password = "".join(before) + SECRET + "".join(after)
    if in_query:
        url = f"postgresql://{user}@{host}/shop?sslmode=disable&password={password}"
    else:
        url = f"postgresql://{user}:{password}@{host}/shop"
    refused: paysdk.ConfigurationError | None = None
    try:
        ledger = Ledger(url, timeout=1)
    except paysdk.ConfigurationError as error:
        refused = error
    if refused is not None:
        assert SECRET not in chain(refused)
        assert str(refused).startswith("the PostgreSQL ledger URL is malformed: ")
        return
    shown = repr(ledger)
    assert SECRET not in shown
    if "127.0.0.1:1/" in shown or "[::1]:1/" in shown:  # a closed port: refused at once
        with pytest.raises(LedgerError) as failed:
            ledger.row("order-1")
        assert SECRET not in chain(failed.value)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("postgresql://shop:s3cr%ZZet-Pw7zQk@127.0.0.1/shop", "password holds a '%'"),
        ("postgresql://shop:Pw7zQk@[::1/shop", "[host] is not closed"),
        ("postgresql://shop:Pw7zQk?x@127.0.0.1:1/shop", "Connection refused"),
        ("postgresql://shop:Pw7zQk\udce9@127.0.0.1:1/shop", "bytes that are not UTF-8"),
    ],
)
def test_paysdk_ledger_list_in_a_terminal_never_prints_the_password(url: str, says: str) -> None:
    code, out, err = run_in_terminal("ledger", "list", "--ledger", url)
    assert code in (1, 2, 3), (code, out, err)
    assert says in err
    assert err.startswith("paysdk: error: ")
    assert "Pw7" not in out + err
    assert "Traceback" not in err

"""What happens to paysdk's objects handed to another process or store: a task queue's pickle, a
cache, ``copy``, a set or dict key."""

from __future__ import annotations

import copy
import io
import pickle
from collections.abc import Callable

import httpx
import pytest

import paysdk
from paysdk.testing import listed_payment, verified_payment

KEY = "sk_test_Pq7Xc2Lm9Vb4Nz1Rt6Yw3Ks8Hd5Jf0GaEiUoTy"
CLIENTS: list[Callable[[paysdk.Client | paysdk.AsyncClient], object]] = [
    lambda client: client,
    lambda client: client.with_options(timeout=3),
    lambda client: client.with_raw_response,
]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("made", CLIENTS, ids=["client", "with_options", "with_raw_response"])
@pytest.mark.parametrize("kind", [paysdk.Client, paysdk.AsyncClient], ids=lambda k: k.__name__)
def test_a_client_refuses_pickling_before_a_byte_of_the_key_is_written(
    kind: type[paysdk.Client | paysdk.AsyncClient],
    made: Callable[[paysdk.Client | paysdk.AsyncClient], object],
    protocol: int,
) -> None:
    """A pickler that writes to its file as it goes (dill, Python's pure-Python one) had put the
    key there before it met the client's lock; and ``cannot pickle '_thread.RLock'`` told the
    merchant nothing."""
    client = kind(secret_key=KEY, base_url="https://api.example.test/v1")
    target = made(client)
    with pytest.raises(TypeError, match=rf"paysdk\.{kind.__name__} cannot be pickled"):
        pickle.dumps(target, protocol)
    written = io.BytesIO()
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle._Pickler(written, protocol).dump(target)  # the streaming pickler
    assert KEY.encode() not in written.getvalue()
    assert KEY[8:].encode() not in written.getvalue()
    with pytest.raises(TypeError, match="cannot be pickled or deep-copied"):
        copy.deepcopy(target)


@pytest.mark.parametrize("kind", [paysdk.Client, paysdk.AsyncClient], ids=lambda k: k.__name__)
def test_a_shallow_copy_of_a_client_still_works_and_shares_its_connections(
    kind: type[paysdk.Client | paysdk.AsyncClient],
) -> None:
    client = kind(secret_key=KEY, base_url="https://api.example.test/v1", account="lagos-1")
    twin = copy.copy(client)
    assert type(twin) is kind
    assert (twin.base_url, twin.account) == (client.base_url, client.account)
    assert vars(twin) == vars(client)
    assert KEY not in repr(twin)


def test_a_listed_payment_is_hashable_as_a_verified_payment_is() -> None:
    """Both models are frozen; pydantic's hash of ``ListedPayment`` hashed its ``products``
    list and raised ``TypeError`` for every payment."""
    listed = listed_payment(reference="order-7")
    twin = pickle.loads(pickle.dumps(listed))  # noqa: S301 (bytes this test just made)
    assert twin == listed
    assert hash(twin) == hash(listed) == hash(copy.deepcopy(listed))
    assert len({listed, twin, verified_payment(reference="order-7")}) == 2
    assert {listed: 1}[twin] == 1


def test_an_error_pickles_its_headers_byte_for_byte_but_the_key() -> None:
    """Header bytes that are no ASCII (or no UTF-8) and repeated fields go into the pickle as
    received, only the echoed key blotted out; the error itself keeps them all."""
    headers = httpx.Headers(
        [
            (b"X-Echo", b"\x9b Bearer " + KEY.encode() + b" \xc3\xa9"),
            (b"Set-Cookie", b"a=1"),
            (b"Set-Cookie", b"b=2"),
        ]
    )
    error = paysdk.ServerError(
        "boom",
        status_code=502,
        headers=headers,
        content=b"\xff" + KEY.encode(),
        method="GET",
        url="https://api.example.test/v1/payments",
        scrub=lambda text: text.replace(KEY, "<secret key>"),
    )
    assert error.headers is headers
    assert error.content == b"\xff" + KEY.encode()
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        data = pickle.dumps(error, protocol)
        assert KEY.encode() not in data
        twin = pickle.loads(data)  # noqa: S301 (bytes this test just made)
        assert isinstance(twin.headers, httpx.Headers)
        assert twin.headers.raw == [
            (b"X-Echo", b"\x9b Bearer <secret key> \xc3\xa9"),
            (b"Set-Cookie", b"a=1"),
            (b"Set-Cookie", b"b=2"),
        ]
        assert twin.content == b"\xff<secret key>"
        assert str(twin) == str(error)

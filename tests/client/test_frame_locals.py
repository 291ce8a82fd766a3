"""What an error tracker reads of a failed call: the local variables of each frame the error
passed through. Sentry (``include_local_variables``, on by default) and Django's debug page
show them; Sentry serializes a mapping, and a tuple, item by item, past its repr, and a string
as it is. A call that fails, however it fails, leaves the secret key in no local of paysdk's
frames, read that way."""

from __future__ import annotations

import os
import secrets
import string
from collections.abc import Iterator, Mapping

import pytest

import paysdk
from paysdk.sandbox import Fault, Sandbox
from tests.conftest import MakeClient
from tests.support.hostile import HostileServer, reset

pytestmark = pytest.mark.anyio

KEY = "sk_test_" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(40))
PAYSDK = os.path.dirname(paysdk.__file__) + os.sep


def _shown(value: object, depth: int = 0) -> Iterator[str]:
    """The text an error tracker writes of ``value``: a mapping's keys and values and a
    sequence's items one by one (Sentry's serializer, ten levels deep), anything else its
    repr, a string as it is."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, (bytes, bytearray)):
        yield bytes(value).decode("utf-8", "replace")
    elif depth < 10 and isinstance(value, Mapping):
        for name, item in list(value.items()):  # pyright: ignore[reportUnknownVariableType]
            yield from _shown(name, depth + 1)
            yield from _shown(item, depth + 1)
    elif depth < 10 and isinstance(value, (tuple, list, set, frozenset)):
        for item in list(value):  # pyright: ignore[reportUnknownVariableType,reportUnknownArgumentType]
            yield from _shown(item, depth + 1)
    else:
        yield repr(value)


def paysdk_locals_holding(key: str, exc: BaseException, within: str = PAYSDK) -> list[str]:
    """The locals of paysdk's frames (``within``: of the files under that path) in ``exc``'s
    traceback, and in those of the errors it was raised from, whose value shows ``key`` as an
    error tracker serializes it."""
    found: list[str] = []
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending:
        shown = pending.pop()
        if id(shown) in seen:
            continue
        seen.add(id(shown))
        tb = shown.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            if frame.f_code.co_filename.startswith(within):
                found += [
                    f"{frame.f_code.co_name}:{name}"
                    for name, value in frame.f_locals.items()
                    if any(key in text for text in _shown(value))
                ]
            tb = tb.tb_next
        pending += [e for e in (shown.__cause__, shown.__context__) if e is not None]
    return found


class _Hidden(dict[str, str]):
    def __repr__(self) -> str:
        return "{...}"


def _fail(step: tuple[str, _Hidden]) -> None:
    raise RuntimeError(step[0])


def test_the_walk_finds_the_key_in_a_tuple_of_a_mapping_whose_repr_hides_it() -> None:
    """The check itself: a tuple holding a dict whose repr hides the key is walked through."""
    step = ("GET", _Hidden(authorization=f"Bearer {KEY}"))
    assert KEY not in repr(step)
    with pytest.raises(RuntimeError) as raised:
        _fail(step)
    assert paysdk_locals_holding(KEY, raised.value, within=__file__) == [
        "test_the_walk_finds_the_key_in_a_tuple_of_a_mapping_whose_repr_hides_it:step",
        "_fail:step",
    ]


FAULTS = {
    "server_error": Fault(status=500, body="boom"),
    "unauthorized": Fault(status=401, body="no"),
    "rate_limited": Fault(status=429, body="slow", headers={"Retry-After": "0"}),
    "timeout": Fault(delay=2.0),
    "disconnect_before_response": Fault(disconnect="before_response"),
    "disconnect_mid_body": Fault(disconnect="mid_body"),
    "truncated": Fault(disconnect="truncated"),
    "not_json": Fault(status=200, body="not json"),
}


@pytest.fixture(scope="module")
def keyed_sandbox() -> Iterator[Sandbox]:
    with Sandbox(secret_key=KEY) as sandbox:
        yield sandbox


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_a_failed_call_leaves_the_key_in_no_local_of_paysdk_s_frames(
    keyed_sandbox: Sandbox, make_loopback_client: MakeClient, fault: str
) -> None:
    keyed_sandbox.clear_faults()
    keyed_sandbox.inject(FAULTS[fault], times=None)
    try:
        client = make_loopback_client(
            secret_key=KEY, base_url=keyed_sandbox.base_url, max_retries=0, timeout=0.5
        )
        with pytest.raises(paysdk.PaySDKError) as raised:
            await client.verify("order-1")
    finally:
        keyed_sandbox.clear_faults()
    assert paysdk_locals_holding(KEY, raised.value) == []


async def test_a_payment_not_found_leaves_the_key_in_no_local_of_paysdk_s_frames(
    keyed_sandbox: Sandbox, make_loopback_client: MakeClient
) -> None:
    client = make_loopback_client(secret_key=KEY, base_url=keyed_sandbox.base_url, max_retries=0)
    with pytest.raises(paysdk.PaySDKError) as raised:
        await client.verify("no-such-order")
    assert paysdk_locals_holding(KEY, raised.value) == []


async def test_a_reset_connection_leaves_the_key_in_no_local_of_paysdk_s_frames(
    hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    hostile.script(reset())
    client = make_loopback_client(secret_key=KEY, base_url=hostile.base_url, max_retries=0)
    with pytest.raises(paysdk.APIConnectionError) as raised:
        await client.verify("order-1")
    assert paysdk_locals_holding(KEY, raised.value) == []

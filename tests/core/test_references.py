"""reference_problem, is_plain and check_reference: what a payment reference may be."""

from __future__ import annotations

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

import paysdk
from paysdk import _core
from tests.conftest import make_config

CONFIG = make_config()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_a_reference_or_an_invalid_reference_error(reference: str) -> None:
    try:
        request = _core.verify_request(CONFIG, reference)
    except paysdk.InvalidReferenceError:
        return
    path = httpx.URL(request.url).raw_path
    assert path.startswith(b"/v1/payment/")
    assert b"/" not in path[len(b"/v1/payment/") :]
    assert b"?" not in path and b"#" not in path


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("aZ09_.~- /%\t\u200b"), min_size=0, max_size=300))
def test_a_plain_reference_passes_every_rule_the_fast_path_skips(reference: str) -> None:
    # verify and reference_problem take plain references in one regex step: it must agree
    # with the rules in full, which the fast path would otherwise silently outrun.
    from paysdk._core import references

    fast = references.reference_problem(reference)
    plain = references.is_plain(reference)
    original = references.is_plain
    try:
        references.is_plain = lambda _: False  # type: ignore[assignment]
        full = references.reference_problem(reference)
    finally:
        references.is_plain = original
    assert fast == full
    if plain:
        assert full is None

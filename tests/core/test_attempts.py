"""Attempts: a call's attempts counted and kept within its deadline, driven by hand."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

import paysdk
from paysdk import _core
from tests.conftest import answered, make_config


def test_a_call_deadline_stops_retries_that_would_pass_it() -> None:
    now = [0.0]
    policy = _core.RetryPolicy(max_retries=10, random=lambda: 0.0, monotonic=lambda: now[0])
    config = make_config(timeout=5, max_retries=10, deadline=3.0)
    request = _core.verify_request(config, "order-1")
    plan = _core.call(config, request, _core.parse_verify, policy=policy)
    first = next(plan)
    assert isinstance(first, _core.Send)
    assert first.budget == 3.0  # the attempt may not outlive the call
    waits = []
    step: Any = plan.send(answered(httpx.Response(503)))
    while isinstance(step, _core.Sleep):
        waits.append(step.seconds)
        now[0] += step.seconds + 0.4
        step = plan.send(None)
        assert isinstance(step, _core.Send)
        assert step.budget is not None
        assert step.budget <= 3.0 - now[0] + 1e-9
        if len(waits) == 2:
            break
        step = plan.send(answered(httpx.Response(503)))
    assert waits == [0.5, 1.0]
    with pytest.raises(paysdk.ServerError) as caught:  # a third wait (2 s) would pass 3 s
        plan.send(answered(httpx.Response(503)))
    assert caught.value.attempts == 3


def test_a_call_deadline_cuts_every_phase_of_its_attempts_timeout() -> None:
    """What is left of the deadline bounds each phase of an attempt, not only its budget: the
    sync client waits for a free connection up to the pool phase, which no socket deadline
    covers, so a pool timeout past the deadline (or none) would keep a call past it."""
    now = [0.0]
    policy = _core.RetryPolicy(max_retries=2, random=lambda: 0.0, monotonic=lambda: now[0])
    config = make_config(timeout=httpx.Timeout(10.0, pool=None), deadline=3.0)
    request = _core.verify_request(config, "order-1")
    plan = _core.call(config, request, _core.parse_verify, policy=policy)
    first = next(plan)
    assert isinstance(first, _core.Send)
    assert first.budget == 3.0
    assert first.timeout == _core.Timeout(connect=3.0, read=3.0, write=3.0, pool=3.0)
    assert isinstance(plan.send(answered(httpx.Response(503))), _core.Sleep)
    now[0] = 2.0
    second = plan.send(None)
    assert isinstance(second, _core.Send)
    assert second.timeout == _core.Timeout(connect=1.0, read=1.0, write=1.0, pool=1.0)


def test_a_phase_shorter_than_what_is_left_of_the_deadline_is_kept() -> None:
    policy = _core.RetryPolicy(max_retries=2, random=lambda: 0.0, monotonic=lambda: 0.0)
    config = make_config(timeout=httpx.Timeout(10.0, connect=2.0), deadline=5.0)
    request = _core.verify_request(config, "order-1")
    plan = _core.call(config, request, _core.parse_verify, policy=policy)
    first = next(plan)
    assert isinstance(first, _core.Send)
    assert first.timeout == _core.Timeout(connect=2.0, read=5.0, write=5.0, pool=5.0)

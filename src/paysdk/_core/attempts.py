"""A call's attempts: how many were made, what is left of its deadline, and the wait before the
next one (the retry policy decides, this applies it)."""

from __future__ import annotations

import functools
import logging
from typing import TypeVar

from .._errors import APITimeoutError, PaySDKError
from .config import Config
from .retry import RetryPolicy
from .steps import Send, Sleep

__all__ = ["Attempts", "attempts_for"]

log = logging.getLogger("paysdk")

E = TypeVar("E", bound=PaySDKError)


class Attempts:
    """Counts a call's attempts and keeps it within its deadline; shared by every plan."""

    __slots__ = ("config", "policy", "retries_done", "started")

    def __init__(self, config: Config, policy: RetryPolicy, started: float) -> None:
        self.config = config
        self.policy = policy
        self.started = started
        self.retries_done = 0

    def send(self, request: Send) -> Send:
        """``request`` with its budget cut to what is left of the call's deadline."""
        deadline = self.config.deadline
        if deadline is None:
            return request
        left = deadline - (self.policy.monotonic() - self.started)
        if left <= 0:
            raise APITimeoutError(
                f"the call's deadline of {deadline:g}s passed after {self.retries_done} attempt(s)",
                method=request.method,
                url=request.url,
            )
        budget = left if request.budget is None else min(request.budget, left)
        return request._replace(budget=budget)

    def counted(self, error: E) -> E:
        """``error``, saying how many attempts the call made (this one included)."""
        error.attempts = self.retries_done + 1
        return error

    def wait(self, request: Send, error: PaySDKError) -> Sleep:
        """The wait before the next attempt, or ``error`` raised when none should follow."""
        self.counted(error)
        wait = self.policy.delay(self.retries_done, error)
        deadline = self.config.deadline
        if (
            wait is not None
            and deadline is not None
            and self.policy.monotonic() - self.started + wait >= deadline
        ):
            wait = None  # the call would end past its deadline: raise now instead
        if wait is None:
            raise error
        self.retries_done += 1
        log.info(
            "%s failed (%s); retry %d of %d in %.2fs",
            request,
            type(error).__name__,
            self.retries_done,
            self.policy.max_retries,
            wait,
        )
        return Sleep(wait)


def attempts_for(config: Config, policy: RetryPolicy | None) -> Attempts:
    """The attempts of one call under ``config``, with ``policy`` or the default one."""
    policy = policy or _default_policy(config.max_retries)
    return Attempts(config, policy, policy.monotonic())


@functools.lru_cache(maxsize=16)  # immutable, and max_retries takes at most 11 values
def _default_policy(max_retries: int) -> RetryPolicy:
    return RetryPolicy(max_retries=max_retries)

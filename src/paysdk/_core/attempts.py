"""A call's attempts: how many were made, what is left of its deadline, the wait before the
next one (the retry policy decides, this applies it), and the log line for each, its facts as
``extra`` fields (``LOG_FIELDS``) that a JSON log pipeline filters by without parsing sentences.
"""

from __future__ import annotations

import functools
import logging
from typing import TypeVar

from .._errors import APIError, APITimeoutError, PaySDKError
from .._errors.api import request_id_of
from .config import Config, Timeout
from .retry import RetryPolicy
from .steps import Answer, Failure, Opened, Send, Sleep

__all__ = ["LOG_FIELDS", "Attempts", "attempts_for"]

LOG_FIELDS = (
    "paysdk_reference",
    "paysdk_attempt",
    "paysdk_status_code",
    "paysdk_elapsed_ms",
    "paysdk_request_id",
    "paysdk_method",
    "paysdk_url",
    "paysdk_outcome",
    "paysdk_retry_in_s",
)
"""The ``extra`` fields paysdk's log records may carry; ``None`` where a fact does not apply.
None of them holds the secret key."""

log = logging.getLogger("paysdk")

E = TypeVar("E", bound=PaySDKError)


class Attempts:
    """Counts a call's attempts and keeps it within its deadline; shared by every plan."""

    __slots__ = ("attempt_started", "config", "policy", "reference", "retries_done", "started")

    def __init__(
        self, config: Config, policy: RetryPolicy, started: float, reference: str | None = None
    ) -> None:
        self.config = config
        self.policy = policy
        self.started = started
        self.attempt_started = started
        self.reference = reference
        self.retries_done = 0

    def send(self, request: Send) -> Send:
        """``request`` with its budget, and each phase of its timeout, cut to what is left of
        the call's deadline: a phase no socket deadline or cancel scope covers (the sync
        client's wait for a free connection, up to the pool timeout) ends by it too."""
        self.attempt_started = self.policy.monotonic()
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
        timeout = Timeout(
            *(budget if phase is None or phase > budget else phase for phase in request.timeout)
        )
        return request._replace(budget=budget, timeout=timeout)

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
        if log.isEnabledFor(logging.INFO):
            status = error.status_code if isinstance(error, APIError) else None
            request_id = error.request_id if isinstance(error, APIError) else None
            log.info(
                "%s failed (%s); retry %d of %d in %.2fs",
                str(request),  # the Send holds the key: a formatter may write out args
                type(error).__name__,
                self.retries_done,
                self.policy.max_retries,
                wait,
                extra=self._fields(
                    request,
                    status=status,
                    request_id=request_id,
                    outcome=type(error).__name__,
                    retry_in=wait,
                    attempt=self.retries_done,
                ),
            )
        return Sleep(wait)

    def log_outcome(self, request: Send, outcome: Answer | Opened | Failure) -> None:
        """The DEBUG line for what an attempt brought: its status (or failure), time and the
        answer's request id."""
        if not log.isEnabledFor(logging.DEBUG):
            return
        said: str
        if isinstance(outcome, Failure):
            status, request_id, said = None, None, outcome.kind
        else:
            status, request_id = outcome.status_code, request_id_of(outcome.headers, request.scrub)
            said = str(status)
        elapsed_ms = round((self.policy.monotonic() - self.attempt_started) * 1000.0, 1)
        log.debug(
            "%s -> %s in %.0f ms%s",
            str(request),  # the Send holds the key: a formatter may write out args
            said,
            elapsed_ms,
            f" (request id {request_id})" if request_id else "",
            extra=self._fields(
                request,
                status=status,
                request_id=request_id,
                outcome=said,
                elapsed_ms=elapsed_ms,
                attempt=self.retries_done + 1,
            ),
        )

    def _fields(
        self,
        request: Send,
        *,
        status: int | None,
        request_id: str | None,
        outcome: str,
        attempt: int,
        elapsed_ms: float | None = None,
        retry_in: float | None = None,
    ) -> dict[str, object]:
        return {
            "paysdk_reference": self.reference,
            "paysdk_attempt": attempt,
            "paysdk_status_code": status,
            "paysdk_elapsed_ms": elapsed_ms,
            "paysdk_request_id": request_id,
            "paysdk_method": request.method,
            "paysdk_url": request.url,
            "paysdk_outcome": outcome,
            "paysdk_retry_in_s": retry_in,
        }


def attempts_for(
    config: Config, policy: RetryPolicy | None, reference: str | None = None
) -> Attempts:
    """The attempts of one call under ``config``, with ``policy`` or the default one;
    ``reference`` names the payment in each log line."""
    policy = policy or _default_policy(config.max_retries)
    return Attempts(config, policy, policy.monotonic(), reference)


@functools.lru_cache(maxsize=16)  # immutable, and max_retries takes at most 11 values
def _default_policy(max_retries: int) -> RetryPolicy:
    return RetryPolicy(max_retries=max_retries)

"""The list shape's payment statuses, apart from the models: the command line names them in its
help without loading pydantic."""

from __future__ import annotations

from enum import Enum

from .._lazy import publish

__all__ = ["PaymentStatus"]


class PaymentStatus(str, Enum):
    """The status values the service is known to send. The set is open: others arrive as str."""

    COMPLETED = "COMPLETED"
    FAILED = "FAILED"

    def __str__(self) -> str:
        return self.value


publish("paysdk", PaymentStatus)

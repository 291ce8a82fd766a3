"""What a row returns and how the summary shows it: a measure, its baseline, the ratio, the goal."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

MB: Final = 1024 * 1024


@dataclass(frozen=True)
class Goal:
    """What a row's goal asks of a measure, such as ``<= 2.00x`` or ``< 100 MB``."""

    op: Literal["<=", ">=", "<"]
    limit: float
    unit: str = "x"

    def met(self, value: float) -> bool:
        if self.op == "<=":
            return value <= self.limit
        if self.op == ">=":
            return value >= self.limit
        return value < self.limit

    def __str__(self) -> str:
        return f"{self.op} {figure_text(self.limit, self.unit)}"


@dataclass(frozen=True)
class Result:
    """One line of the summary: a measure, its baseline, the ratio and whether the goal is met."""

    row: str
    measure: str
    baseline: str
    candidate: str
    value: float | None
    """The ratio (or megabytes, connections, round trips: see ``unit``); ``None`` when the job
    failed."""
    unit: str = "x"
    goal: Goal | None = None
    """``None``: context, measured for the reader, no goal of its own."""
    error: str = ""

    @property
    def verdict(self) -> str:
        if self.value is None:
            return f"FAILED: {self.error}"
        if self.goal is None:
            return "context"
        return "met" if self.goal.met(self.value) else "NOT met"

    @property
    def figure(self) -> str:
        return "-" if self.value is None else figure_text(self.value, self.unit)


def figure_text(value: float, unit: str) -> str:
    """A ratio as ``1.23x``, round trips as ``3.10 RTT``, a size or count as ``1,234 MB``."""
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "RTT":
        return f"{value:.2f} RTT"
    return f"{value:,.0f} {unit}"


def seconds_text(seconds: float) -> str:
    """Seconds in the unit that reads best: ``1.23 s``, ``12.3 ms`` or ``123 us``."""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} us"


def mb(size: int) -> str:
    """Bytes as ``1,234 MB`` (mebibytes, as ``ru_maxrss`` counts them)."""
    return f"{size / MB:,.0f} MB"


def failed(row: str, measure: str, baseline: str, error: str, unit: str = "x") -> Result:
    """A measure whose job failed: shown as FAILED with the error, never as a number."""
    return Result(row, measure, baseline, "-", None, unit=unit, error=error)


def table(results: Sequence[Result]) -> str:
    """The summary as a Markdown table, to paste into docs/performance.md."""
    lines = [
        "| row | measure | baseline | paysdk | ratio or size | goal | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        goal = "-" if r.goal is None else str(r.goal)
        lines.append(
            f"| {r.row} | {r.measure} | {r.baseline} | {r.candidate} | {r.figure} | {goal} "
            f"| {r.verdict} |"
        )
    return "\n".join(lines)

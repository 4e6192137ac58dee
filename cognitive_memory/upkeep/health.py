"""One line of a health report: what ``memory_system doctor`` prints and the dashboard shows.

An expected failure (a locked store, a damaged file, a full disk) is a ``fail`` result with a
message that says what to do, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["REPAIR_HINT", "CheckResult", "Status", "count_phrase", "skipped"]

Status = Literal["ok", "warn", "fail"]
REPAIR_HINT = "run `memory_system doctor --repair` to rebuild the index from SQLite"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One line of the doctor's report."""

    name: str
    status: Status
    detail: str


def count_phrase(count: int, singular: str, plural: str | None = None) -> str:
    """``1 vector``, ``2 vectors``, ``3 memories``."""
    return f"{count} {singular if count == 1 else plural or singular + 's'}"


def skipped(name: str, because: str) -> CheckResult:
    """A check that could not run because the check it needs failed."""
    return CheckResult(name, "warn", f"skipped: needs {because}, which failed")

"""Prune rules as pure functions: which criteria a memory matched, and the confirm token that ties
a real prune to the exact set of memories its dry run listed."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass

from cognitive_memory.errors import InvalidInputError

__all__ = [
    "DAY_SECONDS",
    "MAX_PRUNE",
    "TOKEN_SECONDS",
    "PruneCandidate",
    "PruneCriteria",
    "check_token",
    "make_token",
    "reasons",
]

DAY_SECONDS = 86400.0
# A confirm token is valid this long after its dry run.
TOKEN_SECONDS = 600
# One prune moves at most this many memories to the trash (the oldest that match first).
MAX_PRUNE = 1000


@dataclass(frozen=True, slots=True)
class PruneCriteria:
    """What to prune; every criterion given must hold. ``keep_latest`` spares the N newest matches."""

    older_than_days: float | None = None
    not_accessed_days: float | None = None
    max_importance: float | None = None
    tags: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    hierarchy_levels: tuple[int, ...] = ()
    keep_latest: int = 0

    def check(self) -> PruneCriteria:
        """Refuse a prune without a criterion that selects memories (keep_latest only narrows)."""
        selecting = (self.older_than_days, self.not_accessed_days, self.max_importance)
        if all(value is None for value in selecting) and not (
            self.tags or self.projects or self.hierarchy_levels
        ):
            raise InvalidInputError(
                "Give at least one criterion (older_than_days, not_accessed_days, max_importance, tags, "
                "projects or hierarchy_levels): an empty prune would take every memory.",
                code="no_criteria",
            )
        return self


@dataclass(frozen=True, slots=True)
class PruneCandidate:
    """What a prune reads of a memory (times in seconds since the epoch)."""

    id: str
    content: str
    timestamp: float
    last_accessed: float | None
    importance_score: float
    tags: tuple[str, ...]
    project: str
    hierarchy_level: int


def reasons(candidate: PruneCandidate, criteria: PruneCriteria, now: float) -> list[str]:
    """Why ``candidate`` matches: one phrase per criterion given, with the memory's own value."""
    why = []
    if criteria.older_than_days is not None:
        why.append(f"stored {_days(now - candidate.timestamp)} days ago")
    if criteria.not_accessed_days is not None:
        if candidate.last_accessed is None:
            why.append("never recalled")
        else:
            why.append(f"last recalled {_days(now - candidate.last_accessed)} days ago")
    if criteria.max_importance is not None:
        why.append(f"importance {candidate.importance_score:.2f}")
    if criteria.tags:
        shared = [tag for tag in candidate.tags if tag in criteria.tags]
        why.append("tagged " + ", ".join(shared))
    if criteria.projects:
        why.append(f"project {candidate.project}")
    if criteria.hierarchy_levels:
        why.append(f"level {candidate.hierarchy_level}")
    return why


def _days(seconds: float) -> int:
    return int(seconds // DAY_SECONDS)


def make_token(secret: str, ids: Sequence[str], expires: int) -> str:
    """A token for exactly ``ids`` (in any order) until ``expires`` (seconds since the epoch)."""
    return f"{expires}.{_digest(secret, ids, expires)}"


def check_token(secret: str, token: str, ids: Sequence[str], now: float) -> None:
    """Refuse a token that expired or was made for another set of memories."""
    stamp, _, digest = token.partition(".")
    if not stamp.isdigit() or not digest:
        raise InvalidInputError(
            "The confirm token is malformed: pass the `confirm` value a dry run returned.",
            code="invalid_token",
        )
    if not hmac.compare_digest(digest, _digest(secret, ids, int(stamp))):
        raise InvalidInputError(
            "The confirm token is not for the memories these criteria match now (the criteria differ, "
            "or memories changed since the dry run): run the dry run again and confirm its list.",
            code="token_mismatch",
        )
    if int(stamp) < now:
        raise InvalidInputError(
            f"The confirm token expired (it is valid for {TOKEN_SECONDS // 60} minutes): "
            "run the dry run again.",
            code="token_expired",
        )


def _digest(secret: str, ids: Sequence[str], expires: int) -> str:
    message = "\n".join([str(expires), *sorted(ids)]).encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()

"""Prune rules as pure functions: which criteria a memory matched, and the confirm token that ties
a real prune to its dry run: the same criteria, the same memories in the same versions, once."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Collection, Sequence
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
    version: int = 0  # how many earlier versions it has: an update changes it


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


def make_token(
    secret: str, criteria: PruneCriteria, candidates: Sequence[PruneCandidate], expires: int
) -> str:
    """A token for these criteria and exactly ``candidates`` as they are now (in any order), until
    ``expires`` (seconds since the epoch). A random nonce makes each dry run's token its own."""
    nonce = secrets.token_hex(8)
    return f"{expires}.{nonce}.{_digest(secret, criteria, candidates, expires, nonce)}"


def check_token(
    secret: str,
    token: str,
    criteria: PruneCriteria,
    candidates: Sequence[PruneCandidate],
    now: float,
    used: Collection[str] = (),
) -> str:
    """Refuse a token that is malformed, already ``used``, made for other criteria or another set of
    memories (or the same ones in other versions), or expired. Returns its digest, the key a prune
    records as used."""
    stamp, nonce, digest = _parts(token)
    if digest in used:
        raise InvalidInputError(
            "This confirm token was already used: a token prunes once. Run the dry run again for a new one.",
            code="token_used",
        )
    if not hmac.compare_digest(digest, _digest(secret, criteria, candidates, stamp, nonce)):
        raise InvalidInputError(
            "The confirm token is not for these criteria and the memories they match now (the criteria "
            "differ, or a listed memory changed, went or was joined by another since the dry run): run "
            "the dry run again and confirm its list.",
            code="token_mismatch",
        )
    if stamp < now:
        raise InvalidInputError(
            f"The confirm token expired (it is valid for {TOKEN_SECONDS // 60} minutes): "
            "run the dry run again.",
            code="token_expired",
        )
    return digest


def _parts(token: str) -> tuple[int, str, str]:
    stamp, nonce, digest = parts if len(parts := token.split(".")) == 3 else ("", "", "")
    if not (stamp.isascii() and stamp.isdigit() and len(stamp) <= 12 and nonce.isalnum() and digest):
        raise InvalidInputError(
            "The confirm token is malformed: pass the `confirm` value a dry run returned.",
            code="invalid_token",
        )
    return int(stamp), nonce, digest


def _digest(
    secret: str, criteria: PruneCriteria, candidates: Sequence[PruneCandidate], expires: int, nonce: str
) -> str:
    listed = sorted([c.id, c.version, c.content] for c in candidates)
    message = json.dumps([expires, nonce, _criteria_key(criteria), listed], ensure_ascii=False)
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()


def _criteria_key(criteria: PruneCriteria) -> dict[str, object]:
    """The criteria in one spelling: 90 and 90.0 days, or tags in another order, are the same."""

    def number(value: float | None) -> float | None:
        return None if value is None else float(value)

    return {
        "older_than_days": number(criteria.older_than_days),
        "not_accessed_days": number(criteria.not_accessed_days),
        "max_importance": number(criteria.max_importance),
        "tags": sorted(criteria.tags),
        "projects": sorted(criteria.projects),
        "hierarchy_levels": sorted(criteria.hierarchy_levels),
        "keep_latest": criteria.keep_latest,
    }

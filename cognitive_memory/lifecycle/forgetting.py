"""Forgetting without loss: forget and prune move memories to the trash, restore brings them back,
and the trash is purged after ``COGNITIVE_MEMORY_TRASH_DAYS``.

Each move is one SQLite transaction (the memory, its lexical entry, links and versions go together,
and the vector deletion is queued in the outbox), then the vector index is told; a restore is the
same in reverse.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from cognitive_memory.core.memory import LOADED_TYPES
from cognitive_memory.core.pruning import (
    DAY_SECONDS,
    MAX_PRUNE,
    TOKEN_SECONDS,
    PruneCandidate,
    PruneCriteria,
    check_token,
    make_token,
)
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.storage.trash import Restored
from cognitive_memory.system import CognitiveSystem

__all__ = ["PrunePlan", "plan_prune", "prune", "purge", "purge_expired", "restore", "trash"]


@dataclass(frozen=True, slots=True)
class PrunePlan:
    """What a prune would move to the trash (oldest first), how many match in all (more than
    listed when over MAX_PRUNE), and the token that confirms exactly this set."""

    candidates: list[PruneCandidate]
    matching: int
    confirm: str
    expires_at: float


def trash(system: CognitiveSystem, ids: Sequence[str], reason: str, session_id: str | None) -> list[str]:
    """Move memories to the trash and out of the vector index; returns the ids that existed."""
    moved = system.records.trash.move(list(dict.fromkeys(ids)), reason, session_id)
    if moved:
        system.replication.unindex(moved)
    return moved


def restore(system: CognitiveSystem, ids: Sequence[str], entries: Sequence[int] = ()) -> Restored:
    """Bring trashed memories back whole and index them again: the ``entries`` named, and the
    newest entry of each of ``ids`` (see ``storage.trash_restore.restore``)."""
    restored = system.records.trash.restore(list(dict.fromkeys(ids)), list(dict.fromkeys(entries)))
    if restored.restored:
        system.replication.index(
            system.records.memories.get([memory_id for _, memory_id in restored.restored])
        )
    return restored


def purge(system: CognitiveSystem, before: float | None) -> int:
    """Delete for good what was trashed before ``before`` (seconds since the epoch; all when
    None); returns how many."""
    return system.records.trash.purge(before)


def purge_expired(system: CognitiveSystem, days: float, now: float | None = None) -> int:
    """Delete for good what has been in the trash longer than ``days``; returns how many."""
    return purge(system, (now if now is not None else time.time()) - days * DAY_SECONDS)


def plan_prune(system: CognitiveSystem, criteria: PruneCriteria, now: float | None = None) -> PrunePlan:
    """The dry run: what ``criteria`` would move to the trash, and a token for that exact set."""
    at = now if now is not None else time.time()
    found, matching, secret = system.records.trash.prune_plan(criteria.check(), at, LOADED_TYPES, MAX_PRUNE)
    expires = int(at) + TOKEN_SECONDS
    return PrunePlan(found, matching, make_token(secret, criteria, found, expires), float(expires))


def prune(
    system: CognitiveSystem, criteria: PruneCriteria, confirm: str | None, session_id: str | None
) -> list[str]:
    """Move what ``criteria`` match to the trash, if ``confirm`` is the unused token of a dry run
    with the same criteria that listed exactly these memories, as they are now, less than
    TOKEN_SECONDS ago; returns the ids moved. The token is used up by the prune."""
    if not confirm:
        raise InvalidInputError(
            "A real prune needs the `confirm` token of a dry run: run it with dry_run true first, "
            "check the list, then pass its token with dry_run false.",
            code="confirm_required",
        )

    def confirmed(secret: str, found: Sequence[PruneCandidate], now: float, used: Collection[str]) -> str:
        return check_token(secret, confirm, criteria, found, now, used)

    moved = system.records.trash.prune(criteria.check(), LOADED_TYPES, MAX_PRUNE, confirmed, session_id)
    if moved:
        system.replication.unindex(moved)
    return moved

"""What a recall, a listing or an overview may be limited to: conditions on the fields the vector
index keeps beside each memory (its payload), which the store of record reads too."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["SESSION_FIELD", "VectorFilter"]

# The payload field of a memory's session; indexes made before it lack it (``has_sessions``).
SESSION_FIELD = "session_id"


@dataclass(frozen=True, slots=True)
class VectorFilter:
    """Conditions on the payload: each non-empty field must match one of its values, and
    ``created_at`` (seconds since the epoch) must lie in [created_after, created_before).
    ``sessions`` (the session that stored a memory) is the payload's ``session_id``; an index made
    before it was there (``VectorStore.has_sessions`` False) is given the ids of the session's
    memories instead, as SQLite lists them (``ids``: the only points it may return, none when
    empty; None: any; ``Memories.index_filter``). ``metadata``, the caller's fields as (name,
    kind, value) (``core/metadata.check_fields_filter``), are not in the payload: they always go
    by ids, and ``matches`` leaves them to those ids."""

    hierarchy_levels: tuple[int, ...] = ()
    memory_types: tuple[str, ...] = ()
    loader_types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    created_after: float | None = None
    created_before: float | None = None
    sessions: tuple[str, ...] = ()
    ids: tuple[str, ...] | None = None
    metadata: tuple[tuple[str, str, Any], ...] = ()

    def conditions(self) -> dict[str, tuple[Any, ...]]:
        """Field name to accepted values, for the non-empty fields."""
        pairs = {
            "hierarchy_level": self.hierarchy_levels,
            "memory_type": self.memory_types,
            "loader_type": self.loader_types,
            "tags": self.tags,
            "project": self.projects,
            SESSION_FIELD: self.sessions,
        }
        return {name: values for name, values in pairs.items() if values}

    @property
    def has_range(self) -> bool:
        return self.created_after is not None or self.created_before is not None

    def is_empty(self) -> bool:
        listed = self.sessions or self.metadata or self.ids is not None
        return not self.conditions() and not self.has_range and not listed

    def admits(self, point_id: str) -> bool:
        """True when ``ids`` leaves the point with this id in (any, when ``ids`` is None)."""
        return self.ids is None or point_id in self.ids

    def matches(self, payload: Mapping[str, Any]) -> bool:
        for name, values in self.conditions().items():
            held = payload.get(name)
            held_values = held if isinstance(held, list) else [held]
            if not any(value in values for value in held_values):
                return False
        created = payload.get("created_at")
        if self.created_after is not None and (created is None or created < self.created_after):
            return False
        return not (self.created_before is not None and (created is None or created >= self.created_before))

    def failing(self, payload: Mapping[str, Any]) -> tuple[str, ...]:
        """The conditions ``payload`` fails, by their payload names (``conditions``' keys) or
        bounds (``created_after``, ``created_before``); empty when it matches (recall's
        ``explain``)."""
        failed = []
        for name, values in self.conditions().items():
            held = payload.get(name)
            if not any(value in values for value in (held if isinstance(held, list) else [held])):
                failed.append(name)
        created = payload.get("created_at")
        early = self.created_after is not None and (created is None or created < self.created_after)
        late = self.created_before is not None and (created is None or created >= self.created_before)
        failed += ["created_after"] if early else []
        failed += ["created_before"] if late else []
        return tuple(failed)

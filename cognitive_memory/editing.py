"""Changing a memory in place: its id, access history and links stay, its previous state is kept
as a version, and a new text is embedded and indexed again."""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable
from datetime import datetime

from cognitive_memory.core.memory import CognitiveMemory, Vector
from cognitive_memory.core.records import EDITABLE_FIELDS, MemoryEdit, apply_edit
from cognitive_memory.core.store import StoreOfRecord
from cognitive_memory.encoding.base import Encoder
from cognitive_memory.errors import EditConflictError, InvalidInputError, NotFoundError
from cognitive_memory.linking import unknown
from cognitive_memory.outcomes import UpdateOutcome
from cognitive_memory.replicas.index_replication import IndexReplication

__all__ = ["UPDATE_ATTEMPTS", "Edits"]

# An update without an expected revision that meets another's write is applied again over it,
# up to this many times in all (each read, apply and compare-and-set is short: the text is
# embedded once), after a random pause of up to CONFLICT_PAUSE seconds times the attempt's number
# (many writers under one key, as a team's clients storing under a shared key, take turns).
UPDATE_ATTEMPTS = 8
CONFLICT_PAUSE = 0.005


class Edits:
    """Updates of memories; built by ``CognitiveSystem`` over its store, encoder and index."""

    def __init__(
        self,
        records: StoreOfRecord,
        encoder: Encoder,
        replication: IndexReplication,
        clock: Callable[[], datetime],
    ) -> None:
        self._records = records
        self._encoder = encoder
        self._replication = replication
        self._clock = clock

    def update(
        self,
        memory_id: str,
        edit: MemoryEdit,
        *,
        session_id: str | None = None,
        expected_revision: str | None = None,
    ) -> UpdateOutcome:
        """Change a memory in place: its id, access history and links stay; its previous state is
        kept as a version. A new text is embedded again and re-indexed (words and vector) in the
        same crash-safe way as a store.

        With ``expected_revision`` (the memory's ``revision`` when the caller read it) the update
        is refused with ``EditConflictError`` if the memory changed since, up to the write itself.
        Without it, an update that races another is applied again over what that one wrote, so
        neither undoes the other."""
        embedded: dict[str, Vector] = {}  # a text embedded once, whatever the attempts
        attempt = 1
        while True:
            try:
                return self._update_once(memory_id, edit, session_id, expected_revision, embedded)
            except EditConflictError:
                if expected_revision is not None or attempt >= UPDATE_ATTEMPTS:
                    raise
                attempt += 1
                time.sleep(random.uniform(0, CONFLICT_PAUSE * attempt))  # let the other write land

    def _update_once(
        self,
        memory_id: str,
        edit: MemoryEdit,
        session_id: str | None,
        expected_revision: str | None,
        embedded: dict[str, Vector],
    ) -> UpdateOutcome:
        previous, memory, changed = self.plan(memory_id, edit, expected_revision)
        if not changed:
            return UpdateOutcome(previous, ())
        if "content" in changed:
            if memory.content not in embedded:
                embedded[memory.content] = self._encoder.encode([memory.content])[0]
            memory = dataclasses.replace(memory, cognitive_embedding=embedded[memory.content])
        version = self._records.memories.rewrite(memory, previous, session_id)
        return UpdateOutcome(memory, changed, version, queued=not self._replication.index([memory]))

    def change_key(self, memory: CognitiveMemory, key: str | None) -> str | None:
        """Give ``memory`` ``key`` in place of its own (None: no key) and write its words in the
        index again (a key's words are the memory's: ``terms.keyed_text``); returns the id of the
        memory of its project that holds ``key`` already (nothing changed then), else None."""
        holder = self._records.memories.change_key(memory.id, key)
        if holder is None:
            self._replication.index([dataclasses.replace(memory, key=key)])
        return holder

    def plan(
        self, memory_id: str, edit: MemoryEdit, expected_revision: str | None = None
    ) -> tuple[CognitiveMemory, CognitiveMemory, tuple[str, ...]]:
        """What ``update`` would make of the memory, checked as it checks it, writing nothing: the
        memory as it is, as it would be (its vector not yet embedded again), and the fields changed."""
        (previous,) = self._records.memories.get([memory_id]) or (None,)
        if previous is None:
            raise NotFoundError(unknown([memory_id]))
        if expected_revision is not None and previous.revision != expected_revision:
            raise EditConflictError(
                f"Memory {memory_id} changed after it was read for this edit; nothing was written. "
                "Read it again and redo the edit over what it holds now."
            )
        memory = apply_edit(previous, edit, self._clock())
        changed = tuple(name for name in EDITABLE_FIELDS if getattr(memory, name) != getattr(previous, name))
        if "content" in changed:
            same = self._records.memories.find_same_text(memory.content, memory.project)
            if same is not None and same.id != memory.id:
                raise InvalidInputError(
                    f"Memory {same.id} of project {memory.project!r} already holds this text: forget one "
                    "of the two instead of making them equal.",
                    code="duplicate",
                )
        return previous, memory, changed

"""A memory's life after it is stored: corrected in place (update_memory, `memory_system update`,
the dashboard's edit form), forgotten to the trash (forget_memories) or deleted for good."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from cognitive_memory.core.memory import DEFAULT_PROJECT, CognitiveMemory, SourceKind
from cognitive_memory.core.records import MemoryEdit
from cognitive_memory.core.validation import MAX_TEXT_CHARS, check_key
from cognitive_memory.errors import InvalidInputError, LoadedMemoryError
from cognitive_memory.lifecycle.forgetting import trash
from cognitive_memory.service.browse import key_holders
from cognitive_memory.service.fields import Importance, KeyChange, Kind, Level, Metadata, SourceInfo, Tags
from cognitive_memory.service.records import MemoryOut, memory_out
from cognitive_memory.system import CognitiveSystem

__all__ = [
    "DeleteResult",
    "ForgetResult",
    "KeptOut",
    "MemoryChanges",
    "NewText",
    "UpdateResult",
    "delete",
    "forget",
    "format_forget",
    "format_update",
    "update",
]

NewText = Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]


class MemoryChanges(BaseModel):
    """What update_memory changes; a field left out stays as it is."""

    model_config = ConfigDict(extra="forbid")

    text: Annotated[NewText | None, Field(description="The new text (embedded and indexed again).")] = None
    tags: Annotated[
        Tags | None, Field(description="The new tags: they replace all of the memory's tags.")
    ] = None
    importance_score: Importance | None = None
    hierarchy_level: Level | None = None
    memory_type: Kind | None = None
    source_info: SourceInfo | None = None
    key: KeyChange | None = None
    metadata: Annotated[Metadata | None, Field(description="Replaces all; {} clears.")] = None

    @model_validator(mode="after")
    def _something_changes(self) -> MemoryChanges:
        if all(getattr(self, name) is None for name in type(self).model_fields):
            raise ValueError(
                "give at least one of text, tags, importance_score, hierarchy_level, memory_type, "
                "source_info, key, metadata"
            )
        return self


class UpdateResult(BaseModel):
    success: bool = True
    memory_id: str
    changed: list[str] = Field(description="The fields that changed (empty: nothing did, no version kept).")
    version: int | None = Field(default=None, description="The number the previous state was kept as.")
    reembedded: bool = Field(description="The text changed: it was embedded and indexed again.")
    queued: bool = Field(description="True when the new vector waits in the outbox for the index.")
    memory: MemoryOut
    message: str


class KeptOut(BaseModel):
    id: str
    reason: str


class ForgetResult(BaseModel):
    success: bool = True
    forgotten: list[str]
    missing: list[str] = Field(description="Ids and keys that name no memory (never stored, or forgotten).")
    kept: list[KeptOut]
    message: str


class DeleteResult(BaseModel):
    success: bool = True
    deleted: list[str]
    missing: list[str]


def _is_loaded(memory: CognitiveMemory | None) -> bool:
    """Loaded from a markdown file or a git history: their source, not forget, changes them."""
    return memory is not None and memory.source.is_loaded


def _loaded_reason(memory: CognitiveMemory) -> str:
    if memory.source is SourceKind.MARKDOWN:
        path = memory.origin or "its file"
        return (
            f"loaded from {path}: edit the file and load it again, or run `memory_system remove-file {path}`"
        )
    repository = memory.metadata.get("repository_path", "its repository")
    return f"a pattern of {repository}'s history: `memory_system git-load` keeps it in step with the history"


def update(
    system: CognitiveSystem,
    memory_id: str,
    changes: MemoryChanges,
    *,
    session_id: str,
    expected_revision: str | None,
) -> UpdateResult:
    """Change a memory in place (id, access history and links stay; the previous state becomes a
    version). Loaded memories are refused with the way to change them: their file. With
    ``expected_revision`` a memory changed since is refused with ``EditConflictError``."""
    (found,) = system.browsing.memories([memory_id]) or (None,)
    if found is not None and _is_loaded(found):
        raise LoadedMemoryError(f"Memory {memory_id} is {_loaded_reason(found)}.")
    new_key = changes.key or None  # '' removes the key
    if found is not None and new_key is not None:
        _check_key_free(system, found, new_key)
    edit = MemoryEdit(
        text=changes.text,
        tags=changes.tags,
        importance_score=changes.importance_score,
        hierarchy_level=changes.hierarchy_level,
        memory_type=changes.memory_type,
        metadata={"source_info": changes.source_info} if changes.source_info is not None else None,
        fields=changes.metadata,
    )
    outcome = system.edits.update(memory_id, edit, session_id=session_id, expected_revision=expected_revision)
    changed = ["text" if name == "content" else name for name in outcome.changed]
    memory = outcome.memory
    if changes.key is not None and new_key != memory.key:
        _change_key(system, memory, new_key)
        memory, changed = dataclasses.replace(memory, key=new_key), [*changed, "key"]
    return UpdateResult(
        memory_id=memory.id,
        changed=changed,
        version=outcome.version,
        reembedded="content" in outcome.changed,
        queued=outcome.queued,
        memory=memory_out(memory, system.now()),
        message=_update_message(changed, outcome.version),
    )


def _check_key_free(system: CognitiveSystem, memory: CognitiveMemory, key: str) -> None:
    """Refuse, before anything is written, a key another memory of the project holds."""
    (holder,) = system.browsing.keyed([key], [memory.project]) or (None,)
    if holder is not None and holder.id != memory.id:
        raise _key_held(key, holder.id, memory.project)


def _change_key(system: CognitiveSystem, memory: CognitiveMemory, key: str | None) -> None:
    holder = system.edits.change_key(memory, key)
    if holder is not None:  # taken between the check and the write
        raise _key_held(key or "", holder, memory.project)


def _key_held(key: str, holder: str, project: str) -> InvalidInputError:
    return InvalidInputError(
        f"The key {key!r} names memory {holder} of project {project!r}: remove it there first "
        "(update_memory with key '') or choose another.",
        code="duplicate",
    )


def _update_message(changed: list[str], version: int | None) -> str:
    if not changed:
        return "Nothing changed: the memory already holds these values"
    if version is None:  # only the key: it names the memory and is not part of a version
        return f"Updated {', '.join(changed)}"
    return f"Updated {', '.join(changed)}; the previous state is version {version}"


def forget(
    system: CognitiveSystem,
    memory_ids: Sequence[str],
    session_id: str,
    keys: Sequence[str] = (),
    project: str = DEFAULT_PROJECT,
) -> ForgetResult:
    """Move memories stored by hand or by an assistant to the trash: those with these ids, and
    those holding these ``keys`` in ``project`` (else among the global memories), as get_memories
    finds them; ids and keys not found are ``missing``. Loaded memories are kept, with the reason:
    their file or repository is their source, and the next load would disagree."""
    named = list(dict.fromkeys(check_key(key) for key in keys))
    if not memory_ids and not named:
        raise InvalidInputError("Give memory ids or keys: the memories to forget.", code="missing_field")
    holders = key_holders(system, named, project)
    asked = list(dict.fromkeys(memory_ids))
    ids = list(dict.fromkeys([*asked, *holders.values()]))
    found = {memory.id: memory for memory in system.browsing.memories(ids)}
    kept = [KeptOut(id=i, reason=_loaded_reason(found[i])) for i in ids if _is_loaded(found.get(i))]
    held = {k.id for k in kept}
    forgotten = trash(system, [i for i in found if i not in held], "forgotten", session_id)
    missing = [i for i in asked if i not in found] + [key for key in named if key not in holders]
    message = f"Forgot {len(forgotten)} of {len(asked) + len(named)} memories"
    return ForgetResult(forgotten=forgotten, missing=missing, kept=kept, message=message)


def delete(system: CognitiveSystem, memory_ids: Sequence[str]) -> DeleteResult:
    """Forget these memories everywhere (SQLite, lexical index, links, vector index)."""
    deleted = system.delete(memory_ids)
    return DeleteResult(deleted=deleted, missing=[i for i in dict.fromkeys(memory_ids) if i not in deleted])


def format_forget(result: ForgetResult) -> str:
    lines = [f"✓ {result.message}" if result.forgotten else f"✗ {result.message}"]
    lines += [f"Forgotten: {memory_id}" for memory_id in result.forgotten]
    lines += [f"Not found: {memory_id}" for memory_id in result.missing]
    lines += [f"Kept {kept.id}: {kept.reason}" for kept in result.kept]
    if result.forgotten:
        lines.append(
            "In the trash: restore_memories (MCP) or `memory_system trash restore ID` brings a memory back"
        )
    return "\n".join(lines)


def format_update(result: UpdateResult) -> str:
    mark = "✓" if result.changed else "="
    lines = [f"{mark} {result.message}", "", f"Memory ID: {result.memory_id}"]
    if result.reembedded:
        lines.append("The new text was embedded and indexed again" + (" (queued)." if result.queued else "."))
    return "\n".join(lines)

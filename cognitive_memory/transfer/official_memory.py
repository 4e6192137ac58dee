"""The knowledge graph of the official MCP ``memory`` server (its ``memory.jsonl``) as memories.

Each entity becomes one L0 semantic memory: ``<name> (<entityType>)`` followed by its observations,
one per line. One memory per entity (rather than one per observation) because the official
server's observations are fragments about their entity ("Speaks Spanish") that say nothing without
its name: recall must find the entity with what is known about it. Its id is ``uuid5`` of the
entity name, so importing the same file again finds every entity in place (unchanged), and a file
whose entity gained observations updates that memory, keeping the old text as a version.

Relations become links; ``relationType`` (free text there) maps to the nearest of our relations,
and the original is kept in the link's note. Each memory and link is checked by the rules of
``store_memory`` and ``link_memories`` (text, tags, metadata, note), as every import is.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cognitive_memory.core.links import check_note
from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, MemoryType
from cognitive_memory.core.validation import check_metadata, check_tags, check_text
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.storage.transfer import LinkRow

__all__ = [
    "FORMAT",
    "EntityLine",
    "RelationLine",
    "entity_id",
    "entity_memory",
    "relation_for",
    "relation_link",
]

FORMAT = "official-memory"
# uuid5 namespace of entity ids (fixed forever: changing it would duplicate every imported entity).
NAMESPACE = uuid.UUID("6f1c3d2e-8b4a-5c7d-9e0f-a1b2c3d4e5f6")
TAGS = ("imported", "official-memory")

# Words of a relationType -> our relation of the same direction; the first match wins, else relates_to.
_RULES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("supersede", "replaces", "obsoletes"), "supersedes"),
    (("contradict", "conflict", "disagree"), "contradicts"),
    (("caused_by", "because", "due_to", "result_of", "results_from"), "caused_by"),
    (("example", "instance_of", "is_a", "kind_of", "type_of"), "example_of"),
    (("part_of", "member_of", "belongs", "component_of", "works_at", "works_for", "located_in"), "part_of"),
    (("depends", "requires", "relies_on", "needs"), "depends_on"),
    (("similar", "same_as", "resembles", "alike"), "similar"),
)


class EntityLine(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    type: Literal["entity"]
    name: str = Field(min_length=1)
    entity_type: str = Field(alias="entityType", min_length=1)
    observations: list[str] = Field(default_factory=list)


class RelationLine(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    type: Literal["relation"]
    source: str = Field(alias="from", min_length=1)
    target: str = Field(alias="to", min_length=1)
    relation_type: str = Field(alias="relationType", min_length=1)


def entity_id(name: str) -> str:
    """The stable id of the memory of the entity ``name``."""
    return str(uuid.uuid5(NAMESPACE, name))


def entity_memory(entity: EntityLine, project: str, now: datetime) -> CognitiveMemory:
    """The memory of one entity (no embedding yet: the importer encodes it); InvalidInputError
    says everything about it that ``store_memory`` would refuse."""
    lines = [f"{entity.name} ({entity.entity_type})", *(f"- {text}" for text in entity.observations)]
    content = "\n".join(lines)
    tags: tuple[str, ...] = (*TAGS, f"entity:{entity.entity_type}")
    metadata = {"imported_from": FORMAT, "entity_name": entity.name, "entity_type": entity.entity_type}
    _all_of(
        lambda: check_text(content, field="text (name, entityType and observations)"),
        lambda: check_tags(tags),
        lambda: check_metadata(metadata),
    )
    return CognitiveMemory(
        id=entity_id(entity.name),
        content=content,
        hierarchy_level=HierarchyLevel.CONCEPT,
        memory_type=MemoryType.SEMANTIC,
        created_date=now,
        timestamp=now,
        tags=tags,
        metadata=metadata,
        project=project,
    )


def _all_of(*checks: Callable[[], Any]) -> None:
    """Run every check; raise one InvalidInputError with all their messages."""
    messages = []
    for check in checks:
        try:
            check()
        except InvalidInputError as exc:
            messages.append(exc.message.rstrip("."))
    if messages:
        raise InvalidInputError("; ".join(messages))


def relation_for(relation_type: str) -> str:
    """The nearest of our relations to a free-text ``relationType``."""
    folded = relation_type.casefold().replace(" ", "_").replace("-", "_")
    for words, relation in _RULES:
        if any(word in folded for word in words):
            return relation
    return "relates_to"


def relation_link(relation: RelationLine, now: datetime) -> LinkRow:
    """The link of one relation, from the source entity's memory to the target's (InvalidInputError:
    its note, the relation's words, is longer than a link's note can be)."""
    note = check_note(f"{relation.source} {relation.relation_type} {relation.target}")
    return LinkRow(
        entity_id(relation.source),
        entity_id(relation.target),
        relation_for(relation.relation_type),
        note,
        now.timestamp(),
    )

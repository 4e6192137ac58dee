"""The lean schemas: input schemas inlined and without titles, bounds kept; output schemas one level
deep that accept every answer pydantic's schemas accept."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jsonschema.validators import validator_for
from pydantic import BaseModel
from referencing import Registry

from cognitive_memory.service import (
    GetResult,
    LessonResult,
    ListResult,
    RecallFilters,
    RecallResult,
    StatusResult,
    StoreContext,
    StoreResult,
)
from interfaces.tool_schemas import input_schema, output_schema

SCORE = dict.fromkeys(
    (
        "similarity",
        "semantic",
        "lexical",
        "relevance",
        "activation",
        "importance",
        "recency",
        "strength",
        "speaker",
    ),
    0.5,
) | {"lesson_boost": 1.0, "total": 0.9}
MEMORY: dict[str, Any] = {
    "id": "m1",
    "content": "The login page broke",
    "hierarchy_level": 2,
    "memory_type": "episodic",
    "rank": 1,
    "similarity_score": 0.8,
    "score": SCORE,
    "strength": 1.0,
    "importance_score": 0.5,
    "source_info": "stored",
    "created_date": "2026-01-01T00:00:00Z",
    "last_accessed": None,
    "access_count": 0,
    "tags": ["web"],
    "project": "default",
    "metadata": {"any": ["thing"]},
}
BRIDGE = {
    **MEMORY,
    "bridge_score": 0.6,
    "novelty_score": 0.7,
    "connection_potential": 0.5,
    "explanation": "linked",
}
RECALL = {
    "query": "login",
    "total_results": 3,
    "memories": {
        "core": [MEMORY],
        "peripheral": [{**MEMORY, "score": None, "rank": None}],
        "bridge": [BRIDGE],
    },
}
BRIEF = {
    "id": "m1",
    "content": "The login page broke",
    "truncated": True,
    "level": 2,
    "type": "episodic",
    "score": 0.9,
    "reason": "meaning, words (50%)",
    "source": "💭 Manual Entry",
    "date": "2026-01-01",
    "tags": ["web"],
    "project": "default",
}
BRIEF_RECALL = {
    "query": "login",
    "detail": "brief",
    "total_results": 2,
    "memories": {"core": [BRIEF], "bridge": [{**BRIEF, "reason": "bridge: close to m1"}]},
    "message": "1 memories were cut",
}


def _mutated(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    document = copy.deepcopy(RECALL)
    node: Any = document
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return document


_DELETE = object()
CASES = [
    RECALL,
    _mutated(("memories", "core", 0, "score"), None),
    _mutated(("memories", "core", 0, "score"), "high"),
    _mutated(("memories", "core", 0, "score", "total"), None),
    _mutated(("memories", "core", 0, "rank"), 1.5),
    _mutated(("memories", "core", 0, "content"), _DELETE),
    _mutated(("memories", "core", 0, "tags"), [1]),
    _mutated(("memories", "bridge", 0, "bridge_score"), _DELETE),
    _mutated(("memories", "bridge", 0, "connected_to"), None),
    _mutated(("memories", "bridge", 0, "connected_to"), 3),
    _mutated(("memories", "peripheral"), None),
    _mutated(("degraded",), "no"),
    _mutated(("query",), _DELETE),
    BRIEF_RECALL,
    {**BRIEF_RECALL, "memories": {"core": [{**BRIEF, "truncated": "yes"}]}},
    {**BRIEF_RECALL, "memories": {"core": [{**BRIEF, "tags": None}]}},
    {**BRIEF_RECALL, "memories": {"core": [{k: v for k, v in BRIEF.items() if k != "reason"}]}},
]


def _valid(schema: dict[str, Any], document: Any) -> bool:
    return validator_for(schema)(schema, registry=Registry()).is_valid(document)


def _keys(node: Any) -> set[str]:
    """Every keyword used anywhere in a schema (property names included)."""
    if isinstance(node, list):
        return {key for item in node for key in _keys(item)}
    if not isinstance(node, dict):
        return set()
    return set(node) | {key for value in node.values() for key in _keys(value)}


class _Arguments(BaseModel):
    text: str
    context: StoreContext | None = None
    filters: RecallFilters | None = None
    title: str | None = None


def test_an_input_schema_is_inlined_without_titles_and_keeps_its_bounds() -> None:
    lean = input_schema(_Arguments.model_json_schema())
    assert {"$ref", "$defs"}.isdisjoint(_keys(lean))
    assert "title" in lean["properties"]  # an argument named title is not a title
    assert all("title" not in field for field in lean["properties"].values())
    context = lean["properties"]["context"]
    assert context["properties"]["importance_score"] == {
        "default": 0.5,
        "maximum": 1.0,
        "minimum": 0.0,
        "type": "number",
    }
    assert context["additionalProperties"] is False
    assert lean["required"] == ["text"]


def test_an_optional_argument_is_published_as_its_type_without_null() -> None:
    lean = input_schema(_Arguments.model_json_schema())
    assert lean["properties"]["title"] == {"type": "string"}
    level = lean["properties"]["context"]["properties"]["hierarchy_level"]
    assert level == {
        "description": "0 concept, 1 context, 2 episode.",
        "maximum": 2,
        "minimum": 0,
        "type": "integer",
    }
    assert _valid(lean, {"text": "x", "context": {"hierarchy_level": 2}})
    assert not _valid(lean, {"text": "x", "context": {"hierarchy_level": 3}})


def test_a_recursive_reference_is_left_as_it_was() -> None:
    schema = {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}},
            }
        },
        "properties": {"root": {"$ref": "#/$defs/Node"}},
    }
    assert input_schema(schema) == schema


@pytest.mark.parametrize(
    "model", [RecallResult, StoreResult, LessonResult, StatusResult, GetResult, ListResult]
)
def test_an_output_schema_types_the_answer_one_level_deep(model: type[BaseModel]) -> None:
    full = model.model_json_schema()
    lean = output_schema(full)
    assert set(lean["properties"]) == set(full["properties"])
    assert lean.get("required", []) == full.get("required", [])
    assert {"$ref", "$defs", "title", "description", "default", "anyOf"}.isdisjoint(_keys(lean["properties"]))
    nested = [
        field for field in lean["properties"].values() if field.get("type") in ("object", ["object", "null"])
    ]
    assert all(set(field) == {"type"} for field in nested)  # records are open objects


def test_an_enum_definition_stays_an_enum() -> None:
    schema = {
        "$defs": {"Mode": {"enum": ["a", "b"], "type": "string", "title": "Mode"}},
        "properties": {"mode": {"$ref": "#/$defs/Mode"}},
        "required": ["mode"],
    }
    assert output_schema(schema)["properties"]["mode"] == {"enum": ["a", "b"], "type": "string"}


@pytest.mark.parametrize("document", CASES)
def test_the_lean_recall_schema_accepts_every_answer_pydantic_s_accepts(document: dict[str, Any]) -> None:
    schema = RecallResult.model_json_schema()
    if _valid(schema, document):
        assert _valid(output_schema(schema), document)


@pytest.mark.parametrize(
    "document",
    [
        _mutated(("query",), _DELETE),
        _mutated(("degraded",), "no"),
        _mutated(("total_results",), "three"),
        _mutated(("memories",), []),
        _mutated(("message",), 5),
    ],
)
def test_the_lean_recall_schema_still_refuses_a_wrong_answer_field(document: dict[str, Any]) -> None:
    assert not _valid(output_schema(RecallResult.model_json_schema()), document)


def test_the_cases_include_valid_and_invalid_documents() -> None:
    schema = RecallResult.model_json_schema()
    verdicts = {_valid(schema, document) for document in CASES}
    assert verdicts == {True, False}

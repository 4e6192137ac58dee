"""Inlined output schemas accept exactly what pydantic's schemas accept."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jsonschema.validators import validator_for
from referencing import Registry

from cognitive_memory.service import LessonResult, RecallResult, StatusResult, StoreResult
from interfaces.schema_inline import inline_schema

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


def _unions(node: Any) -> list[list[Any]]:
    """Every anyOf's options anywhere in a schema."""
    if isinstance(node, list):
        return [union for item in node for union in _unions(item)]
    if not isinstance(node, dict):
        return []
    own = [node["anyOf"]] if "anyOf" in node else []
    return own + [union for value in node.values() for union in _unions(value)]


@pytest.mark.parametrize("model", [RecallResult, StoreResult, LessonResult, StatusResult])
def test_inlined_schemas_have_no_references_or_nullable_unions(model: Any) -> None:
    inlined = inline_schema(model.model_json_schema())
    text = json.dumps(inlined)
    assert "$ref" not in text
    assert "$defs" not in text
    # The one union left is recall's memory shape (brief or full), never a nullable one.
    unions = _unions(inlined)
    assert all({"type": "null"} not in union for union in unions)
    assert len(unions) == (3 if model is RecallResult else 0)


@pytest.mark.parametrize("document", CASES)
def test_the_inlined_recall_schema_accepts_what_pydantic_s_accepts(document: dict[str, Any]) -> None:
    schema = RecallResult.model_json_schema()
    assert _valid(inline_schema(schema), document) == _valid(schema, document)


def test_the_cases_include_valid_and_invalid_documents() -> None:
    schema = RecallResult.model_json_schema()
    verdicts = {_valid(schema, document) for document in CASES}
    assert verdicts == {True, False}


def test_a_recursive_reference_is_left_as_it_was() -> None:
    schema = {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}},
            }
        },
        "$ref": "#/$defs/Node",
    }
    assert inline_schema(schema) == schema


def test_a_nullable_enum_keeps_accepting_null() -> None:
    schema = {"properties": {"kind": {"anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}]}}}
    inlined = inline_schema(schema)
    assert _valid(inlined, {"kind": None})
    assert not _valid(inlined, {"kind": "c"})

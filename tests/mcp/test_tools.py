"""The tools through the SDK's in-memory client, with the real model."""

from __future__ import annotations

import pytest
from mcp import Client

from cognitive_memory.system import CognitiveSystem
from interfaces.mcp_prompts import REFLECTION_PROMPT
from tests.mcp.tools import TOOL_NAMES, call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


async def test_tools_list_publishes_every_tool_with_schemas(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOL_NAMES
    recall = tools["recall_memories"].input_schema["properties"]
    assert recall["max_results"]["minimum"] == 1
    assert recall["max_results"]["maximum"] == 50
    assert recall["max_results"]["default"] == 10
    assert recall["include_bridges"]["default"] is True
    assert (recall["detail"]["enum"], recall["detail"]["default"]) == (["brief", "full"], "brief")
    assert tools["store_memory"].input_schema["required"] == ["text"]
    lesson = tools["session_lessons"].input_schema["properties"]
    assert lesson["lesson_type"]["enum"] == ["discovery", "pattern", "solution", "warning", "context"]
    assert lesson["importance"]["enum"] == ["low", "medium", "high", "critical"]
    assert all(tool.output_schema for tool in tools.values())
    assert tools["recall_memories"].annotations is not None
    assert tools["recall_memories"].annotations.read_only_hint is True


async def test_store_memory_returns_placement_and_formatted_text(client: Client) -> None:
    result = await client.call_tool(
        "store_memory",
        {
            "text": "Found that React components re-render when object props are rebuilt each render.",
            "context": {"hierarchy_level": 1, "importance_score": 0.8, "tags": ["react", "performance"]},
        },
    )
    body = result.structured_content
    assert body is not None
    assert body["success"] is True
    assert body["hierarchy_level"] == 1
    assert body["memory_type"] == "episodic"
    assert body["importance_score"] == 0.8
    assert body["tags"] == ["react", "performance"]
    assert body["queued"] is False
    text = result.content[0].text  # type: ignore[union-attr]  # first block is TextContent
    assert text.startswith("✓ Experience stored successfully")
    assert f"Memory ID: {body['memory_id']}" in text
    assert "Hierarchy Level: L1 (Context)" in text


async def test_store_memory_infers_level_and_type_when_omitted(client: Client) -> None:
    episode = await call(client, "store_memory", {"text": "Yesterday I debugged the flaky upload test."})
    principle = await call(client, "store_memory", {"text": "Always pin dependency versions in CI."})
    fact = await call(client, "store_memory", {"text": "The billing service runs on PostgreSQL 16."})
    assert (episode["hierarchy_level"], episode["memory_type"]) == (2, "episodic")
    assert (principle["hierarchy_level"], principle["memory_type"]) == (0, "semantic")
    assert (fact["hierarchy_level"], fact["memory_type"]) == (1, "semantic")


async def test_recall_finds_a_memory_by_meaning_with_every_field(client: Client) -> None:
    stored = await call(
        client,
        "store_memory",
        {
            "text": "The nightly backup job failed because the S3 bucket credentials had expired.",
            "context": {"tags": ["ops"], "source_info": "incident review"},
        },
    )
    await call(client, "store_memory", {"text": "Grandma's lasagna needs two hours in the oven."})
    result = await client.call_tool(
        "recall_memories", {"query": "why did the nightly backup job fail?", "detail": "full"}
    )
    body = result.structured_content
    assert body is not None and body["success"] is True
    first = body["memories"]["core"][0]
    assert first["id"] == stored["memory_id"]
    assert first["content"] == "The nightly backup job failed because the S3 bucket credentials had expired."
    assert first["rank"] == 1
    assert 0.3 < first["similarity_score"] <= 1.0
    assert first["score"]["similarity"] == first["similarity_score"]
    assert first["score"]["total"] >= first["similarity_score"]
    assert first["source_info"] == "💭 incident review"
    assert first["tags"] == ["ops"]
    assert first["metadata"] == {"source_info": "incident review"}
    assert first["access_count"] == 0
    assert first["created_date"] == stored["stored_at"]
    assert {"hierarchy_level", "memory_type", "strength"} <= set(first)
    assert "last_accessed" not in first  # never accessed: null, and nulls are left out
    text = result.content[0].text  # type: ignore[union-attr]  # first block is TextContent
    assert "CORE MEMORIES (" in text and "Source: 💭 incident review" in text


async def test_recall_counts_accesses_on_later_recalls(client: Client, real_system: CognitiveSystem) -> None:
    await call(client, "store_memory", {"text": "The staging API rate-limits at 50 requests per minute."})
    await call(client, "recall_memories", {"query": "staging API rate limit"})
    real_system.flush()
    again = await call(client, "recall_memories", {"query": "staging API rate limit", "detail": "full"})
    first = again["memories"]["core"][0]
    assert first["access_count"] == 1
    assert first["last_accessed"] is not None


async def test_recall_orders_core_then_peripheral_and_honours_types(client: Client) -> None:
    for text in (
        "Python packaging: use pyproject.toml with hatchling as the build backend.",
        "Python packaging: pin build requirements so wheels are reproducible.",
        "Python virtual environments isolate each project's dependencies.",
        "The office coffee machine is descaled every Friday.",
    ):
        await call(client, "store_memory", {"text": text})
    everything = await call(
        client,
        "recall_memories",
        {"query": "how to package a Python project", "max_results": 3, "detail": "full"},
    )
    ranked = everything["memories"]["core"] + everything["memories"]["peripheral"]
    assert [m["rank"] for m in ranked] == list(range(1, len(ranked) + 1))
    assert len(ranked) <= 3
    totals = [m["score"]["total"] for m in ranked]
    assert totals == sorted(totals, reverse=True)
    only_peripheral = await call(
        client, "recall_memories", {"query": "how to package a Python project", "types": ["peripheral"]}
    )
    assert only_peripheral["memories"]["core"] == []
    no_bridges = await call(
        client, "recall_memories", {"query": "Python packaging", "include_bridges": False}
    )
    assert no_bridges["memories"]["bridge"] == []


async def test_recall_of_an_empty_store_says_nothing_was_found(client: Client) -> None:
    result = await client.call_tool("recall_memories", {"query": "anything at all"})
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["total_results"] == 0
    message = result.structured_content["message"]
    assert message.startswith("No memory is relevant enough to 'anything at all'")
    assert result.content[0].text == f"📋 {message}"  # type: ignore[union-attr]  # a text block


@pytest.mark.model
async def test_session_lesson_is_stored_tagged_and_recalled_with_its_icon(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    # The description asks the reflection's question in brief; the reflect prompt asks it whole.
    assert "future session that will remember nothing" in (tools["session_lessons"].description or "")
    assert "future version of yourself" in REFLECTION_PROMPT
    lesson = await call(
        client,
        "session_lessons",
        {
            "lesson_content": "When API integration breaks, check the network tab, then server logs.",
            "lesson_type": "pattern",
            "session_context": "payment API integration",
            "importance": "high",
        },
    )
    assert lesson["session_id"] == "session-under-test"
    assert (lesson["lesson_type"], lesson["importance_level"]) == ("pattern", "high")
    assert (lesson["hierarchy_level"], lesson["memory_type"]) == (0, "semantic")
    assert lesson["suggestion"]
    recalled = await call(
        client, "recall_memories", {"query": "debugging a broken API integration", "detail": "full"}
    )
    first = recalled["memories"]["core"][0]
    assert first["id"] == lesson["lesson_id"]
    assert first["source_info"] == "📝 Session Lesson (pattern)"
    assert first["metadata"] == {
        "loader_type": "session_lesson",
        "lesson_type": "pattern",
        "session_id": "session-under-test",
        "importance_level": "high",
        "session_context": "payment API integration",
    }
    assert first["importance_score"] == 0.8
    assert first["score"]["lesson_boost"] == pytest.approx(1.1)


@pytest.mark.model
async def test_memory_status_reports_counts_storage_and_configuration(client: Client) -> None:
    await call(client, "store_memory", {"text": "Always review migrations before deploying."})
    await call(client, "store_memory", {"text": "I fixed the cache bug on 2024-05-01."})
    await call(
        client, "session_lessons", {"lesson_content": "The build needs Node 20.", "lesson_type": "context"}
    )
    result = await client.call_tool("memory_status", {"detailed": True})
    body = result.structured_content
    assert body is not None
    assert body["system_status"] == "healthy"
    assert body["memory_counts"] == {
        "total_memories": 3,
        "level_0_concepts": 1,
        "level_1_contexts": 1,
        "level_2_episodes": 1,
        "episodic_memories": 1,
        "semantic_memories": 2,
        "session_lessons": 1,
        "by_project": {"default": 3},
    }
    storage = body["storage_stats"]
    assert (storage["qdrant_backend"], storage["qdrant_mode"], storage["qdrant_status"]) == (
        "qdrant-edge",
        "embedded",
        "ok",
    )
    assert storage["vector_count"] == 3
    assert storage["storage_size_mb"] > 0
    assert storage["pending_vector_writes"] == 0
    assert body["recent_activity"]["last_storage"] is not None
    config = body["configuration"]
    assert config["embedding_model"] == "all-MiniLM-L6-v2"
    assert config["embedding_dimensions"] == 384
    assert config["session_id"] == "session-under-test"
    text = result.content[0].text  # type: ignore[union-attr]  # first block is TextContent
    assert "📊 COGNITIVE MEMORY SYSTEM STATUS" in text and "Session Lessons: 1" in text


async def test_recall_returns_core_and_peripheral_lists_with_their_scores(client: Client) -> None:
    for text in (
        "Running pytest with xdist spreads the tests across all CPU cores",
        "Marking slow tests lets the quick suite run on every commit",
        "Caching the virtualenv in CI saves two minutes per pipeline",
        "pytest-xdist workers each open their own database connection",
        "Simmer the tomato sauce with garlic and basil",
    ):
        await call(client, "store_memory", {"text": text})
    body = await call(
        client,
        "recall_memories",
        {"query": "run the pytest test suite faster across CPU cores", "max_results": 5, "detail": "full"},
    )
    lists = body["memories"]
    assert lists["core"] and lists["peripheral"]
    for memory in lists["core"] + lists["peripheral"]:
        score = memory["score"]
        assert set(score) == {
            "similarity",
            "semantic",
            "lexical",
            "relevance",
            "activation",
            "speaker",
            "importance",
            "recency",
            "strength",
            "lesson_boost",
            "total",
            "words",
            "evidence",
            "linked",
        }
        assert 0.0 <= score["semantic"] <= 1.0 and 0.0 <= score["lexical"] <= 1.0

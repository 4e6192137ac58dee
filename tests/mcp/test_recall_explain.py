"""recall_memories' ``explain`` through the SDK's in-memory client: why each named memory ranked
where it did (returned, below the cut, below the floor, filtered, in another project, unknown or
forgotten), with its score parts in the shape of a full answer's."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.mcp.test_arguments import error_body
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


async def store(client: Client, text: str, **context: Any) -> str:
    body = await call(client, "store_memory", {"text": text, "context": context})
    return str(body["memory_id"])


async def explained(client: Client, query: str, ids: list[str], **arguments: Any) -> dict[str, Any]:
    body = await call(client, "recall_memories", {"query": query, "explain": ids, **arguments})
    return {item["id"]: item for item in body["explained"]}


async def test_a_returned_memory_is_explained_with_its_rank_and_the_full_answers_score(
    client: Client,
) -> None:
    first = await store(client, "The payments service deploys with the blue-green script.")
    await store(client, "The payments service keeps its secrets in the vault.")

    body = await call(
        client,
        "recall_memories",
        {"query": "payments service deploys blue-green", "detail": "full", "explain": [first]},
    )

    record = next(m for m in body["memories"]["core"] + body["memories"]["peripheral"] if m["id"] == first)
    [item] = body["explained"]
    assert item["reason"] == "returned" and item["rank"] == record["rank"] == 1
    assert item["kind"] == "core"
    assert item["score"] == record["score"]


async def test_a_memory_past_max_results_is_below_rank_with_the_last_returned_score(client: Client) -> None:
    ids = [await store(client, f"Replica {n} of the orders database runs in rack {n}.") for n in range(4)]

    body = await call(
        client,
        "recall_memories",
        {"query": "orders database replica rack", "max_results": 1, "include_bridges": False, "explain": ids},
    )

    returned = body["memories"]["core"] + body["memories"]["peripheral"]
    assert len(returned) == 1
    reasons = {item["id"]: item for item in body["explained"]}
    below = [item for item in reasons.values() if item["reason"] == "below_rank"]
    assert len(below) == 3
    assert sorted(item["rank"] for item in below) == [2, 3, 4]
    for item in below:
        assert item["last_score"] == pytest.approx(returned[0]["score"], abs=1e-3)
        assert item["score"]["total"] <= item["last_score"] + 1e-9
        assert "max_results" in item["why"]


async def test_an_unrelated_memory_is_below_the_floor_with_its_evidence(client: Client) -> None:
    await store(client, "The staging cluster certificate expires in March.")
    unrelated = await store(client, "Grandmother's lemon cake needs three eggs and a cup of sugar.")

    reasons = await explained(client, "staging cluster certificate", [unrelated])

    item = reasons[unrelated]
    assert item["reason"] == "below_floor"
    assert item["needed"] == 0.3
    assert item["score"]["evidence"] < 0.3 and item["score"]["words"] == 0
    assert "under 0.30" in item["why"]


async def test_a_filtered_memory_names_the_filter_that_left_it_out(client: Client) -> None:
    await store(client, "Deploy the payments service with the blue-green script.", tags=["ops"])
    diary = await store(client, "I deployed the payments service yesterday.", tags=["diary"])

    reasons = await explained(client, "deploy the payments service", [diary], filters={"tags": ["ops"]})

    assert reasons[diary]["reason"] == "filtered"
    assert reasons[diary]["filters"] == ["tags"]
    assert reasons[diary]["score"]["similarity"] > 0.3  # scored although the search never saw it


async def test_a_memory_of_another_project_says_which_and_how_to_reach_it(client: Client) -> None:
    elsewhere = await store(client, "Deploy the payments service with the blue-green script.", project="shop")

    reasons = await explained(client, "deploy the payments service", [elsewhere])

    item = reasons[elsewhere]
    assert item["reason"] == "other_project" and item["project"] == "shop"
    assert "filters.projects ['shop']" in item["why"]


async def test_an_unknown_or_forgotten_memory_is_not_found_and_a_forgotten_one_says_trash(
    client: Client,
) -> None:
    forgotten = await store(client, "The old VPN gateway lived in rack 12.")
    await call(client, "forget_memories", {"memory_ids": [forgotten]})
    unknown = "00000000-0000-4000-8000-000000000000"

    reasons = await explained(client, "VPN gateway rack", [forgotten[:8], unknown])

    assert reasons[forgotten[:8]]["reason"] == "not_found" and "trash" in reasons[forgotten[:8]]["why"]
    assert reasons[unknown] == {"id": unknown, "reason": "not_found", "why": "No memory has this id."}


async def test_a_returned_memory_of_a_type_not_asked_for_is_filtered_by_types(client: Client) -> None:
    memory_id = await store(client, "The payments service deploys with the blue-green script.")

    reasons = await explained(client, "payments service blue-green", [memory_id], types=["bridge"])

    assert reasons[memory_id]["reason"] == "filtered" and reasons[memory_id]["filters"] == ["types"]


async def test_explain_changes_nothing_of_the_answer_and_is_absent_unless_asked(client: Client) -> None:
    ids = [await store(client, f"Replica {n} of the orders database runs in rack {n}.") for n in range(6)]
    asked = {"query": "orders database replica", "max_results": 3, "detail": "full"}

    plain = await call(client, "recall_memories", asked)
    explaining = await call(client, "recall_memories", {**asked, "explain": ids})

    def ranking(body: dict[str, Any]) -> list[list[str]]:
        return [[m["id"] for m in found] for found in body["memories"].values()]

    assert "explained" not in plain
    # Recall counts the core memories as used (their strength moves): the ranking stays.
    assert ranking(explaining) == ranking(plain) and explaining["total_results"] == plain["total_results"]
    assert [item["id"] for item in explaining["explained"]] == ids


async def test_explain_names_at_most_ten_memories(client: Client) -> None:
    result = await client.call_tool(
        "recall_memories", {"query": "anything", "explain": [f"id-{n}" for n in range(11)]}
    )

    assert result.is_error
    body = error_body(result)
    assert body["error"] == "out_of_range" and "at most 10 per recall" in body["message"]


async def test_the_text_answer_ends_with_each_explanation(client: Client) -> None:
    unrelated = await store(client, "Grandmother's lemon cake needs three eggs.")

    result = await client.call_tool(
        "recall_memories", {"query": "staging certificate", "explain": [unrelated]}
    )

    text = result.content[0].text  # type: ignore[union-attr]  # the first part is the text
    tail = text.splitlines()[-3:]
    assert tail[0] == "EXPLAINED (1):"
    assert tail[1].startswith(f"- {unrelated}: below_floor, score ")
    assert tail[2].startswith("   Below the relevance floor: no memory reached the evidence 0.50")


CONCURRENCY = (
    "Two threads wrote to the same counter; a mutex around the increment fixed the lost updates.",
    "Holding two locks in different orders deadlocked the worker pool; always take them in id order.",
    "The async handler blocked the event loop with a synchronous file read; moved it to a thread.",
)
UNRELATED = (
    "The CSS grid collapsed on narrow screens until we set minmax on the columns.",
    "Postgres vacuum fell behind on the events table; autovacuum scale factor lowered to 0.02.",
)


@pytest.mark.model
async def test_a_tag_the_query_names_is_evidence_at_the_floor(client: Client) -> None:
    """Issue 45: recall of 'concurrency' filtered by that tag found nothing while list_memories
    found the three memories tagged so: their texts never say 'concurrency' (cosine 0.20-0.37, under
    the 0.5 an answer needs). A tag's words are the memory's words at the floor."""
    tagged = [await store(client, text, tags=["concurrency"]) for text in CONCURRENCY]
    others = [await store(client, text, tags=["misc"]) for text in UNRELATED]
    asked = {"query": "concurrency", "filters": {"tags": ["concurrency"]}, "detail": "full"}

    filtered = await call(client, "recall_memories", {**asked, "explain": tagged})
    unfiltered = await call(client, "recall_memories", {"query": "concurrency", "detail": "full"})
    off_topic = await call(
        client, "recall_memories", {"query": "weather in Paris", "filters": {"tags": ["concurrency"]}}
    )
    listed = await call(client, "list_memories", {"filters": {"tags": ["concurrency"]}})

    def found(body: dict[str, Any]) -> set[str]:
        return {m["id"] for m in body["memories"]["core"] + body["memories"]["peripheral"]}

    assert {m["id"] for m in listed["memories"]} == set(tagged)
    assert found(filtered) == set(tagged)
    assert [item["reason"] for item in filtered["explained"]] == ["returned"] * 3
    assert found(unfiltered) == set(tagged) and not found(unfiltered) & set(others)
    assert off_topic["total_results"] == 0

"""link_memories, unlink_memories and related_memories through the SDK's in-memory client: typed
links, the neighbourhood with paths, supersedes in recall, and hostile input."""

from __future__ import annotations

import itertools
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest
from mcp import Client

from cognitive_memory.core.links import MAX_DEPTH, RELATED_LIMIT, RELATIONS
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.storage.relations import USER_LINK_WEIGHT
from cognitive_memory.system import CognitiveSystem
from interfaces.mcp_server import create_server
from tests.mcp.test_errors import error_body
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


async def store(client: Client, text: str) -> str:
    return str((await call(client, "store_memory", {"text": text}))["memory_id"])


async def refused(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The error body of a call that must fail."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return error_body(result)


def summary(body: dict[str, Any]) -> list[tuple[str, str, str, int, list[str]]]:
    return [(m["id"], m["relation"], m["direction"], m["depth"], m["path"]) for m in body["related"]]


@pytest.fixture
def hash_systems() -> Iterator[list[CognitiveSystem]]:
    """Two systems with the hash encoder on one data directory, as two servers would run."""
    systems = [build_system(Settings(env_file=None), encoder=HashEncoder()) for _ in range(2)]
    yield systems
    for system in systems:
        system.close()


@pytest.fixture
async def hash_clients(hash_systems: list[CognitiveSystem]) -> AsyncIterator[list[Client]]:
    async with (
        Client(create_server(hash_systems[0])) as first,
        Client(create_server(hash_systems[1])) as second,
    ):
        yield [first, second]


async def test_the_tool_names_every_documented_relation(client: Client) -> None:
    (tool,) = [t for t in (await client.list_tools()).tools if t.name == "link_memories"]
    assert tool.description is not None
    assert all(relation in tool.description for relation in RELATIONS)
    assert {"similar", "depends_on", "contradicts", "part_of", "supersedes"} <= set(RELATIONS)


async def test_related_follows_links_both_ways_with_relation_direction_depth_and_path(client: Client) -> None:
    a, b, c, d = [await store(client, f"Fact {name} about the billing pipeline.") for name in "ABCD"]
    linked = await client.call_tool(
        "link_memories", {"from_id": a, "to_id": b, "relation": "relates_to", "note": "same pipeline"}
    )
    await call(client, "link_memories", {"from_id": c, "to_id": b, "relation": "caused_by"})
    await call(client, "link_memories", {"from_id": c, "to_id": d, "relation": "example_of"})

    assert not linked.is_error and linked.structured_content is not None
    assert linked.structured_content["created"] is True
    assert linked.content[0].text == f"✓ Linked: {a} relates_to {b} (weight 0.8)\nNote: same pipeline"  # type: ignore[union-attr]  # the text block
    near = await call(client, "related_memories", {"memory_id": a})
    assert summary(near) == [(b, "relates_to", "outgoing", 1, [a, b])]
    assert near["related"][0]["note"] == "same pipeline"
    assert near["related"][0]["content"] == "Fact B about the billing pipeline."
    far = await call(client, "related_memories", {"memory_id": a, "depth": 3})
    assert summary(far) == [
        (b, "relates_to", "outgoing", 1, [a, b]),
        (c, "caused_by", "incoming", 2, [a, b, c]),
        (d, "example_of", "outgoing", 3, [a, b, c, d]),
    ]
    assert far["truncated"] is False
    only = await call(client, "related_memories", {"memory_id": a, "depth": 3, "relations": ["relates_to"]})
    assert summary(only) == [(b, "relates_to", "outgoing", 1, [a, b])]


async def test_linking_again_changes_nothing(client: Client) -> None:
    a, b = await store(client, "The cache TTL is five minutes."), await store(client, "Caches expire.")
    first = await call(
        client, "link_memories", {"from_id": a, "to_id": b, "relation": "example_of", "note": "x"}
    )
    again = await call(
        client, "link_memories", {"from_id": a, "to_id": b, "relation": "example_of", "note": "y"}
    )

    assert (first["created"], again["created"]) == (True, False)
    assert again["message"] == f"Already linked: {a} example_of {b} (unchanged)"
    (item,) = (await call(client, "related_memories", {"memory_id": b}))["related"]
    assert (item["id"], item["direction"], item["note"]) == (a, "incoming", "x")


async def test_unlink_removes_one_relation_or_all_and_a_missing_link_is_not_an_error(client: Client) -> None:
    a, b = await store(client, "Service A calls service B."), await store(client, "Service B owns the queue.")
    for relation in ("relates_to", "caused_by", "part_of"):
        await call(client, "link_memories", {"from_id": a, "to_id": b, "relation": relation})
    await call(client, "link_memories", {"from_id": b, "to_id": a, "relation": "relates_to"})

    one = await call(client, "unlink_memories", {"from_id": a, "to_id": b, "relation": "caused_by"})
    rest = await call(client, "unlink_memories", {"from_id": a, "to_id": b})
    none = await call(client, "unlink_memories", {"from_id": a, "to_id": b})

    assert one["removed"] == ["caused_by"]
    assert rest["removed"] == ["part_of", "relates_to"]
    assert none["removed"] == [] and "nothing to remove" in none["message"]
    left = await call(client, "related_memories", {"memory_id": a})
    assert summary(left) == [(b, "relates_to", "incoming", 1, [a, b])]


async def test_a_superseding_memory_ranks_above_the_one_it_replaces_which_names_it(client: Client) -> None:
    old = await store(client, "The deploy script lives in scripts/deploy.sh and runs from cron at night.")
    new = await store(client, "Deploys now run from the CI pipeline; the old cron script was retired.")
    query = {
        "query": "where does the deploy script live, scripts/deploy.sh",
        "max_results": 5,
        "detail": "full",
    }
    before = await call(client, "recall_memories", query)
    ranked = [m["id"] for m in before["memories"]["core"] + before["memories"]["peripheral"]]
    assert ranked.index(old) < ranked.index(new)  # the old text matches the query better

    await call(client, "link_memories", {"from_id": new, "to_id": old, "relation": "supersedes"})
    result = await client.call_tool("recall_memories", query)

    assert result.structured_content is not None
    lists = result.structured_content["memories"]
    after = lists["core"] + lists["peripheral"]
    assert [m["id"] for m in after][:2] == [new, old]
    assert [m["rank"] for m in after][:2] == [1, 2]
    assert (after[0]["superseded_by"], after[1]["superseded_by"]) == ([], [new])
    assert f"Superseded by: {new}" in result.content[0].text  # type: ignore[union-attr]  # the text block


async def test_unknown_ids_are_refused_by_name(client: Client) -> None:
    a = await store(client, "The office wifi password changed.")

    link = await refused(
        client, "link_memories", {"from_id": a, "to_id": "no-such-id", "relation": "relates_to"}
    )
    both = await refused(
        client, "link_memories", {"from_id": "gone-1", "to_id": "gone-2", "relation": "part_of"}
    )
    unlink = await refused(client, "unlink_memories", {"from_id": "gone-1", "to_id": a})
    related = await refused(client, "related_memories", {"memory_id": "gone-1"})

    assert link["error"] == both["error"] == unlink["error"] == related["error"] == "not_found"
    assert "'no-such-id'" in link["message"] and a not in link["message"]
    assert "'gone-1', 'gone-2'" in both["message"]


async def test_a_link_to_itself_is_refused(client: Client) -> None:
    a = await store(client, "Tabs, not spaces, in the Makefile.")
    body = await refused(client, "link_memories", {"from_id": a, "to_id": a, "relation": "relates_to"})
    assert body["error"] == "invalid_value"
    assert "cannot be linked to itself" in body["message"]


async def test_a_supersedes_cycle_is_refused_but_other_relations_may_loop(client: Client) -> None:
    v1, v2, v3 = [
        await store(client, f"The API rate limit is {n} requests per second.") for n in (10, 20, 30)
    ]
    await call(client, "link_memories", {"from_id": v2, "to_id": v1, "relation": "supersedes"})
    await call(client, "link_memories", {"from_id": v3, "to_id": v2, "relation": "supersedes"})

    cycle = await refused(client, "link_memories", {"from_id": v1, "to_id": v3, "relation": "supersedes"})
    back = await refused(client, "link_memories", {"from_id": v1, "to_id": v2, "relation": "supersedes"})
    for a, b in ((v1, v2), (v2, v3), (v3, v1)):
        await call(client, "link_memories", {"from_id": a, "to_id": b, "relation": "relates_to"})

    assert cycle["error"] == back["error"] == "supersedes_cycle"
    assert f"({v3} supersedes {v2} supersedes {v1})" in cycle["message"]
    walk = await call(client, "related_memories", {"memory_id": v1, "depth": 3})
    assert sorted(m["id"] for m in walk["related"]) == sorted([v2, v3])


WEIGHED = {"from_id": "a", "to_id": "b", "relation": "part_of"}


@pytest.mark.parametrize(
    ("tool", "arguments", "code"),
    [
        ("link_memories", {"from_id": 1, "to_id": "b", "relation": "relates_to"}, "invalid_type"),
        ("link_memories", {"from_id": "a", "to_id": "b", "relation": "replaces!"}, "invalid_value"),
        ("link_memories", {"from_id": "a", "to_id": "b", "relation": "9lives"}, "invalid_value"),
        ("link_memories", {"from_id": "a", "to_id": "b", "relation": "r"}, "invalid_value"),
        ("link_memories", {"from_id": "a", "to_id": "b", "relation": "r" * 41}, "text_too_long"),
        ("link_memories", {**WEIGHED, "weight": 1.5}, "out_of_range"),
        ("link_memories", {**WEIGHED, "weight": -0.1}, "out_of_range"),
        ("link_memories", {**WEIGHED, "weight": "x"}, "invalid_type"),
        ("link_memories", {**WEIGHED, "weight": "0.5"}, "invalid_type"),
        ("link_memories", {**WEIGHED, "weight": True}, "invalid_type"),
        ("link_memories", {"from_id": "a", "to_id": "b"}, "missing_field"),
        ("link_memories", {"from_id": "", "to_id": "b", "relation": "part_of"}, "empty_text"),
        (
            "link_memories",
            {"from_id": "a", "to_id": "b", "relation": "part_of", "note": "n" * 1001},
            "text_too_long",
        ),
        ("link_memories", {"from_id": "a", "to_id": "b", "relation": ["part_of"]}, "invalid_type"),
        ("unlink_memories", {"from_id": "a", "to_id": "b", "relation": "all!"}, "invalid_value"),
        ("unlink_memories", {"from_id": "a", "to_id": None}, "invalid_type"),
        ("related_memories", {"memory_id": "a", "depth": 0}, "out_of_range"),
        ("related_memories", {"memory_id": "a", "depth": 6}, "out_of_range"),
        ("related_memories", {"memory_id": "a", "depth": "deep"}, "invalid_type"),
        ("related_memories", {"memory_id": "a", "relations": ["bogus!"]}, "invalid_value"),
        ("related_memories", {"memory_id": "a", "relations": "relates_to"}, "invalid_type"),
    ],
)
async def test_wrong_arguments_are_refused_with_a_code(
    client: Client, tool: str, arguments: dict[str, Any], code: str
) -> None:
    body = await refused(client, tool, arguments)
    assert body["error"] == code, body["message"]


async def test_a_documented_relation_or_a_name_of_ones_own_is_linked_folded(client: Client) -> None:
    a, b = (
        await store(client, "The API gateway needs the auth service."),
        await store(client, "Auth service."),
    )
    similar = await call(client, "link_memories", {"from_id": a, "to_id": b, "relation": "similar"})
    depends = await call(client, "link_memories", {"from_id": a, "to_id": b, "relation": "Depends-On"})
    again = await call(client, "link_memories", {"from_id": a, "to_id": b, "relation": "depends on"})
    own = await call(client, "link_memories", {"from_id": b, "to_id": a, "relation": "blocks_release"})
    bad = await refused(client, "link_memories", {"from_id": a, "to_id": b, "relation": "blocks release!"})

    assert (similar["relation"], depends["relation"], own["relation"]) == (
        "similar",
        "depends_on",
        "blocks_release",
    )
    assert (depends["created"], again["created"]) == (True, False)
    assert "a name of your own: 2-40 of a-z, 0-9 and _, starting with a letter" in bad["message"]
    followed = await call(client, "related_memories", {"memory_id": a, "relations": ["Blocks-Release"]})
    assert followed["relations"] == ["blocks_release"]
    assert summary(followed) == [(b, "blocks_release", "incoming", 1, [a, b])]
    removed = await call(client, "unlink_memories", {"from_id": a, "to_id": b, "relation": "DEPENDS_ON"})
    assert removed["removed"] == ["depends_on"]


async def test_a_links_weight_is_its_activation_edge_and_linking_again_with_another_reweighs_it(
    hash_systems: list[CognitiveSystem], hash_clients: list[Client]
) -> None:
    system, (client, other) = hash_systems[0], hash_clients
    a, b = await store(client, "Redis holds the sessions."), await store(other, "Sessions expire in 30 min.")
    link = {"from_id": a, "to_id": b, "relation": "depends_on"}

    first = await call(client, "link_memories", {**link, "weight": 0.3})
    edges = system.records.links.neighbours([a, b])
    same = await call(client, "link_memories", link)
    changed = await call(client, "link_memories", {**link, "weight": 0.6})
    after = system.records.links.neighbours([a, b])
    (item,) = (await call(client, "related_memories", {"memory_id": b}))["related"]
    await call(client, "link_memories", {**link, "weight": 0})

    assert (first["created"], first["weight"]) == (True, 0.3)
    assert edges == {a: [(b, 0.3)], b: [(a, 0.3)]}
    assert (same["created"], same["weight"], same["message"]) == (
        False,
        0.3,
        f"Already linked: {a} depends_on {b} (unchanged)",
    )
    assert (changed["created"], changed["weight"], changed["previous_weight"]) == (False, 0.6, 0.3)
    assert changed["message"] == f"Reweighted: {a} depends_on {b} (weight 0.3 -> 0.6)"
    assert after == {a: [(b, 0.6)], b: [(a, 0.6)]}
    assert item["weight"] == 0.6
    assert system.records.links.neighbours([a, b]) == {}  # weight 0: linked, but lifts nothing


async def test_related_walks_up_to_five_links_and_stops_at_its_bound_saying_so(
    hash_systems: list[CognitiveSystem], hash_clients: list[Client]
) -> None:
    system, client = hash_systems[0], hash_clients[0]
    chain = [await store(client, f"Step {n} of the release checklist.") for n in range(MAX_DEPTH + 2)]
    for near, far in itertools.pairwise(chain):
        await call(client, "link_memories", {"from_id": near, "to_id": far, "relation": "depends_on"})
    hub = chain[MAX_DEPTH]  # its leaves are 5 links from chain[1], 6 from chain[0]
    leaves = [o.memory.id for o in system.store_many([f"leaf {n} of the hub" for n in range(RELATED_LIMIT)])]
    for leaf in leaves:
        system.records.links.link((leaf, hub, "part_of"), None, None)

    five = await call(client, "related_memories", {"memory_id": chain[0], "depth": MAX_DEPTH})
    whole = await call(client, "related_memories", {"memory_id": chain[1], "depth": MAX_DEPTH})

    assert [m["id"] for m in five["related"]] == chain[1 : MAX_DEPTH + 1]
    assert five["related"][-1]["path"] == chain[: MAX_DEPTH + 1]
    assert five["truncated"] is False
    assert len(whole["related"]) == RELATED_LIMIT and whole["truncated"] is True
    assert f"stopped at {RELATED_LIMIT}" in whole["message"]


async def test_forgetting_a_memory_drops_its_links(client: Client) -> None:
    a, b = await store(client, "Staging uses Postgres 15."), await store(client, "Staging runs on one VM.")
    await call(client, "link_memories", {"from_id": a, "to_id": b, "relation": "part_of"})

    await call(client, "forget_memories", {"memory_ids": [b]})

    assert (await call(client, "related_memories", {"memory_id": a}))["related"] == []
    again = await refused(client, "link_memories", {"from_id": a, "to_id": b, "relation": "part_of"})
    assert again["error"] == "not_found"


async def test_two_servers_on_one_data_directory_see_each_others_links_at_once(
    hash_clients: list[Client],
) -> None:
    first, second = hash_clients
    a, b = (
        await store(first, "Kafka retention is seven days."),
        await store(second, "Kafka runs three brokers."),
    )

    await call(first, "link_memories", {"from_id": a, "to_id": b, "relation": "relates_to"})
    seen = await call(second, "related_memories", {"memory_id": b})
    await call(second, "unlink_memories", {"from_id": a, "to_id": b})
    gone = await call(first, "related_memories", {"memory_id": a})

    assert summary(seen) == [(a, "relates_to", "incoming", 1, [b, a])]
    assert gone["related"] == []


async def test_a_link_is_an_activation_edge_in_both_directions(
    hash_systems: list[CognitiveSystem], hash_clients: list[Client]
) -> None:
    system, (client, other) = hash_systems[0], hash_clients
    # Stored by two servers (two sessions), so they are not neighbours in time.
    a, b = await store(client, "Redis holds the sessions."), await store(other, "Sessions expire in 30 min.")
    assert system.records.links.neighbours([a, b]) == {}

    await call(client, "link_memories", {"from_id": a, "to_id": b, "relation": "caused_by"})

    assert system.records.links.neighbours([a, b]) == {a: [(b, USER_LINK_WEIGHT)], b: [(a, USER_LINK_WEIGHT)]}


@pytest.mark.slow
async def test_ten_thousand_links_on_one_memory_stay_bounded_and_fast(
    hash_systems: list[CognitiveSystem], hash_clients: list[Client]
) -> None:
    system, client = hash_systems[0], hash_clients[0]
    hub = await store(client, "The hub memory everything points at.")
    leaves = [outcome.memory.id for outcome in system.store_many([f"leaf note {n}" for n in range(10_000)])]
    with sqlite3.connect(system.records.path) as other_writer:
        other_writer.executemany(
            "INSERT INTO relations (from_id, to_id, relation, created_at) VALUES (?, ?, 'part_of', ?)",
            [(leaf, hub, float(n)) for n, leaf in enumerate(leaves)],
        )
    other_writer.close()

    with anyio.fail_after(30):
        started = time.perf_counter()
        around = await call(client, "related_memories", {"memory_id": hub})
        beyond = await call(client, "related_memories", {"memory_id": leaves[0], "depth": 3})
        recall = await call(client, "recall_memories", {"query": "leaf note 42", "max_results": 10})
        extra = await call(
            client, "link_memories", {"from_id": hub, "to_id": leaves[1], "relation": "relates_to"}
        )
        elapsed = time.perf_counter() - started

    assert len(around["related"]) == RELATED_LIMIT and around["truncated"] is True
    assert [m["id"] for m in around["related"][:2]] == leaves[:2]
    assert summary(beyond)[:2] == [
        (hub, "part_of", "outgoing", 1, [leaves[0], hub]),
        (leaves[1], "part_of", "incoming", 2, [leaves[0], hub, leaves[1]]),
    ]
    assert len(beyond["related"]) == RELATED_LIMIT and beyond["truncated"] is True
    assert recall["total_results"] > 0 and extra["created"] is True
    assert elapsed < 10


async def test_two_servers_on_one_data_directory_see_each_others_updates_at_once(
    hash_clients: list[Client],
) -> None:
    first, second = hash_clients
    memory_id = await store(first, "The cache TTL is five minutes.")

    await call(second, "update_memory", {"memory_id": memory_id, "text": "The cache TTL is ten minutes."})
    seen = await call(first, "get_memories", {"memory_ids": [memory_id], "include_history": True})
    again = await call(first, "store_memory", {"text": "the cache TTL is ten minutes."})

    (memory,) = seen["memories"]
    assert memory["content"] == "The cache TTL is ten minutes."
    assert [version["content"] for version in memory["history"]] == ["The cache TTL is five minutes."]
    assert (again["duplicate"], again["memory_id"]) == (True, memory_id)

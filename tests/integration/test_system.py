"""CognitiveSystem end to end on disk: the store of record (each test on SQLite and on PostgreSQL)
and Qdrant Edge, with the hash or the real encoder."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from cognitive_memory.core.memory import HierarchyLevel, MemoryType, SourceKind
from cognitive_memory.core.records import MemoryEdit
from cognitive_memory.encoding import Encoder, HashEncoder
from cognitive_memory.errors import EditConflictError, IndexMismatchError, InvalidInputError, StorageError
from cognitive_memory.index import VectorFilter, VectorPoint
from cognitive_memory.index.opening import OPEN_AFTER
from cognitive_memory.main import build_system
from cognitive_memory.replicas import FollowedTable
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem

pytestmark = pytest.mark.stores

Build = Callable[..., CognitiveSystem]


class RenamedHashEncoder(HashEncoder):
    """The hash encoder under another model name: stands for a different embedding model."""

    @property
    def name(self) -> str:
        return "another-model"


@pytest.fixture
def build(store_of_record: str) -> Iterator[Build]:
    """Build systems on the test's data directory; every one is closed at the end."""
    opened: list[CognitiveSystem] = []

    def _build(encoder: Encoder | None = None) -> CognitiveSystem:
        system = build_system(Settings(env_file=None), encoder=encoder or HashEncoder())
        opened.append(system)
        return system

    yield _build
    for system in opened:
        system.close()


def _words(text: str) -> set[str]:
    return {word.strip(".,").lower() for word in text.split()}


def test_store_infers_level_and_type_from_the_text(hash_system: CognitiveSystem) -> None:
    episode = hash_system.store("I fixed the flaky login test yesterday").memory
    concept = hash_system.store("Always pin base images").memory
    context = hash_system.store("The billing service talks to Stripe through a queue").memory

    assert (episode.hierarchy_level, episode.memory_type) == (HierarchyLevel.EPISODE, MemoryType.EPISODIC)
    assert (concept.hierarchy_level, concept.memory_type) == (HierarchyLevel.CONCEPT, MemoryType.SEMANTIC)
    assert (context.hierarchy_level, context.memory_type) == (HierarchyLevel.CONTEXT, MemoryType.SEMANTIC)


def test_store_honours_the_caller_s_level_and_type(hash_system: CognitiveSystem) -> None:
    level_only = hash_system.store("I fixed the flaky login test yesterday", hierarchy_level=0).memory
    type_only = hash_system.store("I fixed the flaky login test this morning", memory_type="semantic").memory

    assert (level_only.hierarchy_level, level_only.memory_type) == (
        HierarchyLevel.CONCEPT,
        MemoryType.EPISODIC,
    )
    assert (type_only.hierarchy_level, type_only.memory_type) == (HierarchyLevel.EPISODE, MemoryType.SEMANTIC)


def test_store_commits_the_cleaned_memory_and_indexes_its_vector(hash_system: CognitiveSystem) -> None:
    outcome = hash_system.store(
        "  The deploy script needs the AWS profile set \n",
        importance_score=0.9,
        tags=[" aws ", "deploy", "aws", ""],
        metadata={"project": "infra"},
    )
    hash_system.flush()  # the outbox is cleared by the bookkeeping thread

    assert outcome.queued is False
    assert outcome.memory.content == "The deploy script needs the AWS profile set"
    assert outcome.memory.tags == ("aws", "deploy")
    assert hash_system.records.memories.get([outcome.memory.id]) == [outcome.memory]
    assert hash_system.vectors.count() == 1
    assert hash_system.records.outbox.pending() == []


def test_status_reports_counts_index_and_encoder(hash_system: CognitiveSystem) -> None:
    hash_system.store("Always pin base images")
    hash_system.store("Yesterday the deploy script failed")

    status = hash_system.status()

    assert status.healthy is True
    assert (status.counts.total, status.pending_vector_writes) == (2, 0)
    assert status.counts.by_level == {0: 1, 1: 0, 2: 1}
    assert status.vector_store is not None and status.vector_store.vector_count == 2
    assert (status.encoder_name, status.encoder_ready) == ("hash-384", True)
    assert status.configuration["vector_backend"] == "qdrant-edge"
    assert "last_storage" in status.activity


@pytest.mark.parametrize(
    ("text", "options", "code"),
    [
        pytest.param("", {}, "empty_text", id="empty-text"),
        pytest.param("   ", {}, "empty_text", id="blank-text"),
        pytest.param("x" * 100_001, {}, "text_too_long", id="text-too-long"),
        pytest.param("valid text", {"importance_score": 2}, "out_of_range", id="importance-2"),
        pytest.param("valid text", {"hierarchy_level": 5}, "out_of_range", id="level-5"),
        pytest.param("valid text", {"hierarchy_level": True}, "out_of_range", id="level-bool"),
        pytest.param("valid text", {"memory_type": "x"}, "invalid_value", id="memory-type-x"),
        pytest.param("valid text", {"tags": ["ok", 3]}, "invalid_type", id="tag-not-a-string"),
        pytest.param("valid text", {"metadata": {"ids": {1, 2}}}, "invalid_metadata", id="metadata-set"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_stored(
    hash_system: CognitiveSystem, text: str, options: dict[str, Any], code: str
) -> None:
    hash_system.store("An earlier memory that must stay alone")

    with pytest.raises(InvalidInputError) as caught:
        hash_system.store(text, **options)
    hash_system.flush()

    assert caught.value.code == code
    assert hash_system.records.memories.counts().total == 1
    assert hash_system.vectors.count() == 1
    assert hash_system.records.outbox.pending() == []


def _store_all(system: CognitiveSystem, texts: Sequence[str]) -> dict[str, str]:
    """Store the texts; return id -> text."""
    return {system.store(text).memory.id: text for text in texts}


def test_retrieve_returns_core_then_peripheral_in_rank_order(hash_system: CognitiveSystem) -> None:
    _store_all(
        hash_system,
        [
            "deploy script AWS profile region",
            "deploy script AWS profile",
            "deploy script",
            "AWS profile",
            "deploy notes",
            "tomato sauce with basil",
        ],
    )

    result = hash_system.retrieve("deploy script AWS profile", max_results=10, include_bridges=False)

    ranked = [*result.core, *result.peripheral]
    totals = [r.score.total for r in ranked]
    assert result.core and result.peripheral
    assert result.core[0].memory.content == "deploy script AWS profile"
    assert result.core[0].score.similarity == pytest.approx(1.0, abs=1e-5)
    assert [r.rank for r in ranked] == list(range(1, len(ranked) + 1))
    assert totals == sorted(totals, reverse=True)
    bar = 0.8 * totals[0]
    assert all(r.score.total >= bar for r in result.core)
    assert result.peripheral[0].score.total < bar
    assert "tomato sauce with basil" not in {r.memory.content for r in ranked}


def test_retrieve_returns_at_most_max_results(hash_system: CognitiveSystem) -> None:
    _store_all(hash_system, [f"deploy script step {n}" for n in range(6)])

    result = hash_system.retrieve("deploy script step", max_results=2, include_bridges=False)

    assert len(result.core) + len(result.peripheral) == 2


def test_retrieve_filters_by_payload(hash_system: CognitiveSystem) -> None:
    episode = hash_system.store("Yesterday the deploy script failed on staging").memory
    hash_system.store("The deploy script runs on staging")

    result = hash_system.retrieve(
        "deploy script staging", include_bridges=False, where=VectorFilter(hierarchy_levels=(2,))
    )

    assert [r.memory.id for r in (*result.core, *result.peripheral)] == [episode.id]


@pytest.mark.parametrize(
    ("query", "options", "code"),
    [
        pytest.param("", {}, "empty_text", id="empty-query"),
        pytest.param("x" * 10_001, {}, "text_too_long", id="query-too-long"),
        pytest.param("deploy", {"max_results": 0}, "out_of_range", id="zero-results"),
        pytest.param("deploy", {"max_results": True}, "out_of_range", id="bool-results"),
    ],
)
def test_bad_queries_are_refused(
    hash_system: CognitiveSystem, query: str, options: dict[str, Any], code: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        hash_system.retrieve(query, **options)

    assert caught.value.code == code


def test_retrieval_counts_an_access_once_bookkeeping_is_flushed(hash_system: CognitiveSystem) -> None:
    found = hash_system.store("deploy script AWS profile").memory
    missed = hash_system.store("tomato sauce with basil").memory

    hash_system.retrieve("deploy script AWS profile")
    hash_system.retrieve("deploy script AWS profile")
    hash_system.flush()

    hit, miss = hash_system.records.memories.get([found.id, missed.id])
    assert hit.access_count == 2
    assert hit.last_accessed is not None
    assert hash_system.records.properties.activity()["last_retrieval"] == hit.last_accessed
    assert (miss.access_count, miss.last_accessed) == (0, None)


def test_a_signal_that_finds_the_system_closed_winds_down_quietly(store_of_record: str) -> None:
    # Ctrl-C reaches a stdio server and the client feeding its stdin at once: the server's main
    # thread closes the system at the end of stdin while the signal's thread winds it down.
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    system.retrieve("anything")
    system.close()

    system.wind_down()  # raised "cannot schedule new futures after shutdown"
    system.flush()


def test_a_serving_system_builds_its_tables_after_its_first_recall_not_at_start(
    store_of_record: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Built at start, they took the CPU from the handshake and the model's load; the first recall
    # reads the store either way.
    started: list[tuple[str, float]] = []
    monkeypatch.setattr(
        FollowedTable, "build_in_background", lambda table, delay=0.0: started.append((table.name, delay))
    )
    system = build_system(Settings(env_file=None), encoder=HashEncoder(), follow_changes=True)
    try:
        system.store("deploy script AWS profile")
        assert started == []
        assert {replica.state for replica in system.followed} == {"building"}

        system.retrieve("deploy script")
        system.retrieve("deploy script")

        tables = ("link table", "ranking table", "word counts")
        assert sorted(started) == [(name, OPEN_AFTER) for name in tables]
    finally:
        system.close()


def test_the_model_loads_once_however_often_its_warm_up_is_asked(hash_system: CognitiveSystem) -> None:
    first = hash_system.warm_up_in_background()
    assert hash_system.warm_up_in_background() is first
    first.join()
    assert hash_system.warm_up_in_background() is first


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread priorities: Linux")
def test_uses_are_written_by_a_thread_that_yields_the_cpu_to_recall(hash_system: CognitiveSystem) -> None:
    stored = hash_system.store("deploy script AWS profile").memory
    hash_system.retrieve("deploy script AWS profile")
    hash_system.flush()

    writers = [t for t in threading.enumerate() if t.name.startswith("memory-uses")]
    assert len(writers) == 1 and writers[0].native_id is not None
    assert os.getpriority(os.PRIO_PROCESS, writers[0].native_id) == 19
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) != 19  # the caller's is its own
    others = [t for t in threading.enumerate() if t.name.startswith("memory-bookkeeping")]
    assert all(os.getpriority(os.PRIO_PROCESS, t.native_id or 0) != 19 for t in others)
    assert hash_system.records.memories.get([stored.id])[0].access_count == 1


def test_a_session_lesson_gets_the_configured_boost(build: Build, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_SESSION_LESSON_BOOST", "1.5")
    system = build()
    plain = system.store("Pin the base image digest").memory
    lesson = system.store("Pin the base image digest.", source=SourceKind.SESSION_LESSON).memory

    result = system.retrieve("Pin the base image digest", include_bridges=False)

    by_id = {r.memory.id: r.score for r in (*result.core, *result.peripheral)}
    assert result.core[0].memory.id == lesson.id
    assert by_id[lesson.id].lesson_boost == 1.5
    assert by_id[plain.id].lesson_boost == 1.0
    assert by_id[lesson.id].total - by_id[plain.id].total == pytest.approx(
        0.5 * by_id[lesson.id].similarity, abs=1e-4
    )
    assert system.records.memories.counts().session_lessons == 1


@pytest.mark.parametrize(("setting", "asked"), [("index", "search_with_words"), ("FTS5", "search")])
def test_the_words_setting_chooses_where_recall_searches_the_words(
    build: Build, monkeypatch: pytest.MonkeyPatch, setting: str, asked: str
) -> None:
    monkeypatch.setenv("COGNITIVE_MEMORY_WORDS", setting)
    system = build()
    stored = system.store("The zeppelins drifted over the harbour at dusk").memory
    calls: list[str] = []

    def counted(name: str) -> Callable[..., Any]:
        method = getattr(system.vectors, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return method(*args, **kwargs)

        return call

    for name in ("search", "search_with_words"):
        monkeypatch.setattr(system.vectors, name, counted(name))

    result = system.retrieve("zeppelins over the harbour", include_bridges=False)

    assert calls == [asked]
    assert result.core[0].memory.id == stored.id


def test_a_memory_survives_closing_and_reopening_the_system(build: Build) -> None:
    first = build()
    stored = first.store("The deploy script needs the AWS profile set", tags=["aws"]).memory
    first.close()

    second = build()
    result = second.retrieve("deploy script AWS profile")

    assert result.core[0].memory == stored
    assert second.vectors.count() == 1


def test_a_failed_index_write_is_queued_and_replayed_on_the_next_start(
    build: Build, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = build()

    def refuse(points: Sequence[VectorPoint]) -> None:
        raise StorageError("the index is down")

    monkeypatch.setattr(first.vectors, "upsert", refuse)
    outcome = first.store("The deploy script needs the AWS profile set")

    assert outcome.queued is True
    assert first.records.memories.get([outcome.memory.id]) == [outcome.memory]
    assert first.records.outbox.pending() == [(outcome.memory.id, "upsert")]
    assert first.vectors.count() == 0
    assert first.status().healthy is False
    first.close()

    second = build()
    result = second.retrieve("deploy script AWS profile")
    second.flush()

    assert second.records.outbox.pending() == []
    assert second.vectors.count() == 1
    assert result.core[0].memory.id == outcome.memory.id
    assert second.status().healthy is True


def test_a_store_built_by_another_encoder_is_refused(build: Build) -> None:
    first = build(HashEncoder(384))
    first.store("Vectors of this encoder now live in the store")
    first.close()

    with pytest.raises(IndexMismatchError) as caught:
        build(RenamedHashEncoder(384))

    assert caught.value.code == "index_mismatch"
    assert "hash-384:384" in caught.value.message
    assert "another-model:384" in caught.value.message
    build(HashEncoder(384))  # the refused build released the stores


def test_an_encoder_that_never_stored_anything_does_not_claim_the_store(build: Build) -> None:
    build(RenamedHashEncoder(384)).close()  # e.g. a misconfigured model: nothing was stored

    system = build(HashEncoder(384))
    system.store("The configured encoder stores the first memory")
    system.close()
    with pytest.raises(IndexMismatchError) as caught:
        build(RenamedHashEncoder(384))
    assert "another-model:384" in caught.value.message
    build(HashEncoder(384))  # the refused build released the stores


def test_bridges_are_close_to_the_core_but_far_from_the_query(hash_system: CognitiveSystem) -> None:
    core = hash_system.store("alpha beta gamma delta").memory
    bridge = hash_system.store("gamma delta epsilon zeta").memory
    hash_system.store("omicron sigma upsilon")

    result = hash_system.retrieve("alpha beta", max_results=5)

    assert [r.memory.id for r in (*result.core, *result.peripheral)] == [core.id]
    assert [b.memory.id for b in result.bridges] == [bridge.id]
    found = result.bridges[0]
    assert found.connected_to == core.id
    assert found.novelty_score == pytest.approx(1.0, abs=0.05)
    assert found.connection_potential == pytest.approx(0.5, abs=0.05)
    assert "alpha beta gamma delta" in found.explanation


def test_a_memory_already_ranked_is_never_also_a_bridge(hash_system: CognitiveSystem) -> None:
    core = hash_system.store("alpha beta gamma delta").memory
    peripheral = hash_system.store("alpha gamma delta epsilon zeta eta theta iota").memory
    bridge = hash_system.store("gamma delta epsilon zeta").memory

    result = hash_system.retrieve("alpha beta", max_results=5)

    assert [r.memory.id for r in result.core] == [core.id]
    assert [r.memory.id for r in result.peripheral] == [peripheral.id]
    assert [b.memory.id for b in result.bridges] == [bridge.id]


def test_no_bridges_when_they_are_not_asked_for(hash_system: CognitiveSystem) -> None:
    hash_system.store("alpha beta gamma delta")
    hash_system.store("gamma delta epsilon zeta")

    assert hash_system.retrieve("alpha beta", include_bridges=False).bridges == []


@pytest.mark.model
def test_a_paraphrase_without_shared_words_recalls_the_right_memory(real_system: CognitiveSystem) -> None:
    packaging = "pip install fails because the wheel for numpy cannot be built from source"
    # Cosine 0.56 with no word in common: meaning alone is evidence (the floor's anchor is 0.5).
    query = "python package setup errors out compiling binary distributions"
    ids = _store_all(
        real_system,
        [
            "Simmer the tomato sauce with garlic and basil for twenty minutes",
            packaging,
            "We walked the ridge trail to the summit and camped beside the alpine lake",
        ],
    )

    result = real_system.retrieve(query, include_bridges=False)

    assert _words(query).isdisjoint(_words(packaging))
    first = [*result.core, *result.peripheral][0]
    assert ids[first.memory.id] == packaging
    assert first.rank == 1
    assert len(result.core) + len(result.peripheral) == 1  # the recipe and the hike are not evidence


@pytest.mark.model
def test_the_real_model_finds_a_bridge_through_the_core_memory(real_system: CognitiveSystem) -> None:
    core = real_system.store("Running pytest with xdist spreads the tests across all CPU cores").memory
    bridge = real_system.store("pytest-xdist workers each open their own database connection").memory
    real_system.store("Simmer the tomato sauce with garlic and basil")

    result = real_system.retrieve("How can I make the test suite run faster on many cores?", max_results=1)

    threshold = real_system.retriever.config.bridge_threshold
    assert result.core[0].memory.id == core.id
    assert [b.memory.id for b in result.bridges] == [bridge.id]
    found = result.bridges[0]
    for value in (found.novelty_score, found.connection_potential, found.bridge_score):
        assert 0.0 <= value <= 1.0
    assert found.bridge_score >= threshold == 0.5
    assert found.connected_to == core.id
    assert "Running pytest with xdist" in found.explanation


class MeddlingEncoder(HashEncoder):
    """The hash encoder that, once, runs ``meddle`` before it embeds: another writer's change
    landing between an update's read and its write (a new text is embedded in between)."""

    meddle: Callable[[], object] | None = None

    def encode(self, texts: Sequence[str]) -> Any:
        meddle, self.meddle = self.meddle, None
        if meddle is not None:
            meddle()
        return super().encode(texts)


def test_an_update_racing_another_is_applied_over_it_not_in_place_of_it(build: Build) -> None:
    encoder = MeddlingEncoder()
    system = build(encoder)
    memory_id = system.store("Backups run nightly.", tags=["ops"]).memory.id
    encoder.meddle = lambda: system.edits.update(
        memory_id, MemoryEdit(tags=["ops", "backup"], importance_score=0.9)
    )

    system.edits.update(memory_id, MemoryEdit(text="Backups run hourly."))

    (stored,) = system.records.memories.get([memory_id])
    assert (stored.content, stored.tags, stored.importance_score) == (
        "Backups run hourly.",
        ("ops", "backup"),
        0.9,
    )
    assert [v.version for v in system.records.history.of([memory_id])[memory_id]] == [1, 2]


def test_an_update_with_an_expected_revision_is_refused_once_the_memory_changed(build: Build) -> None:
    encoder = MeddlingEncoder()
    system = build(encoder)
    memory_id = system.store("Backups run nightly.", tags=["ops"]).memory.id
    read = system.records.memories.get([memory_id])[0].revision
    encoder.meddle = lambda: system.edits.update(memory_id, MemoryEdit(tags=["backup"]))

    with pytest.raises(EditConflictError, match="changed"):  # between the read and the write
        system.edits.update(memory_id, MemoryEdit(text="Backups run hourly."), expected_revision=read)
    with pytest.raises(EditConflictError, match="Read it again"):  # before it
        system.edits.update(memory_id, MemoryEdit(importance_score=0.2), expected_revision=read)

    (stored,) = system.records.memories.get([memory_id])
    assert (stored.content, stored.tags, stored.importance_score) == (
        "Backups run nightly.",
        ("backup",),
        0.5,
    )
    now = stored.revision
    assert system.edits.update(memory_id, MemoryEdit(importance_score=0.2), expected_revision=now).changed


def test_the_data_directory_a_first_start_makes_is_closed_to_other_users(
    store_of_record: str, data_dir: Path
) -> None:
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    system.close()
    assert data_dir.stat().st_mode & 0o777 == 0o700


def test_a_key_taken_between_the_check_and_the_commit_updates_the_memory_that_took_it(
    hash_system: CognitiveSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = hash_system.store("Release on Tuesdays.", key="release-day")
    looked_up = hash_system.records.memories.keyed
    misses = iter([[]])  # the first look-up misses it, as if the other store committed just after
    monkeypatch.setattr(
        hash_system.records.memories,
        "keyed",
        lambda keys, projects: next(misses, None) or looked_up(keys, projects),
    )

    racing = hash_system.store("Release on Thursdays.", key="release-day")

    assert (racing.updated, racing.memory.id, racing.version) == (True, other.memory.id, 1)
    assert hash_system.records.memories.counts().total == 1


def test_a_store_under_a_key_of_a_text_another_key_holds_is_refused(hash_system: CognitiveSystem) -> None:
    hash_system.store("Deploys run on Fridays.", key="deploy-day")

    with pytest.raises(InvalidInputError) as refused:
        hash_system.store("Deploys run on Fridays.", key="release-day")

    assert refused.value.code == "duplicate" and "under the key 'deploy-day'" in refused.value.message
    assert hash_system.records.memories.keyed(["release-day"], ["default"]) == []

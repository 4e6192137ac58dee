"""Hybrid recall: the lexical index, links in time and activation spreading, on real storage."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cognitive_memory.core import spelling
from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, MemoryType
from cognitive_memory.service import StoreContext
from cognitive_memory.storage import SQLiteMemoryStore, vocabulary
from cognitive_memory.system import CognitiveSystem

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def memory(
    memory_id: str, content: str, *, session: str | None = "s", at: datetime = T0, turn: bool = True
) -> CognitiveMemory:
    """A memory; with ``turn`` (the default) a conversation turn said by its leading ``Name:``."""
    vector = np.zeros(384, dtype=np.float32)
    vector[0] = 1.0
    speaker = content.split(":", 1)[0] if turn and ":" in content else None
    return CognitiveMemory(
        memory_id,
        content,
        HierarchyLevel.CONTEXT,
        MemoryType.SEMANTIC,
        at,
        at,
        cognitive_embedding=vector,
        session_id=session,
        speaker=speaker or None,
    )


@pytest.fixture
def store(tmp_path: Path) -> SQLiteMemoryStore:
    return SQLiteMemoryStore(tmp_path / "memories.db")


def test_memories_in_one_session_link_to_their_two_predecessors(store: SQLiteMemoryStore) -> None:
    store.memories.add([memory(f"m{i}", f"turn {i}", at=T0 + timedelta(minutes=i)) for i in range(4)])
    graph = store.links.neighbours(["m0", "m1", "m2", "m3"])
    assert sorted(graph["m3"]) == [("m1", 0.5), ("m2", 1.0)]
    assert sorted(graph["m0"]) == [("m1", 1.0), ("m2", 0.5)]
    assert sorted(graph["m1"]) == [("m0", 1.0), ("m2", 1.0), ("m3", 0.5)]


def test_other_sessions_and_old_memories_are_not_linked_in_time(store: SQLiteMemoryStore) -> None:
    store.memories.add([memory("old", "turn", at=T0)])
    store.memories.add([memory("other", "turn", session="elsewhere", at=T0 + timedelta(hours=7))])
    store.memories.add([memory("no-session", "turn", session=None, at=T0 + timedelta(hours=7))])
    store.memories.add([memory("new", "turn", at=T0 + timedelta(hours=7))])
    assert store.links.neighbours(["old", "other", "no-session", "new"]) == {}


def test_a_question_is_answered_by_the_next_memory_of_its_session(store: SQLiteMemoryStore) -> None:
    store.memories.add(
        [
            memory("ask", "Melanie: what inspired the painting?", at=T0),
            memory("reply", "Caroline: a visit to the lake.", at=T0 + timedelta(seconds=1)),
            memory("later", "Melanie: lovely. How was the drive?", at=T0 + timedelta(seconds=2)),
            memory("elsewhere", "Gina: the store opens tomorrow.", session="other", at=T0),
        ]
    )
    store.memories.add([memory("next", "Caroline: long but fine.", at=T0 + timedelta(seconds=3))])
    found = store.links.answers(["ask", "reply", "later", "elsewhere", "next"])
    assert found == {"ask": "reply", "later": "next"}


def test_a_note_holding_a_question_passes_nothing_to_the_next_note(store: SQLiteMemoryStore) -> None:
    store.memories.add(
        [
            memory("q", "TODO: should the cache expire after an hour?", turn=False),
            memory(
                "n", "Fix: the deploy script reads the vault token.", at=T0 + timedelta(seconds=1), turn=False
            ),
            memory("t", "Ana: and what about the cache?", at=T0 + timedelta(seconds=2)),
            memory("u", "Note: staging is down on Fridays.", at=T0 + timedelta(seconds=3), turn=False),
        ]
    )
    # Neither the note's question nor a turn followed by a note makes a question and its answer.
    assert store.links.answers(["q", "n", "t", "u"]) == {}


def test_lexical_search_ranks_a_rare_word_and_reaches_neighbours_through_context(
    store: SQLiteMemoryStore,
) -> None:
    store.memories.add(
        [
            memory("question", "Melanie: what did you research last week?", at=T0),
            memory(
                "answer", "Caroline: adoption agencies, mostly in Zanzibar.", at=T0 + timedelta(seconds=1)
            ),
            memory("unrelated", "Caroline: the weather was lovely.", at=T0 + timedelta(hours=8)),
        ]
    )
    direct = dict(store.words.search("Zanzibar", 10))
    assert list(direct)[0] == "answer"
    assert direct["question"] < direct["answer"]  # found through the answer's words in its context
    assert "unrelated" not in direct


def test_lexical_search_scores_every_match_however_old(store: SQLiteMemoryStore) -> None:
    store.memories.add(
        [memory("old-rare", "The deploy key for cluster kestrel rotates monthly.", session=None)]
    )
    store.memories.add(
        [memory(f"d{i}", f"deploy note {i} about the cluster", session=None) for i in range(40)]
    )
    full = store.words.search("deploy kestrel", 50)
    # Every match scored: the rare word's memory first, then the 40 sharing only "deploy".
    assert [memory_id for memory_id, _ in full][0] == "old-rare" and len(full) == 41
    assert len(store.words.search("cluster", 50)) == 41


def test_the_kept_memory_count_follows_stores_and_deletes(store: SQLiteMemoryStore) -> None:
    store.memories.add([memory(f"m{i}", f"note {i}", session=None) for i in range(300)])
    store.memories.delete(["m3", "m7"])
    with store.database._lock:  # the count kept with the document frequencies, as recall reads it
        total = vocabulary.documents(store.database._conn)
        (counted,) = store.database._conn.execute("SELECT count(*) FROM memories").fetchone()
    assert total == counted == 298


@pytest.mark.parametrize(
    "hostile",
    ['" OR 1=1 --', "NEAR(a b)", "col:value", "*", "a AND", "'; DROP TABLE memories; --", '"""', "^start"],
)
def test_query_text_is_never_read_as_fts_syntax(store: SQLiteMemoryStore, hostile: str) -> None:
    store.memories.add([memory("m", "DROP TABLE memories is a dangerous statement")])
    store.words.search(hostile, 10)
    assert [m.id for m in store.memories.get(["m"])] == ["m"]


def test_a_word_match_ranks_where_meaning_alone_would_not(real_system: CognitiveSystem) -> None:
    target = real_system.store("Zoltan's visitor badge number is 4471.").memory
    for text in ("Visitor badges are printed at reception.", "Badge numbers expire after a year."):
        real_system.store(text)
    result = real_system.retrieve("4471", include_bridges=False)
    first = result.core[0]
    assert first.memory.id == target.id
    assert first.score.lexical == pytest.approx(1.0)


@pytest.mark.parametrize("words_in_index", [False, True])
def test_a_misspelt_query_finds_what_its_correction_names(
    real_system: CognitiveSystem, words_in_index: bool
) -> None:
    """The issue's three queries: without correction each found nothing (the relevance floor);
    the same with the words searched in the vector index."""
    real_system.retriever.config = replace(real_system.retriever.config, words_in_index=words_in_index)
    postgres = real_system.store("We moved the orders database from MySQL to PostgreSQL last spring.").memory
    python = real_system.store("Use context managers in Python to close files: the with statement.").memory
    kubernetes = real_system.store("The Kubernetes scheduler places pods on nodes by their requests.").memory
    real_system.store("Lunch on Friday was pizza with the team.")

    for query, expected in (
        ("PostgrSQL", postgres),
        ("contxt managers pyton", python),
        ("Kubernets sheduler", kubernetes),
    ):
        result = real_system.retrieve(query, include_bridges=False)
        assert [r.memory.id for r in (*result.core, *result.peripheral)][:1] == [expected.id], query


def test_a_memory_holding_the_word_as_typed_outranks_one_found_through_its_correction(
    real_system: CognitiveSystem,
) -> None:
    """ "pyton" is held once and "python" twenty times: both are searched, the exact one first."""
    typed = real_system.store("The pyton build script installs the wheel.").memory
    corrected = [
        real_system.store(f"The python build script installs the wheel, release {n}.").memory.id
        for n in range(spelling.DOMINANT)
    ]

    result = real_system.retrieve("pyton build script", include_bridges=False)
    ranked = [r.memory.id for r in (*result.core, *result.peripheral)]

    assert ranked[0] == typed.id
    assert set(ranked[1:]) <= set(corrected) and len(ranked) > 1


def test_activation_brings_the_answer_after_the_matching_question(real_system: CognitiveSystem) -> None:
    real_system.store("Melanie: What did you research for the new project?", session_id="chat")
    answer = real_system.store(
        "Caroline: Adoption agencies and their waiting lists.", session_id="chat"
    ).memory
    for text in ("Caroline: I love hiking in the mountains.", "Melanie: The kids painted a sunrise."):
        real_system.store(text, session_id="other")
    result = real_system.retrieve("What did Caroline research?", max_results=3, include_bridges=False)
    ranked = [*result.core, *result.peripheral]
    found = next(r for r in ranked if r.memory.id == answer.id)
    assert found.score.activation > 0
    assert found.rank <= 2


def test_the_answer_to_a_matching_question_inherits_part_of_its_relevance(
    real_system: CognitiveSystem,
) -> None:
    from cognitive_memory.service import MemoryService

    chat = MemoryService(real_system, session_id="chat")
    chat.store_experience("Melanie: What inspired your painting for the art show?", turn("Melanie"))
    answer = chat.store_experience("Caroline: A visit to the community center last spring.", turn("Caroline"))
    other = MemoryService(real_system, session_id="other")
    for speaker, text in (
        ("Gina", "Gina: The art show opens on Friday."),
        ("Jon", "Jon: My painting class starts in June."),
    ):
        other.store_experience(text, turn(speaker))
    recalled = chat.retrieve_memories("What inspired Caroline's painting for the art show?", None, 5, False)
    ranked = [*recalled.memories.core, *recalled.memories.peripheral]
    assert "inspired your painting" in ranked[0].content
    second = ranked[1]
    assert second.id == answer.memory_id
    question_relevance = ranked[0].score.relevance
    assert second.score.activation == pytest.approx(0.4 * question_relevance)  # answer_share
    assert second.score.activation > real_system.retriever.config.activation_decay * question_relevance


def turn(speaker: str) -> StoreContext:
    return StoreContext(speaker=speaker)


def test_with_the_conversation_stage_off_turns_rank_as_any_memory(
    hash_system: CognitiveSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cognitive_memory.service import MemoryService

    # Recalls change what later recalls see (uses, co-recall links): keep the store as it is.
    monkeypatch.setattr(hash_system, "_record_uses", lambda *args: None)
    chat = MemoryService(hash_system, session_id="chat")
    asked = "Melanie: What inspired your painting for the art show?"
    question = chat.store_experience(asked, turn("Melanie"))
    answer = chat.store_experience("Caroline: A visit to the community center last spring.", turn("Caroline"))

    def recall() -> dict[str, Any]:
        query = "What inspired Melanie's painting for the art show?"
        recalled = chat.retrieve_memories(query, None, 5, False)
        return {m.id: m.score for m in (*recalled.memories.core, *recalled.memories.peripheral)}

    on = recall()
    assert on[question.memory_id].speaker == pytest.approx(0.1)
    assert on[answer.memory_id].activation == pytest.approx(0.4 * on[question.memory_id].relevance)
    hash_system.retriever.config = replace(hash_system.retriever.config, conversation=False)
    off = recall()
    assert off[question.memory_id].speaker == 0.0
    assert answer.memory_id not in off  # no words of the query, and no link but one in time


@pytest.mark.parametrize(("weight", "first"), [(0.1, "Ana"), (0.0, "Ben")])
def test_a_memory_said_by_the_person_the_query_names_ranks_first(
    real_system: CognitiveSystem, weight: float, first: str
) -> None:
    from cognitive_memory.service import MemoryService

    config = real_system.retriever.config
    real_system.retriever.config = replace(config, weights=replace(config.weights, speaker=weight))
    chat = MemoryService(real_system, session_id="chat")
    for text in (
        "Ana: Last summer we walked the coast trail for a week.",
        "Ben: Ana and I love hiking; I went hiking in the Alps.",
        "Ben: The weather was great all week.",
        "Cho: My train was late again.",
        "Cho: The museum opens at nine.",
    ):
        chat.store_experience(text, turn(text.split(":")[0]))
    recalled = chat.retrieve_memories("Where did Ana go hiking?", None, 2, False)
    ranked = [*recalled.memories.core, *recalled.memories.peripheral]
    assert ranked[0].content.startswith(f"{first}:")  # without the boost, Ben's words match better
    assert [m.score.speaker for m in ranked] == ([weight, 0.0] if first == "Ana" else [0.0, weight])


def test_deleting_a_memory_removes_it_everywhere_and_reindexes_its_neighbours(
    hash_system: CognitiveSystem,
) -> None:
    first = hash_system.store("Melanie asked about the pottery class", session_id="chat").memory
    second = hash_system.store("Caroline signed up for ceramics on Tuesday", session_id="chat").memory
    assert [m for m, _ in hash_system.records.words.search("ceramics", 5)] == [second.id, first.id]

    assert hash_system.delete([second.id, "no-such-id"]) == [second.id]
    hash_system.flush()

    assert hash_system.records.memories.get([second.id]) == []
    assert hash_system.records.links.neighbours([first.id]) == {}
    assert hash_system.records.words.search("ceramics", 5) == []  # first no longer carries its words
    assert hash_system.vectors.count() == 1
    assert hash_system.records.outbox.pending() == []
    assert [r.memory.id for r in hash_system.retrieve("Melanie asked about the pottery class").core] == [
        first.id
    ]


def test_store_many_stores_in_order_links_in_time_and_refuses_all_on_a_bad_text(
    hash_system: CognitiveSystem,
) -> None:
    from cognitive_memory.errors import InvalidInputError

    outcomes = hash_system.store_many(
        ["Yesterday I fixed the login bug", "Always pin the base image", "The API runs on port 8080"],
        session_id="bulk",
    )
    memories = [outcome.memory for outcome in outcomes]
    assert [(int(m.hierarchy_level), m.memory_type.value) for m in memories] == [
        (2, "episodic"),
        (0, "semantic"),
        (1, "semantic"),
    ]
    assert not any(outcome.queued for outcome in outcomes)
    graph = hash_system.records.links.neighbours([memories[2].id])
    assert sorted(graph[memories[2].id]) == sorted([(memories[1].id, 1.0), (memories[0].id, 0.5)])
    with pytest.raises(InvalidInputError):
        hash_system.store_many(["a fine text", "   "])
    assert hash_system.records.memories.counts().total == 3
    assert hash_system.vectors.count() == 3

"""bench/locomo_move.py: the counts of two stores compared name by name, each store's database
named on the server of the URL given, and one store of every conversation keyed apart."""

from __future__ import annotations

from types import SimpleNamespace

from bench.locomo_move import compare_counts, conversation, database_url, one_store
from cognitive_memory.service import StoreContext


def test_equal_counts_compare_equal() -> None:
    counts = {"memories": 419, "connections/co_recall": 1200, "trash": 0}
    assert compare_counts(counts, dict(counts)) == []


def test_each_differing_or_missing_count_is_named_once_in_order() -> None:
    before = {"memories": 419, "connections/co_recall": 1200, "trash": 1}
    after = {"memories": 419, "connections/co_recall": 1199, "relations/supersedes": 2}
    assert compare_counts(before, after) == [
        "connections/co_recall: 1200 vs 1199",
        "relations/supersedes: 0 vs 2",
        "trash: 1 vs 0",
    ]


def test_a_conversation_database_keeps_the_user_password_host_and_socket_of_the_url() -> None:
    assert (
        database_url("postgresql://cm:s%40cret@db.example:5433/postgres?sslmode=require", "cm_move_conv_26")
        == "postgresql://cm:s%40cret@db.example:5433/cm_move_conv_26?sslmode=require"
    )
    assert (
        database_url("postgresql://cm@/postgres?host=/tmp/pg", "cm_move_conv_26")
        == "postgresql://cm@/cm_move_conv_26?host=/tmp/pg"
    )
    assert database_url("postgresql://cm@localhost", "a b") == "postgresql://cm@localhost/a%20b"


SAMPLE = {
    "sample_id": "conv-1",
    "conversation": {
        "session_1_date_time": "1 May 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I moved to Lisbon."},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "How is the weather?"},
        ],
    },
    "qa": [{"question": "Where did Ann move?", "category": 4, "evidence": ["D1:1"]}],
}


class Stored:
    def __init__(self) -> None:
        self.texts: list[tuple[str, str | None]] = []

    def store_experience(self, text: str, context: StoreContext) -> SimpleNamespace:
        self.texts.append((text, context.speaker))
        return SimpleNamespace(memory_id=f"m{len(self.texts)}")


def test_one_store_cycles_the_turns_keyed_by_conversation_and_pass_and_asks_every_question() -> None:
    body = one_store([SAMPLE, {**SAMPLE, "sample_id": "conv-2"}], 5)
    service = Stored()

    keyed = body.fill(service)  # only store_experience is called

    assert list(keyed.values()) == [
        "conv-1/D1:1",
        "conv-1/D1:2",
        "conv-2/D1:1",
        "conv-2/D1:2",
        "conv-1/D1:1#2",
    ]
    assert service.texts[0] == ("[1 May 2023] Ann: I moved to Lisbon.", "Ann")
    assert service.texts[4][0].endswith("(pass 2)")
    assert [(key, set(q.evidence)) for key, q in body.asked] == [
        ("conv-1/q0", {"conv-1/D1:1"}),
        ("conv-2/q0", {"conv-2/D1:1"}),
    ]


def test_a_conversation_store_keys_its_turns_and_questions_as_bench_locomo_does() -> None:
    body = conversation(SAMPLE)
    service = Stored()

    keyed = body.fill(service)  # only store_experience is called

    assert body.name == "conv-1" and list(keyed.values()) == ["D1:1", "D1:2"]
    assert [(key, set(q.evidence)) for key, q in body.asked] == [("conv-1/q0", {"D1:1"})]

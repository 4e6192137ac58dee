"""Keys found by `recall` from a shell: the whole key as the query ranks its memory first, one of
its words finds it, and `update --key` moves both, with the hash encoder standing in for the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cognitive_memory.encoding import HashEncoder
from tests.transferring import invoke

TALK = [f"Database choice notes {n}: the database choice for service {n} is still open." for n in range(6)]


@pytest.fixture(autouse=True)
def hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands build their system with the hash encoder instead of the model."""
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())


def recalled(query: str) -> list[dict[str, Any]]:
    lists = json.loads(invoke("recall", query, "--detail", "full", "--json").stdout)["memories"]
    return [*lists["core"], *lists["peripheral"]]


def test_recall_finds_a_memory_by_its_key_and_its_keys_words(data_dir: Path) -> None:
    for text in TALK:
        invoke("store", text)
    stored = json.loads(invoke("store", "We picked PostgreSQL.", "--key", "database-choice", "--json").stdout)
    keyed = stored["memory_id"]

    by_key = recalled("Database-Choice")
    by_word = recalled("choice")
    shown = invoke("recall", "database-choice").stdout
    invoke("update", keyed, "--key", "ledger-store")
    by_old, by_new, by_new_word = recalled("database-choice"), recalled("ledger-store"), recalled("ledger")

    assert by_key[0]["id"] == keyed and by_key[0]["score"]["key"] > 0
    assert keyed in [m["id"] for m in by_word]
    assert shown.index("We picked PostgreSQL.") < shown.index("Database choice notes")
    assert keyed not in [m["id"] for m in by_old]
    assert by_new[0]["id"] == keyed
    assert [m["id"] for m in by_new_word] == [keyed]

"""The caller's own fields from a shell (`store --metadata`, `update --metadata`, `list` and `recall
--metadata`) and through `export` and `import`, with the hash encoder standing in for the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cognitive_memory.encoding import HashEncoder
from memory_system.cli import app
from tests.transferring import imported, invoke, opened, runner


@pytest.fixture(autouse=True)
def hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands build their system with the hash encoder instead of the model."""
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())


def stored(text: str, metadata: str) -> str:
    return str(json.loads(invoke("store", text, "--metadata", metadata, "--json").stdout)["memory_id"])


def listed(*options: str) -> list[dict[str, Any]]:
    return list(json.loads(invoke("list", *options, "--json").stdout)["memories"])


def test_store_list_recall_and_update_by_metadata(data_dir: Path) -> None:
    beta = stored("The beta ships on Monday.", '{"phase": "beta", "ticket": 42}')
    stored("GA ships in June.", '{"phase": "ga"}')

    by_phase = listed("--metadata", '{"phase": "beta"}')
    recalled = json.loads(
        invoke("recall", "the beta ships on Monday", "--metadata", '{"ticket": 42}', "--json").stdout
    )
    invoke("update", beta, "--metadata", '{"phase": "ga"}')
    after = listed("--metadata", '{"phase": "ga"}')

    assert [m["content"] for m in by_phase] == ["The beta ships on Monday."]
    assert by_phase[0]["metadata"] == {"phase": "beta", "ticket": 42}
    assert [m["content"] for m in recalled["memories"]["core"]] == ["The beta ships on Monday."]
    assert sorted(m["content"] for m in after) == ["GA ships in June.", "The beta ships on Monday."]
    assert listed("--metadata", '{"ticket": 42}') == []  # the update replaced all the fields


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        (["store", "x", "--metadata", "{phase: beta}"], "--metadata is not JSON"),
        (["store", "x", "--metadata", '{"source_info": "me"}'], "'source_info' is reserved"),
        (["store", "x", "--metadata", '{"a": {"b": {"c": {"d": {"e": 1}}}}}'], "nested 5 deep; at most 4"),
        (["store", "x", "--metadata", json.dumps({"k": "v" * 5000})], "at most 4,096"),
        (["store", "x", "--metadata", "[1, 2]"], "valid dictionary"),
        (["list", "--metadata", '{"owners": ["ana"]}'], "a string, number or boolean"),
    ],
)
def test_bad_metadata_is_one_error_line_and_stores_nothing(
    data_dir: Path, arguments: list[str], says: str
) -> None:
    result = runner.invoke(app, arguments)

    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and says in result.output, result.output
    assert result.output.count("\n") == 1 and len(result.output) < 400, result.output
    assert listed() == []


def test_export_then_import_keeps_the_fields_and_refuses_a_line_that_breaks_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(tmp_path / "source"))
    memory_id = stored("The beta ships on Monday.", '{"phase": "beta", "owners": ["ana"], "n": {"m": 1}}')
    invoke("update", memory_id, "--metadata", '{"phase": "ga"}')
    exported = invoke("export").stdout
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(tmp_path / "fresh"))

    lines = exported.splitlines()
    bad = json.loads(lines[1])
    bad["metadata"] = {f"k{n}": n for n in range(40)}
    refused = runner.invoke(app, ["import", "-"], input="\n".join([lines[0], json.dumps(bad)]))
    nothing = opened(tmp_path / "fresh", monkeypatch)
    assert nothing.records.memories.counts().total == 0
    nothing.close()
    report = imported("-", input=exported)
    (memory,) = json.loads(invoke("get", memory_id, "--history", "--json").stdout)["memories"]

    assert refused.exit_code == 1 and "40 keys; at most 32" in refused.output, refused.output
    assert report["added"] == 1
    assert memory["metadata"] == {"phase": "ga"}
    assert [v["metadata"] for v in memory["history"]] == [{"phase": "beta", "owners": ["ana"], "n": {"m": 1}}]
    assert [m["id"] for m in listed("--metadata", '{"phase": "ga"}')] == [memory_id]

"""bench tool-bytes: what it counts of a tools/list answer."""

from __future__ import annotations

import json

from bench.tool_bytes import measure


def test_each_part_and_the_whole_answer_are_counted_as_compact_utf8_json() -> None:
    tool = {
        "name": "store_memory",
        "description": "Stores é",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "outputSchema": {"type": "object"},
    }
    bare = {"name": "ping", "inputSchema": {"type": "object"}}
    listed = {"tools": [tool, bare]}

    sizes = measure(listed)

    compact = json.dumps(tool["inputSchema"], separators=(",", ":"))
    assert sizes["tools"]["store_memory"]["description"] == len("Stores é".encode())
    assert sizes["tools"]["store_memory"]["input_schema"] == len(compact)
    assert sizes["tools"]["ping"] == {"description": 0, "input_schema": 17, "output_schema": 2, "whole": 47}
    assert sizes["total"]["input_schema"] == len(compact) + 17
    assert sizes["descriptions_and_inputs"] == 9 + len(compact) + 17
    assert sizes["answer"] == len(json.dumps(listed, separators=(",", ":"), ensure_ascii=False).encode())

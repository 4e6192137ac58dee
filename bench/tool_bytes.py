"""Bytes of the tool definitions an MCP client loads: ``tools/list`` per tool and in all.

python -m bench tool-bytes

Builds the server over a throwaway store (the hash encoder: the definitions do not depend on the
model), lists the tools through the SDK's in-memory client and measures compact JSON (UTF-8
bytes) of each tool's description, input schema and output schema, of each whole tool entry,
and of the whole answer. Issue #30's targets: descriptions plus input schemas at most 12 KB, the
whole answer at most 32 KB. Results go to ``bench/results/tool_bytes.json``.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from bench.latency import RESULTS
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from interfaces.mcp_server import create_server

__all__ = ["main", "measure"]


def _bytes(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


async def _listed(data_dir: Path) -> dict[str, Any]:
    settings = Settings(env_file=None)
    settings.storage.data_dir = data_dir
    system = build_system(settings, encoder=HashEncoder())
    try:
        async with Client(create_server(system)) as client:
            listed = await client.list_tools()
    finally:
        system.close()
    return listed.model_dump(mode="json", by_alias=True, exclude_none=True)


def measure(listed: dict[str, Any]) -> dict[str, Any]:
    """Per tool and in all: description, input schema, output schema and whole-entry bytes."""
    tools = {
        tool["name"]: {
            "description": len(tool.get("description", "").encode()),
            "input_schema": _bytes(tool["inputSchema"]),
            "output_schema": _bytes(tool.get("outputSchema", {})),
            "whole": _bytes(tool),
        }
        for tool in listed["tools"]
    }
    total = {part: sum(sizes[part] for sizes in tools.values()) for part in next(iter(tools.values()))}
    return {
        "tools": tools,
        "total": total,
        "descriptions_and_inputs": total["description"] + total["input_schema"],
        "answer": _bytes(listed),
    }


def main(argv: Sequence[str]) -> None:
    del argv
    with tempfile.TemporaryDirectory() as scratch:
        sizes = measure(anyio.run(_listed, Path(scratch)))
    print(f"{'tool':20} {'descr':>6} {'input':>6} {'output':>7} {'whole':>7}")
    for name, part in sizes["tools"].items():
        print(
            f"{name:20} {part['description']:6} {part['input_schema']:6} "
            f"{part['output_schema']:7} {part['whole']:7}"
        )
    total = sizes["total"]
    print(
        f"{'all':20} {total['description']:6} {total['input_schema']:6} "
        f"{total['output_schema']:7} {total['whole']:7}"
    )
    print(f"descriptions + input schemas: {sizes['descriptions_and_inputs']} bytes (target <= 12,288)")
    print(f"whole tools/list answer: {sizes['answer']} bytes (target <= 32,768)")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "tool_bytes.json").write_text(json.dumps(sizes, indent=2) + "\n")

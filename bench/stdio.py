"""`memory_system serve mcp` as a real subprocess, spoken to in raw JSON-RPC over its pipes.

Measures what a client sees: process start to ``initialize`` answered and to the first recall
answered, then store/recall latency over stdio (no client-side validation), and the server's
resident memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.corpus import query_texts
from bench.latency import percentiles

__all__ = ["StdioServer", "measure", "words_env"]

MEMORY_SYSTEM = Path(sys.executable).with_name("memory_system")
PROTOCOL = "2025-11-25"
WARM_UP = 50  # recalls after the first one, timed apart from the steady state


def words_env(words: str | None) -> dict[str, str]:
    """A server's environment for ``--words fts5|index`` (None: the server's default)."""
    return {"COGNITIVE_MEMORY_WORDS": words} if words else {}


class StdioServer:
    """One server process on pipes; ``request`` sends a call and waits for its answer."""

    def __init__(self, data_dir: Path, extra_env: dict[str, str] | None = None) -> None:
        env = {**os.environ, "COGNITIVE_MEMORY_DATA_DIR": str(data_dir), **(extra_env or {})}
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [str(MEMORY_SYSTEM), "serve", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=str(data_dir),
        )
        self._next_id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        while True:
            line = self._stdout().readline()
            if not line:
                raise RuntimeError(f"the server exited (status {self.process.poll()}) before answering")
            message = json.loads(line)
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method} failed: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result

    def initialize(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(f"{tool} returned an error: {result.get('content')}")
        return result

    def rss_mb(self) -> dict[str, float] | None:
        """Resident memory now and at its peak (Linux /proc), in MB."""
        try:
            lines = Path(f"/proc/{self.process.pid}/status").read_text().splitlines()
        except OSError:
            return None
        fields = dict(line.split(":", 1) for line in lines if ":" in line)
        return {
            key: round(int(fields[name].split()[0]) / 1024, 1)
            for key, name in (("rss_mb", "VmRSS"), ("peak_rss_mb", "VmHWM"))
            if name in fields
        }

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _send(self, message: dict[str, Any]) -> None:
        stdin = self.process.stdin
        if stdin is None:
            raise RuntimeError("the server's stdin is closed")
        stdin.write(json.dumps(message).encode() + b"\n")
        stdin.flush()

    def _stdout(self) -> Any:
        if self.process.stdout is None:
            raise RuntimeError("the server's stdout is closed")
        return self.process.stdout


def measure(
    data_dir: Path, cues: Sequence[str], texts: Sequence[str], env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Cold start, then recall and store latency over stdio, then the server's memory (``env``: the
    server's variables beyond this process's)."""
    server = StdioServer(data_dir, env)
    try:
        cold_start = _started(server, cues[0])
        # A new process is slower for its first few dozen recalls (page cache, the runtime's first
        # runs): those are reported apart, and the steady state after them.
        warm_up = _timed(server, "recall_memories", [{"query": cue} for cue in query_texts(WARM_UP, seed=5)])
        recall = _timed(server, "recall_memories", [{"query": cue} for cue in cues])
        store = _timed(server, "store_memory", [{"text": text} for text in texts])
        measured = {
            "cold_start": {**cold_start, "next_recalls": percentiles(warm_up)},
            "recall": percentiles(recall),
            "store": percentiles(store),
            **(server.rss_mb() or {}),
        }
    finally:
        server.close()
    # The first start follows the bench's own process, whose store closed the way a library's
    # does: its shard left the page cache, as after a reboot. A server that ends leaves it there,
    # so the next session's server starts as this one does.
    server = StdioServer(data_dir, env)
    try:
        return {**measured, "restart": _started(server, cues[1 % len(cues)])}
    finally:
        server.close()


def _started(server: StdioServer, cue: str) -> dict[str, float]:
    """Seconds from process start to ``initialize`` answered and to a first recall answered."""
    server.initialize()
    initialized = time.perf_counter() - server.started
    server.call("recall_memories", {"query": cue})
    first_recall = time.perf_counter() - server.started
    return {"initialize_s": round(initialized, 3), "first_recall_s": round(first_recall, 3)}


def _timed(server: StdioServer, tool: str, calls: Sequence[dict[str, Any]]) -> list[float]:
    samples = []
    for arguments in calls:
        start = time.perf_counter()
        server.call(tool, arguments)
        samples.append(time.perf_counter() - start)
    return samples

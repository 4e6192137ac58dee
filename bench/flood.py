"""A request flooded with unknown fields, over HTTP, beside another client's pings (docs/security.md).

    python -m bench flood [--fields 100000] [--requests 5]

Starts ``memory_system serve mcp --port`` (the usual model) on a fresh data directory with a
token, opens a session, then sends ``--requests`` ``recall_memories`` calls whose ``filters`` hold
``--fields`` unknown names, one after another, while a second thread pings the same server without
pause. The report gives each flooded call's seconds, status and answer size, and the pings'
median and maximum: a flood must be answered small and fast, and must not hold the others up.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.latency import RESULTS

__all__ = ["main", "run"]

TOKEN = "bench-flood-token"
_HEADERS = {
    "Authorization": f"Bearer {TOKEN}",
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "flood", "version": "1"},
    },
}


def _post(port: int, body: bytes, session: str | None = None) -> tuple[int, bytes, str | None]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        headers = {**_HEADERS, **({"Mcp-Session-Id": session} if session else {})}
        connection.request("POST", "/mcp", body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read(), response.getheader("mcp-session-id")
    finally:
        connection.close()


def _listening(port: int, process: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError("the server did not listen")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run(fields: int, requests: int) -> dict[str, Any]:
    port = _free_port()
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "COGNITIVE_MEMORY_DATA_DIR": folder, "MCP_AUTH_TOKEN": TOKEN}
        command = [str(Path(sys.executable).with_name("memory_system")), "serve", "mcp", "--port", str(port)]
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _listening(port, process)
            return _flood(port, fields, requests)
        finally:
            process.terminate()
            process.wait(timeout=60)


def _flood(port: int, fields: int, requests: int) -> dict[str, Any]:
    _, _, session = _post(port, json.dumps(_INITIALIZE).encode())
    _post(port, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', session)
    call = {"name": "memory_status", "arguments": {}}  # the model and the index are up before timing
    _post(
        port,
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}).encode(),
        session,
    )
    arguments = {"query": "deploy", "filters": {f"field{n}": n for n in range(fields)}}
    params = {"name": "recall_memories", "arguments": arguments}
    flood = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}).encode()
    pings: list[float] = []
    done = threading.Event()

    def ping() -> None:
        body = b'{"jsonrpc":"2.0","id":3,"method":"ping"}'
        while not done.is_set():
            started = time.perf_counter()
            _post(port, body, session)
            pings.append(time.perf_counter() - started)
            time.sleep(0.005)

    pinger = threading.Thread(target=ping, daemon=True)
    pinger.start()
    time.sleep(0.1)
    answers = []
    for _ in range(requests):
        started = time.perf_counter()
        status, body, _ = _post(port, flood, session)
        answers.append(
            {"seconds": round(time.perf_counter() - started, 4), "status": status, "bytes": len(body)}
        )
        time.sleep(0.05)
    done.set()
    pinger.join()
    return {
        "benchmark": "flood",
        "fields": fields,
        "request_bytes": len(flood),
        "answers": answers,
        "pings": len(pings),
        "ping_p50_ms": round(1000 * statistics.median(pings), 2),
        "ping_max_ms": round(1000 * max(pings), 2),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench flood", description=__doc__)
    parser.add_argument("--fields", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=5)
    args = parser.parse_args(argv)
    result = run(args.fields, args.requests)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"flood-{args.fields}.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout

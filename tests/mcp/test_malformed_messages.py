"""Malformed JSON-RPC over a real stdio pipe and a real HTTP socket: a lone surrogate (a string cut
inside an emoji), JSON nested too deep, batches, a line cut short, a request with a null id. Every
request gets an answer within 10 s and the session goes on; HTTP answers the same way."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.mcp.test_http import TOKEN, free_port, spawn_http_server
from tests.mcp.test_stdio import INITIALIZE, spawn_raw_server

ANSWER_WITHIN = 10.0
CUT_EMOJI = '"We shipped it \\ud83d"'  # JSON text: the high half of 🚀 without its low half


def _call(request_id: int, tool: str, arguments_json: str) -> bytes:
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"{tool}","arguments":{arguments_json}}}}}'
    ).encode()


class StdioSession:
    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.pending = b""  # read from the pipe, not yet a whole line

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def next_message(self, within: float = ANSWER_WITHIN) -> dict[str, Any]:
        assert self.process.stdout is not None
        deadline = time.monotonic() + within
        while b"\n" not in self.pending:
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no answer within {within} s"
            chunk = os.read(self.process.stdout.fileno(), 1 << 16)
            assert chunk, "the server closed its stdout"
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    def answer(self, request_id: int | None, within: float = ANSWER_WITHIN) -> dict[str, Any]:
        deadline = time.monotonic() + within
        while True:
            message = self.next_message(max(0.01, deadline - time.monotonic()))
            if message.get("id") == request_id:
                return message


@pytest.fixture
def stdio(data_dir: Path) -> Iterator[StdioSession]:
    process = spawn_raw_server(data_dir)
    session = StdioSession(process)
    try:
        session.send(json.dumps(INITIALIZE).encode())
        assert "result" in session.answer(0, within=60)
        session.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        yield session
    finally:
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 0
        assert b"Traceback" not in stderr


@pytest.mark.subprocess
def test_a_lone_surrogate_gets_an_error_with_its_id_and_nothing_is_stored(stdio: StdioSession) -> None:
    stdio.send(_call(1, "store_memory", f'{{"text": {CUT_EMOJI}, "context": {{"tags": ["\\ude80x"]}}}}'))
    error = stdio.answer(1, within=10)["error"]
    assert error["code"] == -32602
    assert "lone UTF-16 surrogate" in error["message"] and "2 string(s)" in error["message"]

    stdio.send(_call(2, "store_memory", '{"text": "We shipped it \\ud83d\\ude80"}'))  # the whole 🚀
    assert stdio.answer(2, within=60)["result"]["isError"] is False
    stdio.send(_call(3, "memory_status", "{}"))
    status = stdio.answer(3)["result"]["structuredContent"]
    assert status["memory_counts"]["total_memories"] == 1


@pytest.mark.subprocess
def test_json_nested_too_deep_gets_an_error_with_its_id(stdio: StdioSession) -> None:
    deep = "[" * 300 + "]" * 300
    stdio.send(_call(3, "store_memory", f'{{"text": "x", "context": {{"tags": {deep}}}}}'))
    error = stdio.answer(3)["error"]
    assert error["code"] == -32600
    assert "at most 200" in error["message"]

    stdio.send(b"[" * 100_000)  # no id to read: answered with id null
    assert stdio.answer(None)["error"]["code"] == -32600
    stdio.send(b'{"jsonrpc":"2.0","id":4,"method":"ping"}')
    assert stdio.answer(4)["result"] == {}


@pytest.mark.subprocess
def test_a_batch_is_refused_request_by_request(stdio: StdioSession) -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 5, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "six", "method": "tools/list"},
    ]
    stdio.send(json.dumps(batch).encode())
    answers = [stdio.next_message(), stdio.next_message()]
    assert [answer["id"] for answer in answers] == [5, "six"]
    assert all("batches are not supported" in answer["error"]["message"] for answer in answers)

    stdio.send(b'[{"jsonrpc":"2.0","method":"notifications/initialized"}]')
    nameless = stdio.answer(None)
    assert nameless["error"]["code"] == -32600 and "batches" in nameless["error"]["message"]


@pytest.mark.subprocess
def test_a_line_cut_short_gets_a_parse_error_with_its_id(stdio: StdioSession) -> None:
    stdio.send(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"store_memory","argu')
    assert stdio.answer(7)["error"]["code"] == -32700
    stdio.send(b'{"jsonrpc": "2.0", "id": 8}')  # no method: not a request, so no id to answer
    assert stdio.answer(None)["error"]["code"] == -32600


@pytest.mark.subprocess
def test_a_request_with_a_null_id_gets_invalid_request_and_the_session_goes_on(stdio: StdioSession) -> None:
    stdio.send(b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}')
    refused = stdio.answer(None)
    assert refused["error"]["code"] == -32600 and "string or an integer" in refused["error"]["message"]
    stdio.send(b'{"jsonrpc":"2.0","id":9,"method":"ping"}')
    assert stdio.answer(9)["result"] == {}


@pytest.fixture
def http_url(data_dir: Path) -> Iterator[str]:
    port = free_port()
    process = spawn_http_server(data_dir, port, MCP_AUTH_TOKEN=TOKEN)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


def _post(url: str, body: bytes, session: str | None = None) -> httpx2.Response:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {TOKEN}",
        "MCP-Protocol-Version": "2025-11-25",
        **({"Mcp-Session-Id": session} if session else {}),
    }
    return httpx2.post(url, content=body, headers=headers, timeout=60)


def _result(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response sent as JSON or as one server-sent event."""
    if response.headers["content-type"].startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        message: dict[str, Any] = json.loads(data[-1])
        return message
    parsed: dict[str, Any] = response.json()
    return parsed


@pytest.mark.subprocess
def test_http_answers_the_same_inputs_the_same_way(http_url: str) -> None:
    initialized = _post(http_url, json.dumps(INITIALIZE).encode())
    session = initialized.headers["mcp-session-id"]
    _post(http_url, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', session)

    cut = _post(http_url, _call(1, "store_memory", f'{{"text": {CUT_EMOJI}}}'), session)
    assert cut.status_code == 400
    assert cut.json()["id"] == 1 and cut.json()["error"]["code"] == -32602
    stored = _post(http_url, _call(5, "store_memory", '{"text": "We shipped it"}'), session)
    assert _result(stored)["result"]["isError"] is False

    deep = "[" * 300 + "]" * 300
    too_deep = _post(
        http_url, _call(2, "store_memory", f'{{"text": "x", "context": {{"tags": {deep}}}}}'), session
    )
    assert too_deep.status_code == 400
    assert too_deep.json()["id"] == 2 and too_deep.json()["error"]["code"] == -32600

    batch = _post(http_url, b'[{"jsonrpc":"2.0","id":3,"method":"ping"}]', session)
    assert batch.status_code == 400
    assert batch.json()["id"] is None and "batches are not supported" in batch.json()["error"]["message"]

    recalled = _post(http_url, _call(4, "recall_memories", '{"query": "what did we ship"}'), session)
    core = _result(recalled)["result"]["structuredContent"]["memories"]["core"]
    assert core[0]["content"] == "We shipped it"


@pytest.mark.subprocess
def test_a_request_with_100000_unknown_fields_gets_invalid_params_with_its_id(stdio: StdioSession) -> None:
    flood = json.dumps({f"field{i}": i for i in range(100_000)})
    stdio.send(_call(10, "list_memories", f'{{"filters": {flood}}}'))
    error = stdio.answer(10, within=10)["error"]
    assert error["code"] == -32602
    assert "`params.arguments.filters` holds 100,000 names" in error["message"]
    stdio.send(b'{"jsonrpc":"2.0","id":11,"method":"ping"}')
    assert stdio.answer(11)["result"] == {}

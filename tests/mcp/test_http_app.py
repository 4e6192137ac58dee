"""The HTTP app in process (Starlette's TestClient): what a POSTed JSON-RPC body gets at /mcp."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from cognitive_memory.system import CognitiveSystem
from interfaces.http_app import create_http_app
from interfaces.mcp_server import create_server
from tests.mcp.test_stdio import INITIALIZE

TOKEN = "http-app-test-token"
PORT = 8000  # the port TestClient's requests name in their Host header
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Authorization": f"Bearer {TOKEN}",
    "MCP-Protocol-Version": "2025-11-25",
}


@pytest.fixture
def http(hash_system: CognitiveSystem) -> Iterator[TestClient]:
    app = create_http_app(create_server(hash_system), host="127.0.0.1", port=PORT, token=TOKEN)
    with TestClient(app, base_url=f"http://127.0.0.1:{PORT}") as client:
        yield client


def _post(http: TestClient, message: dict[str, Any], session: str | None = None) -> Any:
    headers = {**HEADERS, **({"Mcp-Session-Id": session} if session else {})}
    return http.post("/mcp", json=message, headers=headers)


@pytest.mark.parametrize("request_id", [None, True, 1.5, {"n": 1}])
def test_a_request_whose_id_is_null_or_no_string_or_integer_gets_invalid_request(
    http: TestClient, request_id: Any
) -> None:
    session = _post(http, INITIALIZE).headers["mcp-session-id"]
    _post(http, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)

    refused = _post(http, {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}, session)

    assert refused.status_code == 400
    assert refused.json()["id"] is None
    assert refused.json()["error"]["code"] == -32600
    assert "string or an integer" in refused.json()["error"]["message"]
    listed = _post(http, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, session)
    assert listed.status_code == 200


def _result(response: Any) -> Any:
    """The JSON-RPC result of a response, whether sent as JSON or as one server-sent event."""
    if response.headers["content-type"].startswith("text/event-stream"):
        data = next(line for line in response.text.splitlines() if line.startswith("data:"))
        return json.loads(data.removeprefix("data:"))["result"]
    return response.json()["result"]


def test_an_http_session_stores_and_reports_under_its_transport_session_id(http: TestClient) -> None:
    session = _post(http, INITIALIZE).headers["mcp-session-id"]
    _post(http, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)

    def call(request_id: int, tool: str, arguments: dict[str, Any]) -> Any:
        message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
        response = _post(http, message | {"params": {"name": tool, "arguments": arguments}}, session)
        return _result(response)["structuredContent"]

    stored = call(2, "store_memory", {"text": "HTTP sessions carry their own id."})
    status = call(3, "memory_status", {})
    (record,) = call(4, "get_memories", {"memory_ids": [stored["memory_id"]]})["memories"]
    lesson = call(5, "session_lessons", {"lesson_content": "Name HTTP sessions by their transport."})

    assert status["session"] == record["session"] == lesson["session_id"] == session


def test_a_request_with_100000_unknown_fields_is_refused_unread_with_a_short_answer(http: TestClient) -> None:
    session = _post(http, INITIALIZE).headers["mcp-session-id"]
    _post(http, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    flood = {f"field{i}": i for i in range(100_000)}
    arguments = {"query": "deploy", "filters": flood}
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "recall_memories", "arguments": arguments},
    }

    refused = _post(http, call, session)

    assert refused.status_code == 400
    assert len(refused.content) < 1_000
    assert refused.json()["id"] == 3
    assert refused.json()["error"]["code"] == -32602
    assert "`params.arguments.filters` holds 100,000 names" in refused.json()["error"]["message"]
    assert _post(http, {"jsonrpc": "2.0", "id": 4, "method": "ping"}, session).status_code == 200

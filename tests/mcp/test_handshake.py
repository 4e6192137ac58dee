"""A request before the ``initialize`` handshake: over stdio (a real pipe) and over HTTP (the app in
process), it gets -32600 with its id and a message naming ``initialize``, and the session goes on.
Clients the SDK serves without a handshake (2026-07-28: the envelope in each request) still are."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY
from mcp_types.version import LATEST_MODERN_VERSION
from starlette.testclient import TestClient

from tests.mcp.test_http_app import HEADERS, _post, http  # noqa: F401 - http is a fixture
from tests.mcp.test_malformed_messages import StdioSession
from tests.mcp.test_stdio import INITIALIZE, spawn_raw_server

TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


@pytest.fixture
def stdio(data_dir: Path) -> Iterator[StdioSession]:
    """`serve mcp` on pipes, no handshake sent; it must end cleanly when its stdin closes."""
    process = spawn_raw_server(data_dir)
    try:
        yield StdioSession(process)
    finally:
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 0
        assert b"Traceback" not in stderr


def _send(session: StdioSession, message: dict[str, Any]) -> None:
    session.send(json.dumps(message).encode())


def _assert_names_initialize(error: dict[str, Any]) -> None:
    assert error["code"] == -32600
    assert "tools/list was sent before initialize" in error["message"]
    assert "notifications/initialized" in error["message"]


@pytest.mark.subprocess
def test_a_stdio_request_before_initialize_names_it_and_a_later_handshake_is_served(
    stdio: StdioSession,
) -> None:
    session = stdio
    _send(session, TOOLS_LIST)
    refused = session.answer(1, within=60)
    _assert_names_initialize(refused["error"])

    _send(session, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert session.answer(2)["result"] == {}
    _send(session, INITIALIZE)
    assert "serverInfo" in session.answer(0)["result"]
    _send(session, INITIALIZED)
    _send(session, TOOLS_LIST | {"id": 3})
    assert any(tool["name"] == "store_memory" for tool in session.answer(3)["result"]["tools"])


@pytest.mark.subprocess
def test_a_stdio_request_in_the_2026_era_needs_no_handshake(stdio: StdioSession) -> None:
    envelope = {PROTOCOL_VERSION_META_KEY: LATEST_MODERN_VERSION, CLIENT_CAPABILITIES_META_KEY: {}}
    _send(stdio, TOOLS_LIST | {"params": {"_meta": envelope}})

    assert any(tool["name"] == "store_memory" for tool in stdio.answer(1, within=60)["result"]["tools"])


def test_an_http_request_without_a_session_names_initialize_and_keeps_its_id(http: TestClient) -> None:  # noqa: F811
    refused = _post(http, TOOLS_LIST)

    assert refused.status_code == 400
    assert refused.json()["id"] == 1
    assert refused.json()["error"]["code"] == -32600
    assert "tools/list was sent before initialize" in refused.json()["error"]["message"]
    assert "mcp-session-id" not in refused.headers  # the SDK opened that session and dropped it
    session = _post(http, INITIALIZE).headers["mcp-session-id"]
    _post(http, INITIALIZED, session)
    assert _post(http, TOOLS_LIST | {"id": 2}, session).status_code == 200


def test_an_http_request_with_an_unknown_session_is_told_to_initialize(http: TestClient) -> None:  # noqa: F811
    refused = _post(http, TOOLS_LIST | {"id": "seven"}, session="no-such-session")

    assert refused.status_code == 404
    assert refused.json()["id"] == "seven"
    assert "POST initialize without the header" in refused.json()["error"]["message"]


def test_an_http_stream_without_a_session_is_told_to_initialize(http: TestClient) -> None:  # noqa: F811
    refused = http.get("/mcp", headers={**HEADERS, "Accept": "text/event-stream"})

    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == -32600
    assert "POST initialize first" in refused.json()["error"]["message"]

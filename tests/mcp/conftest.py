from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from mcp import Client

from cognitive_memory.system import CognitiveSystem
from interfaces.mcp_server import MemoryServer, create_server


@pytest.fixture
def server(real_system: CognitiveSystem) -> MemoryServer:
    return create_server(real_system, session_id="session-under-test", max_results=50)


@pytest.fixture(params=["current", "legacy"])
async def client(request: pytest.FixtureRequest, server: MemoryServer) -> AsyncIterator[Client]:
    """The SDK's in-memory client, in both protocol eras (with and without the handshake)."""
    kwargs = {"mode": "legacy"} if request.param == "legacy" else {}
    async with Client(server, **kwargs) as connected:
        yield connected

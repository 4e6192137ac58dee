from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from mcp import Client

from cognitive_memory.system import CognitiveSystem
from interfaces.mcp_server import MemoryServer, create_server


@pytest.fixture
def server(request: pytest.FixtureRequest, store_of_record: str) -> MemoryServer:
    """The server over the real model for a test marked ``model`` (retrieval quality is what it is
    about), over the hash encoder for the others (the plumbing); on the store of record of the
    test (``store_of_record``: both for a file marked ``stores``)."""
    name = "real_system" if request.node.get_closest_marker("model") else "hash_system"
    system: CognitiveSystem = request.getfixturevalue(name)
    return create_server(system, session_id="session-under-test", max_results=50)


@pytest.fixture(params=["current", "legacy"])
async def client(request: pytest.FixtureRequest, server: MemoryServer) -> AsyncIterator[Client]:
    """The SDK's in-memory client, in both protocol eras (with and without the handshake)."""
    kwargs = {"mode": "legacy"} if request.param == "legacy" else {}
    async with Client(server, **kwargs) as connected:
        yield connected

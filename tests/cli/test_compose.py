"""docker-compose.yml parses and its wiring matches the settings the server reads."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from cognitive_memory.settings import ServerSettings, StorageSettings

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return dict(compose["services"])


def test_qdrant_is_pinned_persistent_checked_and_local(services: dict[str, Any]) -> None:
    qdrant = services["qdrant"]
    assert re.fullmatch(r"qdrant/qdrant:v\d+\.\d+\.\d+", qdrant["image"])
    assert any(volume.endswith(":/qdrant/storage") for volume in qdrant["volumes"])
    assert qdrant["healthcheck"]["test"]
    assert all(port.startswith("127.0.0.1:") for port in qdrant["ports"])


def test_memory_server_talks_http_to_the_qdrant_service(
    services: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = services["memory"]
    env = {key: str(value) for key, value in memory["environment"].items()}
    assert env["MCP_AUTH_TOKEN"].startswith("${MCP_AUTH_TOKEN:?")  # compose refuses to start without it
    env["MCP_AUTH_TOKEN"] = "token"
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    server, storage = ServerSettings(_env_file=None), StorageSettings(_env_file=None)  # type: ignore[call-arg]
    assert server.mode == "http"
    assert storage.qdrant_url == "http://qdrant:6333"
    qdrant_ports = {port.rsplit(":", 1)[-1] for port in services["qdrant"]["ports"]}
    assert "6333" in qdrant_ports
    published = {port.rsplit(":", 1)[-1] for port in memory["ports"]}
    assert str(server.port) in published
    assert all(port.startswith("127.0.0.1:") for port in memory["ports"])
    assert memory["depends_on"]["qdrant"]["condition"] == "service_healthy"
    assert any(volume.endswith(f":{storage.data_dir}") for volume in memory["volumes"])


def test_the_image_serves_http_from_the_package(services: dict[str, Any]) -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert services["memory"]["build"] == "."
    assert 'CMD ["memory_system", "serve", "mcp"]' in dockerfile
    assert "torch==2.13.0" in dockerfile

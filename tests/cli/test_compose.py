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


@pytest.mark.parametrize("name", ["memory-a", "memory-b"])
def test_the_team_profile_puts_two_servers_on_one_database_and_one_qdrant(
    services: dict[str, Any], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    server, postgres = services[name], services["postgres"]
    assert server["profiles"] == postgres["profiles"] == ["team"]
    assert "profiles" not in services["memory"]  # `docker compose up` alone starts what it did
    env = {key: str(value) for key, value in server["environment"].items()}
    assert postgres["environment"]["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD:?")
    env["COGNITIVE_MEMORY_DATABASE_URL"] = env["COGNITIVE_MEMORY_DATABASE_URL"].replace(
        "${POSTGRES_PASSWORD}", "secret"
    )
    env["MCP_AUTH_TOKEN"] = "token"
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    storage = StorageSettings(_env_file=None)  # type: ignore[call-arg]
    assert storage.database_url is not None
    url = storage.database_url.get_secret_value()
    assert url == "postgresql://memory:secret@postgres:5432/memory"
    assert url.rsplit("/", 1)[-1] == postgres["environment"]["POSTGRES_DB"]
    assert storage.qdrant_url == "http://qdrant:6333"
    assert server["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert all(port.startswith("127.0.0.1:") for port in server["ports"])
    volumes = {volume.split(":")[0] for volume in server["volumes"]}
    assert volumes.isdisjoint(
        {v.split(":")[0] for v in services["memory-b" if name == "memory-a" else "memory-a"]["volumes"]}
    )

"""The health of the installation: the configuration check shows the settings with every secret
masked."""

from __future__ import annotations

import pytest

from cognitive_memory.settings import Settings
from cognitive_memory.upkeep import check_config, mask_secret


def test_a_password_in_the_server_url_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDRANT_URL", "https://admin:hunter2-long-password@qdrant.example:6333")

    settings, result = check_config(Settings)

    assert settings is not None and result.status == "ok"
    assert "hunter2" not in result.detail
    assert "QDRANT_URL=https://admin:****@qdrant.example:6333" in result.detail


@pytest.mark.parametrize(("secret", "shown"), [("supersecretvalue", "****ue"), ("short", "(set)")])
def test_secrets_are_masked_to_at_most_their_last_two_characters(secret: str, shown: str) -> None:
    assert mask_secret(secret) == shown


def test_the_database_url_is_shown_with_its_password_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "COGNITIVE_MEMORY_DATABASE_URL", "postgresql://team:hunter2-long-password@db.example/memory"
    )

    settings, result = check_config(Settings)

    assert settings is not None and result.status == "ok"
    assert "hunter2" not in result.detail
    assert "database=postgresql://team:****@db.example/memory" in result.detail

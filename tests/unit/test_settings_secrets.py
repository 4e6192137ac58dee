"""What settings show of a secret: a URL's password masked, in an invalid setting's message too."""

from __future__ import annotations

import pytest

from cognitive_memory.errors import ConfigurationError
from cognitive_memory.settings import Settings, redacted_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://team:s3cret@db:5432/memory", "postgresql://team:****@db:5432/memory"),
        ("postgresql://team@db/memory", "postgresql://team@db/memory"),
        (
            "postgresql://db/memory?sslmode=require&password=s3cret",
            "postgresql://db/memory?sslmode=require&password=****",
        ),
        ("postgres://:s3cret@/memory?host=/run/postgresql", "postgres://:****@/memory?host=/run/postgresql"),
        ("https://admin:s3cret@qdrant.example:6333", "https://admin:****@qdrant.example:6333"),
    ],
)
def test_a_password_is_masked_wherever_the_url_holds_it(url: str, shown: str) -> None:
    assert redacted_url(url) == shown


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("mysql://team:s3cret@db/memory", "it is a mysql:// URL"),
        ("host=db password=s3cret", "it is not a URL"),
    ],
)
def test_a_database_url_that_is_not_postgresql_is_refused_without_its_password(
    monkeypatch: pytest.MonkeyPatch, value: str, said: str
) -> None:
    monkeypatch.setenv("COGNITIVE_MEMORY_DATABASE_URL", value)

    with pytest.raises(ConfigurationError) as raised:
        Settings(env_file=None)

    assert "s3cret" not in raised.value.message
    assert said in raised.value.message
    assert "postgresql://USER:PASSWORD@HOST:5432/DATABASE" in raised.value.message


def test_a_blank_database_url_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COGNITIVE_MEMORY_DATABASE_URL", "  ")

    assert Settings(env_file=None).storage.database_url is None

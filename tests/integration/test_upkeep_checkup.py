"""The doctor's checkup runs over the settings its caller resolves, and stops at a failed check."""

from __future__ import annotations

from pathlib import Path

from cognitive_memory.settings import Settings
from cognitive_memory.upkeep import run_checks


def test_doctor_checks_the_settings_its_caller_resolves(tmp_path: Path) -> None:
    elsewhere = tmp_path / "resolved-elsewhere"
    elsewhere.write_text("a file, so the run stops before the model loads")

    def resolve() -> Settings:
        settings = Settings(env_file=None)
        settings.storage.data_dir = elsewhere
        return settings

    results = run_checks(resolve)

    assert results[0].detail.startswith(f"data_dir={elsewhere},")
    assert (results[1].name, results[1].status) == ("data_dir", "fail")

"""memory_system doctor: one OK/WARN/FAIL line per check, exit 1 on any failure.

The checks run in order and each needs the ones before it: configuration, data directory
(``doctor_checks``), SQLite, the vector index (opening the store), the model, the memories' rows
(``--repair`` sets aside those that cannot be read or indexed), ``--repair`` if asked, the loaded
sources, the SQLite and index counts, and a real round trip (the core's ``cognitive_memory.upkeep``).
A check whose prerequisite failed is reported as skipped.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memory_system import doctor_checks as checks
from memory_system.doctor_checks import SettingsSource

if TYPE_CHECKING:
    from cognitive_memory.system import CognitiveSystem
    from cognitive_memory.upkeep import CheckResult

__all__ = ["register", "run_checks"]

_CHECKS_BEFORE_REPAIR = ("config", "data_dir", "sqlite", "qdrant", "model", "rows")
_CHECKS_AFTER_REPAIR = ("sources", "counts", "round_trip")


def register(app: typer.Typer, resolve_settings: SettingsSource | None = None) -> None:
    """Add the ``doctor`` command to ``app``; ``resolve_settings`` is how the other commands
    resolve their settings (``Settings()`` when not given), so doctor checks what they use."""

    @app.command(name="doctor")
    def doctor_command(
        repair: Annotated[
            bool, typer.Option("--repair", help="Rebuild the vector index from the vectors kept in SQLite.")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
    ) -> None:
        """Check configuration, storage, the model and a real round trip (exit 1 on any failure)."""
        results = run_checks(repair=repair, resolve_settings=resolve_settings)
        typer.echo(format_json(results) if as_json else format_text(results))
        if any(result.status == "fail" for result in results):
            raise typer.Exit(code=1)


def run_checks(*, repair: bool = False, resolve_settings: SettingsSource | None = None) -> list[CheckResult]:
    """Run every check in order; those whose prerequisite failed are reported as skipped."""
    from cognitive_memory import upkeep

    names = [*_CHECKS_BEFORE_REPAIR, *(["repair"] if repair else []), *_CHECKS_AFTER_REPAIR]
    settings, config = checks.check_config(resolve_settings)
    if settings is None:
        return _with_skipped([config], names)
    results = [config, checks.check_data_dir(settings.storage)]
    if results[-1].status != "fail":
        results.append(upkeep.check_sqlite(settings.storage.database_path))
    if results[-1].status == "fail":
        return _with_skipped(results, names)
    opened, set_aside = (
        upkeep.open_system_for_repair(settings) if repair else (upkeep.open_system(settings), None)
    )
    if isinstance(opened, upkeep.CheckResult):
        return _with_skipped([*results, opened], names)
    try:
        return results + _system_checks(opened, repair, set_aside)
    finally:
        opened.close()


def _with_skipped(results: list[CheckResult], names: list[str]) -> list[CheckResult]:
    from cognitive_memory.upkeep import skipped

    failed = next((result.name for result in results if result.status == "fail"), "an earlier check")
    done = {result.name for result in results}
    return results + [skipped(name, failed) for name in names if name not in done]


def _system_checks(system: CognitiveSystem, repair: bool, set_aside: Path | None = None) -> list[CheckResult]:
    from cognitive_memory import upkeep

    vectors = upkeep.check_vectors(system)
    if set_aside is not None:
        vectors = upkeep.after_set_aside(vectors, set_aside)
    model = checks.check_model(system)
    results = [vectors, model, upkeep.check_rows(system, repair)]
    if vectors.status == "fail":
        later = [*(["repair"] if repair else []), *_CHECKS_AFTER_REPAIR]
        return results + [upkeep.skipped(name, "qdrant") for name in later]
    if repair:
        results.append(upkeep.repair_index(system))
    results.append(upkeep.check_loaded_sources(system, repair))
    results.append(upkeep.check_counts(system))
    if model.status == "fail":
        return [*results, upkeep.skipped("round_trip", "model")]
    return [*results, upkeep.check_round_trip(system)]


def format_text(results: list[CheckResult]) -> str:
    """One aligned line per check, then a summary."""
    lines = [f"{result.status.upper():<6}{result.name:<12}{result.detail}" for result in results]
    failed = sum(result.status == "fail" for result in results)
    warned = sum(result.status == "warn" for result in results)
    lines.append(f"{len(results)} checks: {failed} failed, {warned} warning{'' if warned == 1 else 's'}")
    return "\n".join(lines)


def format_json(results: list[CheckResult]) -> str:
    """``{"ok": bool, "checks": [{"name", "status", "detail"}, ...]}``."""
    ok = all(result.status != "fail" for result in results)
    return json.dumps({"ok": ok, "checks": [asdict(result) for result in results]}, indent=2)

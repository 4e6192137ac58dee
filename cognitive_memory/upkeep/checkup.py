"""The doctor's checkup: every health check in order, each needing the ones before it.

Configuration, data directory, SQLite, the vector index (opening the store), the model, the
memories' rows (``repair`` sets aside those that cannot be read or indexed), the repair if asked,
the loaded sources, the SQLite and index counts, the words in the index, and a real round trip.
A check whose prerequisite failed is reported as skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cognitive_memory.upkeep.database import check_postgres, check_rows, check_sqlite
from cognitive_memory.upkeep.health import CheckResult, skipped
from cognitive_memory.upkeep.installation import SettingsSource, check_config, check_data_dir, check_model
from cognitive_memory.upkeep.round_trip import check_round_trip
from cognitive_memory.upkeep.sources import check_loaded_sources
from cognitive_memory.upkeep.vectors import (
    after_set_aside,
    check_counts,
    check_vectors,
    check_words,
    open_system,
    open_system_for_repair,
    repair_index,
)

if TYPE_CHECKING:
    from cognitive_memory.system import CognitiveSystem

__all__ = ["run_checks", "serving_checks"]

_CHECKS_BEFORE_REPAIR = ("config", "data_dir", "sqlite", "qdrant", "model", "rows")
_CHECKS_AFTER_REPAIR = ("sources", "counts", "words", "round_trip")


def run_checks(resolve: SettingsSource, *, repair: bool = False) -> list[CheckResult]:
    """Run every check in order over the settings ``resolve`` gives; those whose prerequisite
    failed are reported as skipped."""
    names = [*_CHECKS_BEFORE_REPAIR, *(["repair"] if repair else []), *_CHECKS_AFTER_REPAIR]
    settings, config = check_config(resolve)
    if settings is None:
        return _with_skipped([config], names)
    if settings.storage.database_url is not None:  # the store of record is a PostgreSQL database
        names = [("database" if name == "sqlite" else name) for name in names]
    results = [config, check_data_dir(settings.storage)]
    if results[-1].status != "fail":
        url = settings.storage.database_url
        results.append(
            check_postgres(url.get_secret_value()) if url else check_sqlite(settings.storage.database_path)
        )
    if results[-1].status == "fail":
        return _with_skipped(results, names)
    opened, set_aside = open_system_for_repair(settings) if repair else (open_system(settings), None)
    if isinstance(opened, CheckResult):
        return _with_skipped([*results, opened], names)
    try:
        return results + _system_checks(opened, repair, set_aside)
    finally:
        opened.close()


def _with_skipped(results: list[CheckResult], names: list[str]) -> list[CheckResult]:
    failed = next((result.name for result in results if result.status == "fail"), "an earlier check")
    done = {result.name for result in results}
    return results + [skipped(name, failed) for name in names if name not in done]


def _system_checks(system: CognitiveSystem, repair: bool, set_aside: Path | None = None) -> list[CheckResult]:
    vectors = check_vectors(system)
    if set_aside is not None:
        vectors = after_set_aside(vectors, set_aside)
    model = check_model(system)
    results = [vectors, model, check_rows(system, repair)]
    if vectors.status == "fail":
        later = [*(["repair"] if repair else []), *_CHECKS_AFTER_REPAIR]
        return results + [skipped(name, "qdrant") for name in later]
    if repair:
        results.append(repair_index(system))
    results.append(check_loaded_sources(system, repair))
    results.append(check_counts(system))
    results.append(check_words(system))
    if model.status == "fail":
        return [*results, skipped("round_trip", "model")]
    return [*results, check_round_trip(system)]


def serving_checks(system: CognitiveSystem) -> list[CheckResult]:
    """The checks that only read a serving system (not the round trip, which writes): the
    dashboard's status page."""
    return [
        check_vectors(system),
        check_model(system),
        check_loaded_sources(system, False),
        check_counts(system),
        check_words(system),
    ]

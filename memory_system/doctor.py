"""memory_system doctor: one OK/WARN/FAIL line per check, exit 1 on any failure.

The checkup itself (which checks, in which order, what each says) is the core's
``cognitive_memory.upkeep.checkup``; here the options are parsed and the lines printed.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from cognitive_memory.upkeep import CheckResult, SettingsSource

__all__ = ["format_json", "format_text", "register"]


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
        from cognitive_memory.settings import Settings
        from cognitive_memory.upkeep import run_checks

        results = run_checks(resolve_settings or Settings, repair=repair)
        typer.echo(format_json(results) if as_json else format_text(results))
        if any(result.status == "fail" for result in results):
            raise typer.Exit(code=1)


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

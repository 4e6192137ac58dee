"""memory_system doctor: one OK/WARN/FAIL line per check (being written)."""

from __future__ import annotations

import typer

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add the ``doctor`` command to ``app``."""

    @app.command()
    def doctor() -> None:
        """Check configuration, storage, the model and a real round trip."""
        raise typer.Exit(code=0)

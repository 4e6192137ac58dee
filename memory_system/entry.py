"""The `memory_system` console script. A Claude Code hook (``hook EVENT``) is answered before
typer, pydantic or the core are imported: it runs before every prompt. When it serves, SIGINT
and SIGTERM are taken over before anything heavy is imported, so a Ctrl-C in the first moments
also ends it with status 0."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Run the CLI (``memory_system.cli``)."""
    if sys.argv[1:2] == ["hook"] and not any(arg in ("--help", "-h") for arg in sys.argv[2:]):
        from memory_system import hook_command

        hook_command.run(sys.argv[2:])
        return
    if sys.argv[1:3] != ["serve", "mcp"]:
        from memory_system.cli import main as cli

        cli()
        return
    from memory_system import serving

    serving.stop_on_signals()
    from memory_system.cli import main as cli

    cli()

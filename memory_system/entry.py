"""The `memory_system` console script. A Claude Code hook (``hook EVENT``) is answered before
typer, pydantic or the core are imported: it runs before every prompt. When it serves, SIGINT
and SIGTERM are taken over before anything heavy is imported, so a Ctrl-C in the first moments
also ends it with status 0. Every command ends with ``serving.exit_now``: no interpreter
teardown, so the vector shard it closed stays in the page cache for the next process."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Run the CLI (``memory_system.cli``)."""
    if sys.argv[1:2] == ["hook"] and not any(arg in ("--help", "-h") for arg in sys.argv[2:]):
        from memory_system import hook_command

        hook_command.run(sys.argv[2:])
        return
    from memory_system import serving

    if sys.argv[1:3] == ["serve", "mcp"]:
        serving.stop_on_signals()
    serving.ends_with_exit_now()
    from memory_system.cli import main as cli

    try:
        cli()
    except SystemExit as ended:
        serving.exit_now(_status(ended.code))
    serving.exit_now(0)


def _status(code: object) -> int:
    """The exit status ``sys.exit(code)`` gives (a message is printed, with status 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1

"""`setup claude-code`: add (or with --remove take out) our hooks and MCP server in Claude Code.

Project scope (the default, for the current directory or --project-dir): hooks in
``DIR/.claude/settings.json``, the server in ``DIR/.mcp.json``. User scope (--user): hooks in
``~/.claude/settings.json``, the server in ``~/.claude.json``. Exit codes: 0 done (or nothing to
do), 1 a file that cannot be merged or written (one ``Error:`` line; nothing was written).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from memory_system import claude_setup

__all__ = ["register"]

NEXT_STEPS = "Restart Claude Code to load them."
# A project's .mcp.json servers wait for the user's approval (Claude Code's trust prompt).
APPROVAL = (
    " It asks once before it starts a server that a project's .mcp.json names: approve cognitive-memory."
)


def register(app: typer.Typer) -> None:
    """Add ``setup claude-code`` to ``app``."""
    setup_app = typer.Typer(help="Connect Cognitive Memory to an assistant.", no_args_is_help=True)
    app.add_typer(setup_app, name="setup")

    @setup_app.command("claude-code")
    def claude_code(
        project_dir: Annotated[
            Path | None,
            typer.Option(
                exists=True,
                file_okay=False,
                help="The project to set up (default: the current directory): "
                "DIR/.claude/settings.json and DIR/.mcp.json.",
            ),
        ] = None,
        user: Annotated[
            bool,
            typer.Option("--user", help="Set up every project: ~/.claude/settings.json, ~/.claude.json."),
        ] = False,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the change; write nothing.")] = False,
        remove: Annotated[
            bool, typer.Option("--remove", help="Take our hooks and server out again.")
        ] = False,
    ) -> None:
        """Add the memory hooks (SessionStart, UserPromptSubmit, PreCompact, SessionEnd) and the
        cognitive-memory MCP server to Claude Code's configuration, keeping everything else (each
        file it changes is backed up first). Safe to run again."""
        if user and project_dir is not None:
            raise _fail("choose --project-dir DIR or --user, not both.")
        settings_path, servers_path = _paths(project_dir, user=user)
        try:
            changes = claude_setup.plan(
                settings_path, servers_path, _executable(), _data_dir(), remove=remove
            )
        except claude_setup.SetupError as exc:
            raise _fail(str(exc)) from None
        if _apply(changes, dry_run=dry_run, remove=remove):
            typer.echo(NEXT_STEPS + ("" if user else APPROVAL))


def _paths(project_dir: Path | None, *, user: bool) -> tuple[Path, Path]:
    if user:
        home = Path.home()
        return home / ".claude" / "settings.json", home / ".claude.json"
    root = (project_dir or Path.cwd()).absolute()
    return root / ".claude" / "settings.json", root / ".mcp.json"


def _executable() -> str:
    """The absolute path of this ``memory_system`` (the script run, else the one beside Python)."""
    run = Path(sys.argv[0])
    if run.name == "memory_system" and run.is_file():
        return str(run.absolute())
    beside = Path(sys.executable).parent / "memory_system"
    if beside.is_file():
        return str(beside.absolute())
    found = shutil.which("memory_system")
    if found is None:
        raise _fail("cannot find the memory_system executable; install the package first (make install).")
    return str(Path(found).absolute())


def _data_dir() -> str | None:
    """COGNITIVE_MEMORY_DATA_DIR as an absolute path (Claude Code starts us in other directories)."""
    value = os.environ.get(claude_setup.DATA_DIR_VARIABLE, "").strip()
    return str(Path(value).expanduser().absolute()) if value else None


def _apply(changes: list[claude_setup.FileChange], *, dry_run: bool, remove: bool) -> bool:
    """Write (or with ``dry_run`` show) what changes; True when our hooks and server were written."""
    pending = [change for change in changes if change.changed]
    paths = " and ".join(str(change.path) for change in changes)
    if not pending:
        typer.echo(
            f"Nothing to remove: {paths} hold none of our hooks or servers."
            if remove
            else f"Claude Code is already set up ({paths}): nothing changed."
        )
        return False
    if dry_run:
        for change in pending:
            typer.echo(claude_setup.diff(change), nl=False)
        typer.echo("Dry run: nothing was written.")
        return False
    for change in pending:
        try:
            backup = claude_setup.write(change)
        except OSError as exc:
            raise _fail(f"cannot write {change.path}: {exc}") from None
        saved = f" (backup: {backup})" if backup else " (new file)"
        typer.echo(f"{'Removed ours from' if remove else 'Updated'} {change.path}{saved}")
    return not remove


def _fail(message: str) -> typer.Exit:
    typer.echo(f"Error: {message}", err=True)
    return typer.Exit(code=1)

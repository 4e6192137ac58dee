"""``python -m memory_system.reference [PATH]``: write the command line reference from ``--help``.

The page (``docs/cli-reference.md`` by default) holds every command's and sub-command's ``--help``
as click prints it without rich (no box drawing, no colours), wrapped at a fixed width so that it
changes only when a command does; ``tests/cli/test_reference.py`` fails when the committed page
is out of date. ``docs/cli.md`` is the guide, with examples; this page is the reference.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import typer
from typer.core import TyperCommand, TyperGroup

__all__ = ["DEFAULT_PATH", "WIDTH", "render", "write"]

DEFAULT_PATH = Path("docs/cli-reference.md")
WIDTH = 100
PROGRAM = "memory_system"
HEADER = f"""# Command line reference

<!-- Generated from the commands' --help by `python -m memory_system.reference` (`make docs`):
     edit the help texts in memory_system/, not this page. -->

Every command with its arguments and options, as `{PROGRAM} COMMAND --help` prints them.
[cli.md](cli.md) is the guide, with examples: trash and prune, consolidation, loading markdown
and git history, doctor, backup and restore, export and import.
"""


def render(app: typer.Typer) -> str:
    """The reference page of ``app``: a table of contents, then one section per command."""
    commands = list(_walk(typer.main.get_command(app), None, PROGRAM))
    contents = [f"{'  ' * _depth(ctx)}- [{ctx.command_path}](#{_anchor(ctx)})" for ctx in commands]
    sections = [f"## {ctx.command_path}\n\n```text\n{_help(ctx)}\n```" for ctx in commands]
    return "\n\n".join([HEADER.rstrip(), "\n".join(contents), *sections]) + "\n"


def _walk(command: object, parent: typer.Context | None, name: str) -> Iterator[typer.Context]:
    """The context of ``command`` and of every visible sub-command, in the order ``--help`` lists
    them."""
    if not isinstance(command, (TyperCommand, TyperGroup)) or command.hidden:
        return
    command.rich_markup_mode = None  # click's plain help: the words of --help, no box drawing
    ctx = typer.Context(command, info_name=name, parent=parent, terminal_width=WIDTH, max_content_width=WIDTH)
    yield ctx
    if isinstance(command, TyperGroup):
        for sub_name in command.list_commands(ctx):
            yield from _walk(command.get_command(ctx, sub_name), ctx, sub_name)


def _help(ctx: typer.Context) -> str:
    return "\n".join(line.rstrip() for line in ctx.command.get_help(ctx).splitlines())


def _depth(ctx: typer.Context) -> int:
    return len(ctx.command_path.split()) - 1


def _anchor(ctx: typer.Context) -> str:
    """The id GitHub gives the section's heading."""
    return ctx.command_path.lower().replace(" ", "-")


def write(app: typer.Typer, path: Path = DEFAULT_PATH) -> bool:
    """Write the page of ``app`` to ``path``; whether it changed."""
    text = render(app)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def main(argv: Sequence[str] | None = None) -> None:
    """Write the reference of ``memory_system`` (to the path given, else ``docs/cli-reference.md``)."""
    from memory_system.cli import app

    args = sys.argv[1:] if argv is None else list(argv)
    path = Path(args[0]) if args else DEFAULT_PATH
    changed = write(app, path)
    print(f"{path}: {'written' if changed else 'up to date'}")  # noqa: T201 (a tool's one line of output)


if __name__ == "__main__":
    main()
